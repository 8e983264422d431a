"""Per-dialect allow-lists of functions known to be pure, and the check of one call.

A function call passes only when the name the ENGINE will execute is on the
list for that engine. The name is taken from what is actually sent: the guard
re-renders every statement with sqlglot, so a typed node (``exp.Sum``,
``exp.Pad``, ...) is checked by the name its rendering calls (``SUM(``,
``LPAD(``), and an ``exp.Anonymous`` node by its identifier, normalised as the
engine resolves it (unquoted names fold to the dialect's case; a quoted name
must already be in that case, or it would resolve to something else). A
qualified or method-style call (``pg_catalog.lower(x)``, ``x.lower()``) is
refused outright: analysts never need one and it is how a deny list was
bypassed. A typed node whose rendering is syntax rather than a call
(``CASE``, ``CURRENT_DATE``, ``x ->> 'a'``, ``ARRAY[...]``) passes only when
its class is on ``SYNTAX_OK``. Everything else is refused with a reason that
names the function and the kinds of functions that are available.

Functions whose output grows with an argument (``repeat``/``replicate``, ``space``,
``lpad``/``rpad``, ``generate_series``/``range``, ``generate_array`` and its date
kin, ``sequence``, ``array_repeat``, DuckDB's ``exploding_generate_series``; ``replace``
chains by how much they may grow a value; format widths) are allowed only with
literal arguments that bound the output (``MAX_PAD`` characters,
``MAX_SERIES`` values): one call is one uninterruptible operation in the
engine, which a statement timeout does not stop in time. For the same reason DuckDB's edit
distances (``levenshtein``, ``jaro_*``, ...; quadratic in the length of one value) are off its list.
"""

from __future__ import annotations

import datetime as dt
import re

from sqlglot import exp

MAX_PAD = 10_000  # characters one repeat/space/lpad/rpad may produce
MAX_PAD_AGGREGATED = 100  # ... inside an aggregate or window (once per row of the group)
MAX_SERIES = 100_000  # values the generate_series/range of one statement may produce (their product)

_AGG = """count sum avg min max stddev stddev_samp stddev_pop variance var_samp var_pop corr covar_pop
covar_samp regr_slope regr_intercept regr_r2 regr_count regr_avgx regr_avgy regr_sxx regr_syy regr_sxy
bool_and bool_or every bit_and bit_or bit_xor string_agg array_agg percentile_cont percentile_disc mode
any_value grouping"""
_WINDOW = "row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value"
_MATH = """abs ceil ceiling floor round trunc sign sqrt cbrt power pow exp ln log log10 log2 mod greatest least
pi degrees radians sin cos tan asin acos atan atan2 cot width_bucket gcd lcm random isnan isinf"""
_STRING = """lower upper length char_length character_length octet_length bit_length substr substring left right
trim ltrim rtrim btrim replace translate concat concat_ws position strpos split_part initcap reverse
starts_with ascii chr md5 lpad rpad repeat regexp_replace regexp_matches regexp_like regexp_count
regexp_substr regexp_instr overlay"""
_DATE = """now current_date current_timestamp current_time localtimestamp localtime date_trunc date_part extract
age to_char to_date to_timestamp make_date make_timestamp make_time make_interval"""
_COND = "coalesce nullif cast try_cast exists"
_JSON = "json_extract_path json_extract_path_text to_json json_array_length json_object"
_ARRAY = "array_length cardinality unnest array_position array_to_string string_to_array array_cat"

_DUCKDB = """
median quantile quantile_cont quantile_disc approx_quantile reservoir_quantile approx_count_distinct
arg_max arg_min argmax argmin max_by min_by histogram list first last fsum sumkahan kahan_sum favg
kurtosis kurtosis_pop skewness entropy product count_star count_if countif geomean geometric_mean mad
group_concat listagg bitstring_agg
datediff date_diff datesub date_sub date_add datepart datetrunc strftime strptime epoch epoch_ms
epoch_us epoch_ns make_timestamptz last_day dayname monthname yearweek isodow isoyear dayofmonth
dayofweek dayofyear weekday weekofyear week year month day hour minute second millisecond microsecond
quarter era century decade millennium time_bucket today get_current_timestamp get_current_time
to_days to_hours to_minutes to_seconds to_weeks to_months to_years to_milliseconds to_microseconds
to_centuries to_decades to_millennia timezone current_localtimestamp try_strptime julian
prefix suffix contains ends_with strlen length_grapheme strip_accents lcase ucase
string_split str_split string_split_regex str_split_regex string_to_array regexp_extract regexp_extract_all
regexp_full_match regexp_split_to_array regexp_escape instr nfc_normalize unicode ord array_extract
list_extract list_element list_value list_pack list_sort array_sort list_reverse_sort list_distinct
array_distinct list_unique array_unique list_contains array_contains list_has array_has list_has_any
list_has_all array_has_any array_has_all list_position array_position list_indexof len array_length
list_slice array_slice list_concat list_cat array_concat list_transform array_transform apply
list_apply array_apply list_filter array_filter filter list_aggr list_min list_max list_sum list_avg
list_count list_first list_last list_any_value list_median list_mode list_string_agg list_bool_and
list_bool_or array_to_string list_zip flatten list_grade_up struct_extract struct_pack row
map_extract map_keys map_values element_at cardinality
json_extract json_extract_string json_extract_path json_extract_path_text json_value json_exists
json_valid json_type json_keys json_array_length json_structure json_contains json json_object json_each
json_array json_group_array json_group_object json_group_structure json_merge_patch to_json
if typeof hash md5_number sha1 sha256 isfinite even signbit factorial bit_count xor
generate_series range unnest greatest_common_divisor least_common_multiple
"""
_POSTGRES = """
json_agg jsonb_agg json_object_agg jsonb_object_agg json_build_object jsonb_build_object
json_build_array jsonb_build_array to_jsonb jsonb_extract_path jsonb_extract_path_text
jsonb_array_length json_array_elements jsonb_array_elements json_array_elements_text
jsonb_array_elements_text json_each jsonb_each json_each_text jsonb_each_text json_object_keys
jsonb_object_keys json_typeof jsonb_typeof jsonb_path_query jsonb_path_query_array
jsonb_path_query_first jsonb_path_exists jsonb_path_match jsonb_strip_nulls json_strip_nulls
jsonb_pretty jsonb_set jsonb_insert
regexp_match regexp_split_to_array regexp_split_to_table split_part starts_with to_number
date_bin justify_days justify_hours justify_interval isfinite clock_timestamp statement_timestamp
transaction_timestamp timezone make_timestamptz
array_upper array_lower array_ndims array_dims array_positions array_remove array_replace array_append
array_prepend num_nonnulls num_nulls div scale trim_scale min_scale sha224 sha256 sha384 sha512
to_hex generate_series unnest bool_and setweight
"""
_SNOWFLAKE = """
generator seq1 seq2 seq4 seq8 flatten time_slice booland_agg boolor_agg boolxor_agg
variance_pop variance_samp iff ifnull nvl nvl2 zeroifnull nullifzero equal_null decode div0 div0null
median count_if listagg approx_count_distinct approx_percentile hll kurtosis skew object_agg
array_unique_agg bitand bitor bitxor ratio_to_report conditional_true_event conditional_change_event
dateadd datediff timeadd timediff timestampadd timestampdiff date_from_parts time_from_parts
timestamp_from_parts timestamp_ntz_from_parts year yearofweek yearofweekiso month day dayofmonth
dayofweek dayofweekiso dayofyear week weekofyear weekiso quarter hour minute second last_day
next_day previous_day monthname dayname add_months months_between convert_timezone current_timestamp
sysdate getdate to_varchar to_number to_decimal to_numeric to_double to_boolean to_time
to_timestamp_ntz to_timestamp_ltz to_timestamp_tz try_to_number try_to_decimal try_to_double
try_to_date try_to_timestamp try_to_boolean try_to_time try_cast
rlike ilike contains endswith startswith split strtok charindex editdistance jarowinkler_similarity
regexp_substr_all sha1 sha2 hash
parse_json try_parse_json get get_path json_extract_path_text object_construct object_keys
array_construct array_size array_contains array_slice array_to_string array_compact array_distinct
array_flatten to_array to_object to_variant as_varchar as_number as_integer typeof is_null_value
strtok_to_array array_position array_append array_cat uniform normal
"""
_MYSQL = """
std group_concat json_arrayagg json_objectagg bit_count
truncate rand conv crc32 log2 div
lcase ucase substring_index locate instr mid space field find_in_set elt strcmp soundex hex unhex
sha sha1 sha2 format char
curdate curtime date_format date_add date_sub adddate subdate datediff timestampdiff timestampadd timediff
addtime subtime year month day dayofmonth dayofweek dayofyear dayname monthname week weekofyear weekday
yearweek quarter hour minute second microsecond last_day makedate maketime str_to_date from_unixtime
unix_timestamp to_days from_days to_seconds date time timestamp utc_date utc_time utc_timestamp convert_tz
period_add period_diff sec_to_time time_to_sec time_format get_format sysdate
if ifnull isnull convert
json_extract json_unquote json_length json_keys json_contains json_contains_path json_type json_valid
json_array json_value json_query json_depth json_search json_merge_patch json_quote
"""
_TSQL = """
count_big stdev stdevp var varp checksum_agg grouping grouping_id approx_count_distinct
square rand log exp
len datalength charindex patindex replicate stuff space format quotename str unicode nchar char
soundex difference string_split string_escape
getdate getutcdate sysdatetime sysutcdatetime sysdatetimeoffset dateadd datediff datediff_big datepart
datename datefromparts datetimefromparts datetime2fromparts timefromparts eomonth year month day datetrunc
date_bucket switchoffset todatetimeoffset isdate
isnull iif choose try_convert convert try_parse parse isnumeric
json_value json_query isjson json_modify json_object json_array
newid
"""
_BIGQUERY = """
countif logical_and logical_or approx_count_distinct approx_quantiles approx_top_count approx_top_sum
array_concat_agg
div ieee_divide safe_divide safe_multiply safe_add safe_subtract safe_negate is_nan is_inf range_bucket
cosh sinh tanh acosh asinh atanh
byte_length ends_with instr split regexp_contains regexp_extract regexp_extract_all format to_hex
to_base64 from_base64 sha1 sha256 sha512 farm_fingerprint normalize normalize_and_casefold soundex
safe_convert_bytes_to_string code_points_to_string to_code_points unicode collate
current_datetime date datetime timestamp time date_add date_sub date_diff datetime_add datetime_sub
datetime_diff datetime_trunc timestamp_add timestamp_sub timestamp_diff timestamp_trunc time_add time_sub
time_diff time_trunc format_date format_datetime format_timestamp format_time parse_date parse_datetime
parse_timestamp parse_time unix_seconds unix_millis unix_micros unix_date timestamp_seconds timestamp_millis
timestamp_micros date_from_unix_date last_day generate_date_array generate_timestamp_array generate_array
if ifnull iff safe_cast
json_extract json_extract_scalar json_value json_query json_extract_array json_extract_string_array
json_query_array json_value_array to_json_string parse_json json_type lax_int64 lax_float64 lax_string
lax_bool int64 float64 bool string
array_length array_reverse array_concat array_to_string array_first array_last array_slice
"""
_DATABRICKS = """
transform filter exists forall
count_if any_value first last first_value last_value collect_list collect_set array_agg percentile
percentile_approx approx_percentile approx_count_distinct median mode kurtosis skewness std
stddev stddev_samp stddev_pop variance var_samp var_pop max_by min_by bool_and bool_or some every
bround pmod div log2 log1p expm1 cosh sinh tanh hypot rint signum factorial bin hex unhex conv
lcase ucase instr locate charindex split split_part regexp_extract regexp_extract_all regexp_replace
regexp_like rlike regexp_count regexp_substr ilike like format_number format_string printf md5 sha sha1 sha2
crc32 startswith endswith contains base64 unbase64 decode encode btrim char_length len substring_index
elt mask levenshtein soundex listagg string_agg dayname monthname
current_date current_timestamp now curdate date_add date_sub datediff date_diff dateadd timestampadd
timestampdiff date_trunc trunc date_format to_date to_timestamp year month day dayofmonth dayofweek
dayofyear weekofyear weekday quarter hour minute second last_day next_day add_months months_between
unix_timestamp from_unixtime to_unix_timestamp make_date make_timestamp make_interval date_part datepart
date_from_unix_date unix_date timestamp_seconds timestamp_millis from_utc_timestamp to_utc_timestamp
try_to_timestamp
if iff ifnull nvl nvl2 nanvl try_cast try_divide try_add try_subtract try_multiply zeroifnull nullifzero
get_json_object json_tuple from_json to_json schema_of_json json_array_length json_object_keys
size array_contains array_join element_at array_distinct array_max array_min array_position array_remove
array_sort sort_array array_union array_intersect array_except arrays_overlap slice flatten sequence
array_size try_element_at map_keys map_values struct named_struct array map explode posexplode inline
"""
_REDSHIFT = """
getdate sysdate dateadd datediff date_add date_diff add_months months_between last_day next_day
convert_timezone date_cmp trunc dayname monthname
nvl nvl2 decode listagg median percentile_cont approximate ratio_to_report
len charindex strtol strpos btrim
json_extract_path_text json_extract_array_element_text json_parse is_valid_json is_valid_json_array
json_serialize
"""

def _words(*blocks: str) -> frozenset[str]:
    return frozenset(w for b in blocks for w in b.split())


_CORE = _words(_AGG, _WINDOW, _MATH, _STRING, _DATE, _COND, _JSON, _ARRAY)
# SQL keywords sqlglot renders as calls (no engine function of that name is looked up)
KEYWORD_CALLS = frozenset({"cast", "try_cast", "coalesce", "exists", "extract", "nullif", "greatest", "least",
                           "trim", "position", "substring", "overlay", "current_date", "current_time",
                           "current_timestamp", "localtime", "localtimestamp"})
# names of the common lists that an engine does not have (kept off so that nothing else answers to them)
_ABSENT = {
    "duckdb": _words("btrim every initcap make_interval regexp_count regexp_instr regexp_like regexp_substr "
                     "to_char to_date width_bucket"),
    "postgres": _words("any_value isinf isnan log2"),
    "snowflake": frozenset(),
    # sqlglot's tsql, bigquery and databricks dialects render several common names in their own words
    "mysql": _words("btrim every initcap make_date make_time make_timestamp make_interval to_char to_date "
                    "to_timestamp width_bucket cardinality unnest array_length array_position array_to_string "
                    "string_to_array array_cat age date_part date_trunc isnan isinf split_part starts_with "
                    "array_agg string_agg percentile_cont percentile_disc mode bool_and bool_or corr covar_pop "
                    "covar_samp regr_slope regr_intercept regr_r2 regr_count regr_avgx regr_avgy regr_sxx "
                    "regr_syy regr_sxy json_extract_path json_extract_path_text to_json json_array_length "
                    "json_object cbrt gcd lcm trunc any_value strpos initcap regexp_matches regexp_count "
                    "random overlay btrim chr translate"),
    "tsql": frozenset(),
    "bigquery": frozenset(),
    "databricks": frozenset(),
    "redshift": _words("regexp_matches make_interval make_time make_timestamp age json_object"),
}
ALLOWED: dict[str, frozenset[str]] = {
    "duckdb": (_CORE | _words(_DUCKDB)) - _ABSENT["duckdb"],
    "postgres": (_CORE | _words(_POSTGRES)) - _ABSENT["postgres"],
    "snowflake": (_CORE | _words(_SNOWFLAKE)) - _ABSENT["snowflake"],
    "mysql": (_CORE | _words(_MYSQL)) - _ABSENT["mysql"],
    "tsql": (_CORE | _words(_TSQL)) - _ABSENT["tsql"],
    "bigquery": (_CORE | _words(_BIGQUERY)) - _ABSENT["bigquery"],
    "databricks": (_CORE | _words(_DATABRICKS)) - _ABSENT["databricks"],
    "redshift": (_CORE | _words(_POSTGRES, _REDSHIFT)) - _ABSENT["redshift"],
}
# Functions that may stand in FROM as a relation (they read no table and produce bounded rows).
# JSON set-returning readers expand a value of a row they are joined to (LATERAL): as many rows as
# the value has elements, and no table of their own.
TABLE_FUNCTIONS = frozenset({
    "unnest", "generate_series", "range", "json_each", "jsonb_each", "json_each_text", "jsonb_each_text",
    "json_array_elements", "jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text",
    "json_object_keys", "jsonb_object_keys", "regexp_split_to_table",
})
# Typed nodes that render as syntax rather than as a call: pure by construction.
SYNTAX_OK = frozenset({
    "Case", "If", "CurrentDate", "CurrentTimestamp", "CurrentTime", "CurrentTimestampLTZ", "Localtime",
    "Localtimestamp", "Array", "Struct", "Map", "VarMap", "ToMap", "JSONExtract", "JSONExtractScalar",
    "JSONBExtract", "JSONBExtractScalar", "JSONBContains", "ArrayContainsAll", "ArrayOverlaps",
    "ArrayContains", "Bracket", "Collate", "DPipe", "Interval", "Filter", "Unnest", "Extract",
    "StrPosition", "Substring", "Trim", "Overlay", "Cast", "TryCast", "Coalesce", "Nullif",
    "WeekStart",  # BigQuery's WEEK(MONDAY) date part
    "ApproxDistinct",  # Redshift's APPROXIMATE COUNT(DISTINCT x); elsewhere it renders as a call, checked by name
})
_SYNTAX_AS_CALL = frozenset({"WeekStart", "Struct"})
# the quantile functions a hint may name, in the order it prefers them
_QUANTILES = ("percentile_cont", "median", "quantile_cont", "approx_percentile", "percentile_approx")


def _hint(dialect: str) -> str:
    """What to use instead, naming only what the dialect's allow-list has: the hint named percentile_cont to a
    model on MySQL while refusing it (the false-refusal corpus, session 27)."""
    allowed = ALLOWED.get(dialect, ALLOWED["postgres"])
    q = next((f for f in _QUANTILES if f in allowed), None)
    agg = f"count, sum, avg, min, max, {q}, ..." if q else "count, sum, avg, min, max, ..."
    tail = "" if q else (f"; {dialect} has no percentile function: for a median, number the rows with ROW_NUMBER() "
                         "OVER (ORDER BY x) beside COUNT(*) OVER () and keep the middle one")
    return (f"use aggregates ({agg}), window functions, string, date/time, math, casts, CASE/COALESCE and "
            f"JSON readers{tail}")
# operators (AND, =, ||, ...) that sqlglot types as Func; checked by name when they render as a call
_OPERATORS = (exp.Binary, exp.Connector, exp.Unary, exp.Predicate)
_CALL = re.compile(r"^\s*([A-Za-z_][\w$]*)\s*\(")
_QUOTED_CALL = re.compile(r'^\s*"((?:[^"]|"")*)"\s*\(')


class FunctionRefused(Exception):
    pass


def engine_name(node: exp.Func, dialect: str, memo: dict | None = None) -> tuple[str | None, bool]:
    """(lowercase name the engine calls, quoted) or (None, False) when the node renders as syntax. ``memo``: the
    names already read in this (unchanged) tree, by node identity; each read renders the node's whole subtree."""
    if memo is None:
        return _engine_name(node, dialect)
    key = id(node)
    if key not in memo:
        memo[key] = _engine_name(node, dialect)
    return memo[key]


def _engine_name(node: exp.Func, dialect: str) -> tuple[str | None, bool]:
    if isinstance(node, exp.Anonymous):
        # judged on the rendering, which is what is sent (sqlglot may change a quoted name's case)
        try:
            text = node.sql(dialect=dialect)
        except Exception:
            return str(node.name).lower(), False
        m = _QUOTED_CALL.match(text)
        if m:
            raw, quoted = m.group(1).replace('""', '"'), True
        else:
            m = _CALL.match(text)
            if not m:
                return str(node.name).lower() + " (unrecognised)", False
            raw, quoted = m.group(1), False
        if quoted and dialect != "duckdb":
            # a quoted name is taken verbatim: it resolves to the built-in only in the folded case
            folded = raw.upper() if dialect == "snowflake" else raw.lower()
            if raw != folded:
                return raw, True
        return raw.lower(), quoted
    if isinstance(node, _OPERATORS):
        # the operator's own rendering, its operands stood in for: rendering each node's whole subtree made the
        # guard quadratic and worse on a chain ("id = 0 OR id = 1 OR ... OR id = 6999", 84,000 characters, ran
        # for minutes: red team 8). An operator renders as syntax (<left> AND <right>, NOT <x>, <x> IS NULL) or as
        # a call (CONCAT(<a>, <b>) for || on MySQL): only a call has a name to check
        try:
            text = _own_rendering(node, dialect)
        except Exception:
            return type(node).__name__.lower(), False
        if text.lstrip().startswith(_OPERAND):
            return None, False
        m = _CALL.match(text)
        return (m.group(1).lower(), False) if m else (None, False)
    try:
        text = node.sql(dialect=dialect)
    except Exception:
        return type(node).__name__.lower(), False
    m = _CALL.match(text)
    if m:
        return m.group(1).lower(), False
    return None, False


_OPERAND = "assay_operand"


def _own_rendering(node: exp.Expression, dialect: str) -> str:
    """``node`` rendered with each operand (every expression among its arguments) as a placeholder column: its own
    text, in constant time whatever its subtree."""
    shallow = node.__class__()
    for key, value in node.args.items():
        if isinstance(value, exp.Expression):
            shallow.set(key, exp.column(_OPERAND))
        elif isinstance(value, list):
            shallow.set(key, [exp.column(_OPERAND) if isinstance(v, exp.Expression) else v for v in value])
        else:
            shallow.set(key, value)
    return shallow.sql(dialect=dialect)


def check_call(node: exp.Func, dialect: str, *, in_from: bool = False, memo: dict | None = None) -> None:
    """Raise FunctionRefused(reason) unless the call is on the dialect's allow-list (and bounded)."""
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        raise FunctionRefused(
            f"qualified or method-style call {parent.sql(dialect=dialect)[:80]} is not allowed; "
            "call the function by its plain name, e.g. lower(x)"
        )
    if type(node).__name__ in _SYNTAX_AS_CALL or (isinstance(node, exp.Array) and not node.find(exp.Query)) or (
            dialect == "bigquery" and isinstance(node, getattr(exp, "SafeFunc", ())) and isinstance(node.this, exp.Func)):
        # syntax that renders like a call: BigQuery's WEEK(MONDAY) date part, STRUCT(1 AS a), ARRAY[...] of values,
        # and SAFE.f(...), whose function is checked as its own node (the false-refusal audit, session 25)
        return
    name, _quoted = engine_name(node, dialect, memo)
    if name is None:
        if type(node).__name__ in SYNTAX_OK or isinstance(node, _OPERATORS):
            return
        raise FunctionRefused(
            f"expression {type(node).__name__} is not on the allow-list of pure functions for {dialect}; {_hint(dialect)}"
        )
    allowed = ALLOWED.get(dialect, ALLOWED["postgres"])
    if name not in allowed:
        raise FunctionRefused(
            f"function {name}() is not on the allow-list of pure functions for {dialect}; {_hint(dialect)}"
        )
    if in_from and name not in TABLE_FUNCTIONS:
        raise FunctionRefused(
            f"table function {name}() is not allowed in FROM (only unnest, JSON element readers and bounded "
            "generate_series/range)"
        )
    _check_bounds(node, name, dialect)
    if isinstance(node, _HIDDEN_SERIES):
        # one node that renders as two calls (UNNEST(GENERATE_SERIES(...)), EXPLODE(SEQUENCE(...))): the name read
        # is the outer call's, and the series inside is bounded here
        _check_bounds(node, "generate_series", dialect)


# ------------------------------------------------------------------ bounds

_HIDDEN_SERIES = tuple(t for t in (getattr(exp, "ExplodingGenerateSeries", None),) if isinstance(t, type))


def call_args(node: exp.Func) -> list[exp.Expression]:
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    out: list[exp.Expression] = []
    for key in node.arg_types:
        v = node.args.get(key)
        for item in v if isinstance(v, list) else [v]:
            if isinstance(item, exp.Expression):
                out.append(item)
    return out


def _strip(e: exp.Expression) -> exp.Expression:
    while isinstance(e, (exp.Paren, exp.Cast)) and not (
        isinstance(e, exp.Cast) and e.to.is_type(*exp.DataType.TEMPORAL_TYPES)
    ):
        e = e.this
    return e


def _number(e: exp.Expression) -> float | None:
    e = _strip(e)
    neg = False
    if isinstance(e, exp.Neg):
        neg, e = True, _strip(e.this)
    if isinstance(e, exp.Literal) and not e.is_string:
        try:
            v = float(e.this)
        except ValueError:
            return None
        return -v if neg else v
    return None


def _moment(e: exp.Expression) -> dt.datetime | None:
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.Cast) and e.to.is_type(*exp.DataType.TEMPORAL_TYPES):
        e = e.this
    if isinstance(e, (exp.TsOrDsToDate, exp.StrToDate)) and isinstance(e.this, exp.Literal):
        e = e.this
    if isinstance(e, exp.Literal) and e.is_string:
        text = e.this.strip()
        if re.search(r"\b(BC|AD)\b", text, re.I):  # '2020-01-01 BC' read as 2020: refused in a bound
            return None
        try:
            return dt.datetime.fromisoformat(text[:19])
        except ValueError:
            return None
    return None


_UNIT_S = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400, "month": 28 * 86400,
           "year": 365 * 86400}


def _interval_s(e: exp.Expression | None) -> float | None:
    if e is None:
        return 86400.0
    while isinstance(e, (exp.Paren, exp.Cast)):
        e = e.this
    if isinstance(e, exp.Literal) and e.is_string:  # '1 day'
        text = e.this
    elif isinstance(e, exp.Interval):
        unit = e.args.get("unit")
        text = f"{e.this.this if isinstance(e.this, exp.Literal) else ''} {unit.name if unit else ''}"
    else:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+?)s?\s*", text.lower())
    if not m or m.group(2) not in _UNIT_S:
        return None
    return float(m.group(1)) * _UNIT_S[m.group(2)]


def _series_size(args: list[exp.Expression], name: str) -> float | None:
    if not args:
        return None
    nums = [_number(a) for a in args]
    if all(n is not None for n in nums):
        if len(nums) == 1:
            start, stop, step = 0.0, nums[0], 1.0
        else:
            start, stop = nums[0], nums[1]
            step = nums[2] if len(nums) > 2 else 1.0
        if not step:
            return None
        return max(0.0, (stop - start) / step) + 1
    if len(args) in (2, 3):
        a, b = _moment(args[0]), _moment(args[1])
        step = _interval_s(args[2] if len(args) > 2 else None)
        if a and b and step:
            return abs((b - a).total_seconds()) / step + 1
        ra, rb = _anchored(args[0]), _anchored(args[1])
        if ra and rb and step and ra[0] == rb[0]:  # "the last 30 days": both bounds from one anchor
            # each offset is a range (a month is 28 to 31 days): the widest span the two ranges allow (red team
            # 11: '1000 years' against '366000 days' was counted as one value and made a million)
            return max(abs(rb[2] - ra[1]), abs(ra[2] - rb[1])) / step + 1
    return None


# the moments a spine may be anchored on: constant within one statement (never random(), never a column)
_ANCHORS = (exp.CurrentDate, exp.CurrentTimestamp, exp.CurrentDatetime, exp.CurrentTime)
_ANCHOR_NAMES = {"now", "today", "getdate", "sysdate", "current_date", "current_timestamp", "localtimestamp",
                 "getutcdate", "sysdatetime", "transaction_timestamp", "statement_timestamp"}
_UNIT_MAX_S = dict(_UNIT_S, month=31 * 86400, year=366 * 86400)  # an offset's upper bound (a step's lower: _UNIT_S)


def _anchored(e: exp.Expression) -> tuple[str, float, float] | None:
    """A bound written from a constant moment of the statement (``current_date - INTERVAL 29 DAY``,
    ``date_trunc('month', now()) - interval '11 months'``, BigQuery's ``DATE_SUB(CURRENT_DATE(), INTERVAL 30
    DAY)``): the anchor's rendering and the least and the most its offset may be, in seconds; None otherwise."""
    lo = hi = 0.0
    days = False
    while True:
        while isinstance(e, exp.Paren):  # a cast stays: CAST(now() AS DATE) is up to a day before now() (review)
            e = e.this
        if isinstance(e, (exp.Add, exp.Sub)) and _number(e.expression) is not None:
            # current_date - 29: a date give or take whole days (PostgreSQL, DuckDB)
            d = _number(e.expression) * 86400 * (1 if isinstance(e, exp.Add) else -1)
            lo, hi, days = lo + d, hi + d, True
            e = e.this
        elif isinstance(e, (exp.Add, exp.Sub)) and isinstance(e.expression, exp.Interval):
            n = _interval_s(e.expression)
            if n is None:
                return None
            lo, hi = _shift(lo, hi, n, _stretch(e.expression), isinstance(e, exp.Add))
            e = e.this
        elif isinstance(e, (exp.DateAdd, exp.DateSub, exp.TimestampAdd, exp.TimestampSub, exp.DatetimeAdd,
                            exp.DatetimeSub)) and e.args.get("expression") is not None:
            amount, unit = e.expression, e.args.get("unit")
            if isinstance(amount, exp.Interval):
                n = _interval_s(amount)
                stretch = _stretch(amount)
            else:
                n = _interval_s(exp.Interval(this=amount.copy(), unit=unit.copy() if unit else None))
                stretch = _stretch(exp.Interval(this=amount.copy(), unit=unit.copy() if unit else None))
            if n is None:
                return None
            lo, hi = _shift(lo, hi, n, stretch, isinstance(e, (exp.DateAdd, exp.TimestampAdd, exp.DatetimeAdd)))
            e = e.this
        else:
            break
    base = e
    while isinstance(base, (exp.DateTrunc, exp.TimestampTrunc, exp.Cast, exp.Paren)):
        base = base.this
    named = isinstance(base, exp.Anonymous) and base.name.lower() in _ANCHOR_NAMES and not base.expressions
    if not (isinstance(base, _ANCHORS) and not any(base.args.get(k) for k in ("this", "expression"))) and not named:
        return None
    if days and not (e is base and isinstance(base, exp.CurrentDate)):
        return None  # a number of days is added to a date only
    return e.sql(), lo, hi


def _shift(lo: float, hi: float, n: float, stretch: float, add: bool) -> tuple[float, float]:
    """An offset range moved by an interval of ``n`` to ``n * stretch`` seconds (``n`` >= 0), forward or back."""
    return (lo + n, hi + n * stretch) if add else (lo - n * stretch, hi - n)


def _stretch(interval: exp.Interval) -> float:
    """How much longer a unit may be than ``_interval_s`` counts it (months of 31 days, not 28)."""
    unit = interval.args.get("unit")
    name = (unit.name if unit else "").lower().rstrip("s")
    if not name and isinstance(interval.this, exp.Literal):
        m = re.search(r"([a-z]+?)s?\s*$", str(interval.this.this).lower())
        name = m.group(1) if m else ""
    return _UNIT_MAX_S.get(name, 1) / _UNIT_S.get(name, 1) if name in _UNIT_S else 1.0


def _growth(node: exp.Func, name: str) -> float | None:
    """How many times a chain of replacements (and the padding at its root) may grow a value: each replace()
    multiplies it by its replacement's length over its pattern's (regexp_replace: by one more than its replacement's,
    an empty match between every character); None when a replacement is not a literal string."""
    total = 1.0
    cur: exp.Expression | None = node
    while isinstance(cur, exp.Func):
        n, _ = _engine_name(cur, "duckdb") if isinstance(cur, exp.Anonymous) else (type(cur).__name__.lower(), False)
        args = call_args(cur)
        if n in ("replace", "regexp_replace", "regexpreplace"):
            factor = _replace_factor(cur, "replace" if n == "replace" else "regexp_replace")
            if factor is None:
                return None
            total *= factor
        elif n == "repeat":
            total *= (_number(args[1]) or 1.0) if len(args) > 1 else 1.0
        elif n in ("lpad", "rpad", "pad"):
            total *= (_number(args[1]) or 1.0) if len(args) > 1 else 1.0
        cur = args[0] if args else None
        while isinstance(cur, (exp.Paren, exp.Cast)):
            cur = cur.this
    return total


# series by their bounds: generate_series/range (DuckDB, PostgreSQL), generate_array and its date and timestamp kin
# (BigQuery), sequence (Databricks)
# set-returning functions: one row per element of their input (an array, a JSON document, a split string)
_EXPLODING = frozenset({"unnest", "explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "flatten",
                        "regexp_split_to_table", "string_to_table", "regexp_matches", "generate_subscripts",
                        "json_array_elements", "jsonb_array_elements", "json_array_elements_text",
                        "jsonb_array_elements_text", "json_each", "jsonb_each", "json_each_text", "jsonb_each_text",
                        "json_object_keys", "jsonb_object_keys", "jsonb_path_query", "json_table", "openjson"})


# ... of them, those that read a text (a split string, a JSON document): at most a row per character
_READS_TEXT = frozenset({"regexp_split_to_table", "string_to_table", "regexp_matches", "json_array_elements",
                         "jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text", "json_each",
                         "jsonb_each", "json_each_text", "jsonb_each_text", "json_object_keys", "jsonb_object_keys",
                         "jsonb_path_query", "json_table", "openjson", "flatten"})
_SPLITS = frozenset({"string_to_array", "regexp_split_to_array", "string_split", "str_split", "split",
                     "string_split_regex", "str_split_regex", "regexp_split", "parse_json", "json_extract", "from_json",
                     "json_parse"})


def _is_padding(node: exp.Func, name: str | None) -> bool:
    return name in _PADDING or isinstance(node, getattr(exp, "Space", ()))


def _is_series(node: exp.Func, name: str | None) -> bool:
    return name in _SERIES or isinstance(node, (*_HIDDEN_SERIES, exp.Generator))


def _series_of(node: exp.Func, name: str | None) -> float:
    """The values a series call produces (infinite when its bounds cannot be read)."""
    if isinstance(node, exp.Generator):  # Snowflake's GENERATOR(ROWCOUNT => n): n rows; a TIMELIMIT has no bound
        n = _number(node.args.get("rowcount")) if node.args.get("rowcount") is not None else None
        return float("inf") if n is None or node.args.get("timelimit") is not None or n < 0 else n
    return _series_size(call_args(node), "generate_series" if isinstance(node, _HIDDEN_SERIES) else name) \
        or float("inf")


def _series_behind(node: exp.Expression, dialect: str, memo: dict | None) -> float | None:
    """The largest series in the CTEs and subqueries whose columns ``node`` reads (None: it reads none built so)."""
    root = node.root()
    names = {c.table.lower() for c in node.find_all(exp.Column) if c.table}
    ctes: dict[str, list[exp.Expression]] = {}
    for c in root.find_all(exp.CTE):
        ctes.setdefault(c.alias_or_name.lower(), []).append(c.this)
    start = [b for n in names for b in ctes.get(n, [])]
    start += [q.this for q in root.find_all(exp.Subquery) if q.alias_or_name.lower() in names]
    if any(not c.table for c in node.find_all(exp.Column)):
        # an unqualified column (FLATTEN(input => arr), unnest(arr)) may be any source's: every CTE and derived
        # table of the statement (the session's review: two unnests of an unqualified list of a 90,000 series)
        start += [b for bs in ctes.values() for b in bs] + [q.this for q in root.find_all(exp.Subquery)]
    start += [q for q in node.find_all(exp.Select)]  # a scalar subquery inside the call
    # ... and the CTEs those read, to any depth (a series aggregated into a list one CTE later was counted as one
    # row per unnest: red team 17's 1e10 rows through two FLATTENs)
    bodies, seen = [], set()
    while start:
        b = start.pop()
        if id(b) in seen:
            continue
        seen.add(id(b))
        bodies.append(b)
        start += [body for t in b.find_all(exp.Table) if not t.args.get("db") for body in ctes.get(t.name.lower(), [])]
    sizes = [_series_of(f, n) if _is_series(f, n) else float(MAX_PAD + 1)
             for b in bodies for f in b.find_all(exp.Func)
             for n in [engine_name(f, dialect, memo)[0]] if _is_series(f, n) or _is_padding(f, n)]
    return max(sizes) if sizes else None


def _exploded_size(node: exp.Func, dialect: str, memo: dict | None) -> float:
    """At most how many rows one set-returning function gives, for the series budget: over a padded value
    (repeat, lpad, ...) one per character it may hold; over a series 1 (the series is counted); over a column of a
    CTE or subquery built from a series or padded, that series or padding; over a table's column 1 (bounded by the
    rows, as a join); over literals one per character (a string split, a JSON text) or element at most."""
    inner = [(f, engine_name(f, dialect, memo)[0]) for f in node.find_all(exp.Func) if f is not node]
    if any(_is_padding(f, n) for f, n in inner):
        return float(MAX_PAD + 1)
    if any(_is_series(f, n) for f, n in inner):
        return 1.0
    if next(node.find_all(exp.Column, exp.Select), None) is not None:
        # a list or text a CTE or subquery built from a series (``list(x) FROM range(50000)``, string_agg of one) or
        # padded (a CTE's repeat() read as a column): as long as its series or its padding (red team 14 unnested one
        # twice: 2.5e9 rows); a table's own column is bounded by the table
        built = _series_behind(node, dialect, memo)
        return built if built is not None else 1.0
    literals = list(node.find_all(exp.Literal))
    name = engine_name(node, dialect, memo)[0]
    for cast in node.find_all(exp.Cast):  # '{0,1,...,999}'::int[]: an element per comma (the session's review)
        to = cast.args.get("to")
        if isinstance(to, exp.DataType) and to.is_type(exp.DataType.Type.ARRAY) and isinstance(cast.this, exp.Literal):
            return float(max(1, str(cast.this.this).count(",") + 1))
    if name in _READS_TEXT or any(n in _SPLITS or isinstance(f, exp.Split) for f, n in inner):
        return float(1 + sum(len(str(lit.this)) for lit in literals if lit.is_string))  # a row per character at most
    return float(max(1, len(literals)))  # an array of literals: a row per element


_SERIES = ("generate_series", "range", "generate_array", "generate_date_array", "generate_timestamp_array",
           "sequence")


def _check_bounds(node: exp.Func, name: str, dialect: str) -> None:
    args = call_args(node)
    # inside an aggregate (string_agg(repeat(...)), list(lpad(...))) the padding is paid once per row, and inside a
    # lambda once per element (list_transform(range(99999), x -> repeat('ab', 5000)): 10^9 characters, red team 8)
    limit = MAX_PAD_AGGREGATED if node.find_ancestor(exp.AggFunc, exp.Window, *_PER_ELEMENT) is not None \
        else MAX_PAD
    if name == "space" or isinstance(node, getattr(exp, "Space", ())):  # (T-SQL writes it as replicate)
        n = _number(args[0]) if args else None
        if n is None or n > limit:
            raise FunctionRefused(f"space() needs a literal count of at most {limit}"
                                  + (" inside an aggregate, a window or a lambda" if limit != MAX_PAD else ""))
    elif name in ("lpad", "rpad"):
        n = _number(args[1]) if len(args) > 1 else None
        if n is None or n > limit:
            raise FunctionRefused(f"{name}() needs a literal length of at most {limit}"
                                  + (" inside an aggregate, a window or a lambda" if limit != MAX_PAD else ""))
    elif name in ("repeat", "replicate"):
        n = _number(args[1]) if len(args) > 1 else None
        s = _strip(args[0]) if args else None
        if n is None or not (isinstance(s, exp.Literal) and s.is_string) or n * max(1, len(s.this)) > limit:
            raise FunctionRefused(
                f"repeat() needs a literal string and a literal count producing at most {limit} characters"
                + (" inside an aggregate, a window or a lambda" if limit != MAX_PAD else "")
            )
    elif name in ("replace", "regexp_replace"):
        growth = _growth(node, name)
        if growth is None or growth > limit or _replace_factor(node, name) is None:
            raise FunctionRefused(
                f"{name}() needs a literal replacement, and nested with other replacements or padding it may grow a "
                f"value at most {limit:,} times; replace in fewer steps")
    elif name == "format" and dialect == "mysql":
        pass  # MySQL's FORMAT(number, decimals[, locale]): the engine caps decimals at 30
    elif name == "format" and dialect == "tsql":
        # FORMAT(value, '.NET format'): a literal format, no standard specifier wider than the limit ('D1000000')
        fmt = _strip(args[1]) if len(args) > 1 else None
        if not (isinstance(fmt, exp.Literal) and fmt.is_string):
            raise FunctionRefused("format() needs a literal format string")
        # a custom format writes about as many characters as it holds ('0#0#...': red team 11), a standard one its
        # precision ('D1000000')
        if len(fmt.this) > limit or any(len(w) > 6 or int(w) > limit for w in re.findall(r"\d+", fmt.this)):
            raise FunctionRefused(f"format() pads to a literal width of at most {limit:,}"
                                  + (" inside an aggregate, a window or a lambda" if limit != MAX_PAD else ""))
    elif name in ("printf", "format", "format_string"):
        fmt = _strip(args[0]) if args else None
        if not (isinstance(fmt, exp.Literal) and fmt.is_string):
            raise FunctionRefused(f"{name}() needs a literal format string")
        spec = re.findall(r"%(?:\d+\$)?[-#+ 0,(']*(\*|\d*)(?:\.(\*|\d+))?|\{[^}]*?(\*|\d+)[^}]*\}", fmt.this)
        widths = [w for pair in spec for w in pair if w]
        if any(w == "*" or int(w) > limit for w in widths):
            raise FunctionRefused(f"{name}() pads to a literal width of at most {limit:,}")
    elif name == "array_repeat":  # Databricks: an element repeated count times
        n = _number(args[1]) if len(args) > 1 else None
        if n is None or n > MAX_SERIES:
            raise FunctionRefused(f"array_repeat() needs a literal count of at most {MAX_SERIES:,}")
    elif name in _SERIES:
        size = _series_size(args, name)
        if size is None or size > MAX_SERIES:
            raise FunctionRefused(
                f"{name}() needs literal bounds (numbers, dates, or current_date/now() give or take literal "
                f"intervals, the same anchor at both ends) and a literal step, producing at most {MAX_SERIES:,} "
                "values"
            )


# functions whose output may be longer than their input by a factor (an escape per character at most): nested, they
# multiply (27 regexp_escape of a backslash made 1 GiB in the process: red team 14)
_ESCAPE_GROWTH = {"regexp_escape": 2.0, "quote_literal": 2.0, "quote_ident": 2.0, "quote_nullable": 2.0,
                  "quote": 2.0, "hex": 2.0, "to_hex": 2.0, "encode": 4.0, "to_base64": 1.4, "base64": 1.4,
                  "url_encode": 3.0, "json_quote": 6.0, "to_json": 6.0, "to_jsonb": 6.0, "json_serialize": 6.0,
                  "row_to_json": 6.0, "array_to_json": 6.0, "json_build_object": 6.0, "jsonb_build_object": 6.0,
                  "json_build_array": 6.0, "jsonb_build_array": 6.0, "json_object": 6.0, "json_array": 6.0,
                  "to_json_string": 6.0, "format": 2.0, "printf": 2.0,
                  "escape_string": 2.0, "htmlescape": 6.0, "html_escape": 6.0, "xmlserialize": 6.0}
_BINARY_TYPE = re.compile(r"bytea|blob|binary|bytes\b", re.I)


def _escape_growth(node: exp.Expression, dialect: str, memo: dict | None) -> float:
    if isinstance(node, exp.Cast):  # text of bytes is their escapes or hex: up to twice as long
        to = node.args.get("to")
        return 2.0 if isinstance(to, exp.DataType) and _BINARY_TYPE.search(to.sql(dialect=dialect)) else 1.0
    if isinstance(node, exp.Func):
        return _ESCAPE_GROWTH.get(engine_name(node, dialect, memo)[0] or "", 1.0)
    return 1.0


def _escape_factor(root: exp.Expression, dialect: str, memo: dict | None) -> float:
    """How many times the escapes and encodings of a statement may lengthen one value: along each chain of calls
    nested in one another the factors multiply, side by side they do not (six ``to_json`` columns are six values,
    not 6^6: the session's review); a SELECT over another's output (a CTE, a subquery) multiplies by its own most."""
    total = 1.0
    for sel in root.find_all(exp.Select):
        best = 1.0
        for node in sel.find_all(exp.Func):
            if node.find_ancestor(exp.Select) is not sel:
                continue
            f = _escape_growth(node, dialect, memo)
            if f == 1.0:
                continue
            a = node.parent
            while a is not None and a is not sel:
                f *= _escape_growth(a, dialect, memo)
                a = a.parent
            best = max(best, f)
        total *= best
    return total


def check_growth_budget(root: exp.Expression, dialect: str, memo: dict | None = None) -> None:
    """Replacements that lengthen a value multiply however they are nested (through ||, a subquery, a CTE): their
    factors over the statement, times its largest padding, are bounded as one value's padding is."""
    factor, pad = 1.0, 1.0
    for node in root.find_all(exp.Func):
        if isinstance(node, exp.Cast):
            continue
        name, _ = engine_name(node, dialect, memo)
        args = call_args(node)
        if name in ("replace", "regexp_replace"):
            factor *= _replace_factor(node, name) or float("inf")
        elif name in ("repeat", "replicate", "lpad", "rpad") and len(args) > 1:
            pad = max(pad, _number(args[1]) or 1.0)
    factor *= _escape_factor(root, dialect, memo)
    if factor > 1 and factor * pad > MAX_PAD:
        raise FunctionRefused(
            f"the replacements, escapes and encodings of one statement may lengthen a value at most {MAX_PAD:,} times "
            "together (with its padding); use fewer of them, or nest them less")


_PER_ELEMENT = (exp.Lambda, exp.Comprehension)  # bodies run once per element of a list

MAX_COPIES = 16  # copies of one value a statement may concatenate into one value (through CTEs and subqueries)

Copies = dict[str, float]  # a value's parts: each source value (a column read, a constant built) and its copies


def check_self_concatenation(root: exp.Expression) -> None:
    """A value concatenated with copies of itself grows with each level that does it: ``a1 AS (SELECT a.s || b.s
    FROM a0 AS a, a0 AS b)`` thirteen times made 10,000 characters 82 MB a row, and a recursive ``s || s`` 300 MB
    (PostgreSQL's backend at 2.7 GB, the client's past 3.6 GB: red team 8). Every output of every CTE and subquery
    is read as the source values it holds and how many copies of each (a column of a table: one of itself; a
    function of several values, ``x || y`` or ``array_to_string([x, x], '')``: their copies added up; a choice
    between them, ``CASE``/``coalesce``: the most of any), and no value may hold more than ``MAX_COPIES`` copies of
    one source. A string or list aggregate of an aggregate, or of a padded value, is refused (each level multiplies
    by its rows); a recursive CTE may not read one of its own columns twice in one output (the value would double
    with every pass). Distinct columns concatenated (``first || ' ' || last``) are one copy each."""
    ctes: dict[str, dict[str, Copies]] = {}
    for cte in root.find_all(exp.CTE):
        name = cte.alias_or_name.lower()
        body = cte.this
        if isinstance(body, exp.Union) and any(t.name.lower() == name for t in body.expression.find_all(exp.Table)):
            _check_recursive_step(body.expression, name)
        ctes[name] = _outputs(body, ctes)
    _outputs(root, ctes)


def _check_recursive_step(step: exp.Expression, name: str) -> None:
    own = {t.alias_or_name.lower() for t in step.find_all(exp.Table) if t.name.lower() == name}
    single = len(list(step.find_all(exp.Table))) == 1
    selects = [step] if isinstance(step, exp.Select) else list(step.find_all(exp.Select))
    for sel in selects:
        for e in sel.expressions:
            seen: dict[str, int] = {}
            for c in e.find_all(exp.Column):
                if (c.table or "").lower() in own or (not c.table and single):
                    seen[c.name.lower()] = seen.get(c.name.lower(), 0) + 1
            if any(n > 1 for n in seen.values()) and (e.find(exp.DPipe, exp.Concat, exp.ConcatWs, exp.Array)
                                                      or any(isinstance(f, exp.Func) and not isinstance(
                                                          f, _OPERATORS) for f in e.find_all(exp.Func))):
                raise FunctionRefused("a recursive CTE may not read one of its own columns twice in one output (the "
                                      "value could double with every pass); build the string outside the recursion")


_CHOICE = (exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least)  # one of their values, not all
_PADDING = ("repeat", "replicate", "lpad", "rpad", "pad", "space")


def _outputs(query: exp.Expression, ctes: dict[str, dict[str, Copies]]) -> dict[str, Copies]:
    """Per output name of ``query`` the copies it holds ("*": all of them together, for a star or an unknown name)."""
    if isinstance(query, (exp.Subquery, exp.Paren)):
        return _outputs(query.this, ctes)
    if isinstance(query, exp.SetOperation):
        left, right = _outputs(query.this, ctes), _outputs(query.expression, ctes)
        return {**left, "*": _most(*left.values(), *right.values())}
    if not isinstance(query, exp.Select):
        return {"*": {f"source:{id(query)}": 1.0}}
    sources: dict[str, dict[str, Copies]] = {}
    for src in [query.args.get("from_") or query.args.get("from"), *(query.args.get("joins") or [])]:
        node = src.this if src is not None else None
        if isinstance(node, exp.Table):
            alias = node.alias_or_name.lower()
            sources[alias] = ctes.get(node.name.lower()) or {"*": {f"table:{alias}": 1.0}}
        elif isinstance(node, (exp.Subquery, exp.Lateral)) and isinstance(node.this, exp.Expression):
            sources[node.alias_or_name.lower()] = _outputs(node.this, ctes)
    out: dict[str, Copies] = {}
    for e in query.expressions:
        out[e.alias_or_name.lower()] = _check_copies(_copies(e, sources, ctes))
    for key in ("where", "having", "qualify"):  # a condition computes values too (length(a.s || b.s) > 0)
        if isinstance(query.args.get(key), exp.Expression):
            _check_copies(_copies(query.args[key], sources, ctes))
    out["*"] = _most(*out.values())
    return out


def _check_copies(c: Copies) -> Copies:
    if c and max(c.values()) > MAX_COPIES:
        raise FunctionRefused(f"one value of this statement would hold {max(c.values()):.0f} copies of another (a "
                              f"value concatenated with itself, level after level); at most {MAX_COPIES} are allowed")
    return c


def _most(*parts: Copies) -> Copies:
    out: Copies = {}
    for p in parts:
        for k, v in p.items():
            out[k] = max(out.get(k, 0.0), v)
    return out


def _sum(*parts: Copies) -> Copies:
    out: Copies = {}
    for p in parts:
        for k, v in p.items():
            out[k] = out.get(k, 0.0) + v
    return out


def _copies(e: exp.Expression, sources: dict[str, dict[str, Copies]], ctes: dict[str, dict[str, Copies]]) -> Copies:
    if isinstance(e, exp.Column):
        src = sources.get((e.table or "").lower())
        if src is None and not e.table and len(sources) == 1:
            src = next(iter(sources.values()))
        if src is None:
            return {f"column:{(e.table or '').lower()}.{e.name.lower()}": 1.0}
        if e.name.lower() in src:
            return src[e.name.lower()]
        star = src.get("*", {})
        # a column of a table read directly: itself; of a CTE or subquery whose outputs are unknown: all they hold
        return {f"{k}.{e.name.lower()}": v for k, v in star.items()} if all(k.startswith("table:") for k in star) \
            else star
    if isinstance(e, (exp.Literal, exp.Star)):
        return {}
    if isinstance(e, (exp.Subquery, exp.Select)):  # a scalar subquery: what its outputs hold
        return _check_copies(_outputs(e, ctes).get("*", {}))
    # a chain of one operator (a OR b OR ..., a || b || ...) read flat, not one Python frame per term
    operands = list(e.flatten()) if isinstance(e, (exp.Connector, exp.Binary)) else list(e.iter_expressions())
    if isinstance(e, (exp.Predicate, exp.Connector)):  # a truth value: what it computed on the way is checked
        for x in operands:
            _check_copies(_copies(x, sources, ctes))
        return {}
    parts = [_copies(x, sources, ctes) for x in operands]
    if isinstance(e, (exp.GroupConcat, exp.ArrayAgg)):
        held = [k for p in parts for k in p]
        if any(k.startswith(("built:", "agg:")) for k in held):
            # string_agg(repeat(...)) is bounded where the padding is written (MAX_PAD_AGGREGATED); one built in a CTE
            # or subquery and aggregated over its rows is not (10,000 characters x 100,000 rows), and an aggregate
            # of an aggregate multiplies by its rows at each level (red team 8, session 24's review)
            raise FunctionRefused("an aggregate of a padded value, or of another aggregate's string or list, is not "
                                  "allowed; pad after aggregating, or aggregate the values themselves once")
        return {**_sum(*parts), f"agg:{id(e)}": 1.0}
    if isinstance(e, _CHOICE):
        return _most(*parts)
    out = _sum(*parts)  # a function of several values holds them all (array_to_string([s, s], ''): two copies)
    name = (e.sql_name() if isinstance(e, exp.Func) and not isinstance(e, exp.Anonymous) else
            str(e.name) if isinstance(e, exp.Anonymous) else "").lower()
    if isinstance(e, exp.Func) and _is_padding(e, name):
        out[f"built:{id(e)}"] = 1.0  # padded to a length of its own, from constants or a column
    return out


def _replace_factor(node: exp.Func, name: str) -> float | None:
    """How many times one replace() may lengthen its value: its replacement's length over its pattern's
    (regexp_replace: one more than its replacement's, an empty match between every character); None when the
    replacement is not a literal string."""
    args = call_args(node)
    repl = _strip(args[2]) if len(args) > 2 else None
    if repl is None:
        return 1.0 if name == "replace" else None
    if not (isinstance(repl, exp.Literal) and repl.is_string):
        return None
    pat = _strip(args[1]) if len(args) > 1 else None
    p = len(pat.this) if name == "replace" and isinstance(pat, exp.Literal) and pat.is_string else 0
    return max(1.0, len(repl.this) / p) if p else 1.0 + len(repl.this)


def _cte_reads(root: exp.Expression) -> dict[str, int]:
    """How many copies of each CTE's rows one statement joins: the most references to it in one SELECT (joined
    there, they multiply: ``WITH a AS (range(50000)) ... FROM a a1, a a2`` is 2.5e9 rows from one counted series, red
    team 14), times the copies of the CTE that SELECT is in. References in other SELECTs (a UNION's branches, a
    scalar subquery) add rows, not factors. A recursive CTE's reference to itself is not a read."""
    ctes = {c.alias_or_name.lower() for c in root.find_all(exp.CTE)}
    memo: dict[str, int] = {}

    def times(name: str, seen: frozenset) -> int:
        if name in memo:
            return memo[name]
        groups: dict[int, list] = {}
        for t in root.find_all(exp.Table):
            if t.name.lower() != name or t.db:
                continue
            owner = t.find_ancestor(exp.CTE)
            host = owner.alias_or_name.lower() if owner is not None else None
            if host == name:
                continue  # the recursive step's own reference
            sel = t.find_ancestor(exp.Select)
            groups.setdefault(id(sel), [0, host])[0] += 1
        best = 1
        for n, host in groups.values():
            up = times(host, seen | {name}) if host is not None and host not in seen and host != name else 1
            best = max(best, n * up)
        memo[name] = best
        return best

    return {name: times(name, frozenset()) for name in ctes}


def _times_read(node: exp.Expression, reads: dict[str, int], own: bool = False) -> int:
    """How many copies of ``node``'s rows the statement joins: those of the CTE it is in (``own``: it is), else 1."""
    cte = node if own else node.find_ancestor(exp.CTE)
    return reads.get(cte.alias_or_name.lower(), 1) if cte is not None else 1


def _literal_side(cmp: exp.Expression) -> tuple[exp.Expression | None, exp.Expression | None]:
    """(the literal, the other side) of a comparison with a literal number or date on one side."""
    for lit, other in ((cmp.expression, cmp.this), (cmp.this, cmp.expression)):
        if _number(lit) is not None or _moment(lit) is not None:
            return lit, other
    return None, None


def _increment(e: exp.Expression, col: str) -> tuple[float, bool] | None:
    """(the step in units of the counter: a number, or seconds for a date; whether it is a date step) when ``e``
    moves the column ``col`` by a literal: ``n + 1``, ``n - 1``, ``d + INTERVAL '1 day'``, ``d + 1`` (a day),
    ``DATEADD(day, 1, d)``, ``DATE_ADD(d, INTERVAL 1 DAY)``."""
    e = e.unalias()
    while isinstance(e, (exp.Paren, exp.Cast)):
        e = e.this
    if isinstance(e, (exp.Add, exp.Sub)):
        for c, d in ((e.this, e.expression), (e.expression, e.this)):
            if isinstance(c, exp.Column) and c.name.lower() == col:
                sign = -1.0 if isinstance(e, exp.Sub) else 1.0
                if _number(d) is not None:
                    return sign * _number(d), False
                if _interval_s(d):
                    return sign * _interval_s(d), True
        return None
    if isinstance(e, (exp.DateAdd, exp.DateSub, exp.TsOrDsAdd)):
        c = e.this
        if not (isinstance(c, exp.Column) and c.name.lower() == col):
            return None
        sign = -1.0 if isinstance(e, exp.DateSub) else 1.0
        if _interval_s(e.expression):
            return sign * _interval_s(e.expression), True
        unit = e.args.get("unit")
        n = _number(e.expression) if isinstance(e.expression, exp.Expression) else None
        if n is None and isinstance(e.expression, exp.Literal) and re.fullmatch(r"\d+", str(e.expression.this)):
            n = float(e.expression.this)  # MySQL's INTERVAL '1' DAY, read into DATE_ADD(t, '1', DAY)
        u = re.sub(r"s$", "", (unit.name if unit is not None else "day").lower())
        return (sign * n * _UNIT_S[u], True) if n and u in _UNIT_S else None
    return None


def _generator_size(cte: exp.CTE) -> float | None:
    """The rows of a recursive CTE: a counter's (a column the step moves by a literal, numbers or dates) span from
    its anchor's literal to the literal its WHERE bounds it by, in the direction it moves, over its step; infinite
    when that cannot be read (no counter, no literal start or bound, a bound on the wrong side: red team 14 and the
    session's review). A recursion without a counter that joins a table in its FROM (a hierarchy) is bounded by the
    table, as a join is (None). Not recursive: None."""
    body, name = cte.this, cte.alias_or_name.lower()
    if not isinstance(body, exp.Union) or not isinstance(body.expression, exp.Select):
        return None
    step = body.expression
    if not any(t.name.lower() == name for t in step.find_all(exp.Table)):
        return None
    anchor = body.this
    if not isinstance(anchor, exp.Select):
        return float("inf")
    alias = cte.args.get("alias")
    listed = [c.name.lower() for c in alias.columns] if isinstance(alias, exp.TableAlias) and alias.columns else []
    names = listed or [e.alias_or_name.lower() for e in anchor.expressions]
    cond = step.args.get("where")
    for i, e in enumerate(step.expressions):
        if i >= len(names) or i >= len(anchor.expressions):
            break
        col = names[i]
        inc = _increment(e, col)
        if inc is None or not inc[0]:
            continue
        stepv, dated = inc
        start_e = anchor.expressions[i].unalias()
        start = _moment(start_e) if dated else _number(start_e)
        if start is None and not dated:  # d + 1 on a date is a day
            start = _moment(start_e)
        if start is None:
            return float("inf")
        for cmp in (cond.find_all(exp.LT, exp.LTE, exp.GT, exp.GTE) if cond is not None else ()):
            lit, other = _literal_side(cmp)
            if lit is None or not any(c.name.lower() == col for c in other.find_all(exp.Column)):
                continue
            if cond is not cmp and any(isinstance(a, (exp.Or, exp.Not)) for a in _ancestors(cmp, cond)):
                continue  # a bound under OR or NOT bounds nothing
            bound = _moment(lit) if isinstance(start, dt.datetime) else _number(lit)
            if bound is None:
                continue
            span = ((bound - start).total_seconds() if isinstance(start, dt.datetime) else bound - start)
            if isinstance(start, dt.datetime) and not dated:
                stepv *= 86400  # d + 1: a day
            upper = (cmp.expression is lit) == isinstance(cmp, (exp.LT, exp.LTE))  # n < K, K > n: bounds from above
            if (stepv > 0) == upper and span * stepv >= 0:
                return abs(span / stepv) + 1
        break  # a counter without a bound in its direction: a hierarchy's depth, or unbounded
    return None if _walks_a_table(step, name) else float("inf")


def _walks_a_table(step: exp.Select, name: str) -> bool:
    """Whether a recursive step walks a table: joins one in its FROM by an equality between one of its columns and
    one of the recursive CTE's (``JOIN employees e ON e.manager_id = r.id``), so it ends with the data (a cycle in
    the data runs to the statement timeout, as any heavy query)."""
    joins = [j.this for j in step.args.get("joins") or []]
    frm = step.args.get("from_") or step.args.get("from")
    sources = ([frm.this] if frm is not None else []) + joins
    own = {t.alias_or_name.lower() for t in sources if isinstance(t, exp.Table) and t.name.lower() == name}
    others = {t.alias_or_name.lower() for t in sources if isinstance(t, exp.Table) and t.name.lower() != name}
    if not own or not others:
        return False
    for eq in step.find_all(exp.EQ):
        sides = []
        for side in (eq.this, eq.expression):
            while isinstance(side, (exp.Cast, exp.Paren)):
                side = side.this
            sides.append(side)
        quals = {c.table.lower() for c in sides if isinstance(c, exp.Column) and c.table}
        if quals & own and quals & others:
            return True
    return False


def _ancestors(node: exp.Expression, stop: exp.Expression):
    a = node.parent
    while a is not None and a is not stop.parent:
        yield a
        a = a.parent


def check_series_budget(root: exp.Expression, dialect: str, memo: dict | None = None) -> None:
    """Series multiply when joined (a, b = a x b rows): their product in one statement is bounded."""
    total = 1.0
    for lam in root.find_all(*_PER_ELEMENT):
        # a lambda (or a list comprehension) runs once per element of its list: a lambda inside it multiplies them
        # (a list of a 90,000 series walked inside a lambda over the same series: 8.1e9 elements, red team 8), and
        # a value it reads from outside is repeated once per element (list_transform(range(99999), lambda x: p.s)
        # over a padded p.s: session 24's review)
        if lam.find_ancestor(*_PER_ELEMENT) is not None:
            raise FunctionRefused("a lambda inside a lambda is not allowed (each runs once per element: they "
                                  "multiply); unnest the list and aggregate instead")
        if isinstance(lam, exp.Lambda):
            params, body = {i.name.lower() for i in lam.expressions}, [lam.this]
        else:
            params, body = {lam.expression.name.lower()}, [lam.this, lam.args.get("condition")]
        for part in body:
            for col in (part.find_all(exp.Column) if isinstance(part, exp.Expression) else ()):
                if (col.table or col.name).lower() not in params:  # x, or a field of it (x.price)
                    raise FunctionRefused("a lambda may read only its own parameters (a value from outside it is "
                                          "repeated once per element); join or unnest instead")
    funcs = [(node, engine_name(node, dialect, memo)[0]) for node in root.find_all(exp.Func)]
    exploded = 1.0
    reads = _cte_reads(root)
    for node, name in funcs:
        if _is_series(node, name) and node.find_ancestor(*_PER_ELEMENT) is not None:
            raise FunctionRefused(f"{name or 'a series'}() inside a lambda is not allowed (it runs once per element)")
        if _is_series(node, name):
            total *= _series_of(node, name) ** _times_read(node, reads)
        elif name in _EXPLODING or isinstance(node, (exp.Unnest, exp.Explode)):
            exploded *= _exploded_size(node, dialect, memo) ** _times_read(node, reads)
    for cte in root.find_all(exp.CTE):  # a recursive CTE is a series of its own (its counter's span)
        size = _generator_size(cte)
        if size is not None:
            total *= size ** _times_read(cte, reads, own=True)
    if total > MAX_SERIES:
        raise FunctionRefused(
            f"the generate_series/range of one statement may produce at most {MAX_SERIES:,} values together "
            "(joined series multiply); use fewer or shorter series"
        )
    if total * exploded > MAX_SERIES:
        # unnest / regexp_split_to_table / string_split over generated text is a series too: three splits of a
        # 10,000-character repeat() joined are 10^12 rows (red team 13); over a table's column they are bounded
        # by its rows, as a join is
        raise FunctionRefused(
            f"the series and the rows unnested from generated values (repeat, lpad, literals) of one statement may "
            f"come to at most {MAX_SERIES:,} together (joined ones multiply); unnest fewer or shorter values"
        )
