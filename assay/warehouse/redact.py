"""Engine error text without the data values it quotes.

Engines put the offending value into their error messages (``Could not convert string
'ann@example.com' to INT32``, ``invalid input syntax for type integer: "Ann Lee"``, ``Type INT32 with
value 19840317 can't be cast``), so an error is a way to read a value the result masks, or a row of
another tenant the statement's filter had not yet removed when the engine failed on it. ``scrub_error``
always masks what looks like an e-mail address or a phone number.

``strict`` (the statement reads a PII column, or the project has a tenant filter) fails closed: a message
is kept only in a form this module knows (``FORMS``: the engines' own sentences, each slot of which is a
name of the catalog or of the statement, a type, an operator, a piece of the statement's text, or a value
that is masked, and so is every slot after a value's); any other message becomes its class and ``WITHHELD``. Errors an engine raises before it
reads a row (DuckDB's Binder, Catalog and Parser errors; Snowflake's compilation errors) quote the
statement, never a value, and stay whole.

Why forms and not a list of safe words: every word list was talked past. A value spelled in the catalog's
and SQL's words (``CASE ch WHEN 'a' THEN 'integer' ...`` over its characters, red team 16), one placed
between two quoted keywords (``'select' bob AT tb.com 'select'``, red team 15), or one put where an engine
writes it unquoted (``Failed to parse format specifier alice AT example.com``, red team 16) read as the
engine's words. A form's fixed text is the engine's, and the value's slot is masked whatever it holds.
"""

from __future__ import annotations

import re
from typing import Iterable

from ..pii import MASK

_EMAIL = re.compile(r"[\w.+%-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(
    r"\+\d[\d\s().-]{6,}\d"                                   # international: +44 20 7946 0958
    r"|(?<![\w.])\(?\d{3}\)?[\s.-]?\d{3}[\s.-]\d{4}(?![\w.])"  # 555-123-4567, (555) 123 4567
    r"|(?<![\w.-])\d{9,15}(?![\w.-])"                          # a bare run of 9-15 digits
)
_WORD = re.compile(r"\w+")
_CLASS_PREFIX = re.compile(r"^[A-Z][A-Za-z ]{0,40} Error: ")  # DuckDB: "Conversion Error: ..."

# words of type names and of the clauses engines name (never data)
VOCABULARY = frozenset("""
int int2 int4 int8 int16 int32 int64 int128 integer bigint smallint tinyint hugeint uhugeint utinyint
usmallint uinteger ubigint varint bignum numeric decimal real float float4 float8 double precision
money text varchar char character varying bpchar name string bool boolean date time timetz timestamp timestamptz
timestamp_s timestamp_ms timestamp_ns interval uuid json jsonb xml bytea blob bit varbit inet cidr
macaddr point array list struct map union enum null any anyelement unknown record with without zone
select from where group by order having limit offset join on as and or not in is case when then else
end distinct union all over partition window cast true false conditions intersect except coalesce values
field list clause statement
""".split())
# a clause or an operation named in a form ("aggregate functions are not allowed in JOIN conditions"), a few words
_MAX_CLAUSE_WORDS = 4
WITHHELD = "(the engine's message is withheld: it may quote a value of what the statement read)"

# the slots of a form: N a name (of the catalog or the statement, up to schema.table.column), T a type, TL a list
# of types (a function's signature), W a clause's words, OP an operator, S a piece of the statement's own text,
# D a line number, C an engine's error class, E a Python exception's class, X a value (always masked)
_SLOTS = {
    "N": r"([A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*){0,2})",
    "T": r"([A-Za-z_]\w*(?: \w+){0,3}?(?:\(\d+(?:, ?\d+)?\))?(?:\[\])?)",
    "TL": r"([\w ,()\[\]]{0,200}?)",
    "W": r"([A-Za-z/ ]{1,40}?)",
    "OP": r"([=<>!~+\-*/%|&^#@]{1,3})",
    "S": r"(.{1,200}?)",
    "D": r"(\d{1,4})",
    "C": r"([A-Z][A-Z0-9_.]{2,80})",
    "E": r"([A-Z][A-Za-z]{1,40}(?:Error|Exception|Overflow))",  # a Python exception's class (the adapter's words)
    "X": r"(.*)",
}
_FORMS_TEXT = [
    # PostgreSQL (the primary message, as psycopg's diag gives it)
    'column "{N}" does not exist', "column {N} does not exist", 'relation "{N}" does not exist',
    'column reference "{N}" is ambiguous', 'missing FROM-clause entry for table "{N}"',
    'column "{N}" must appear in the GROUP BY clause or be used in an aggregate function',
    "function {N}({TL}) does not exist", "function {N}({TL}) is not unique",
    "operator does not exist: {T} {OP} {T}", "operator does not exist: {OP} {T}", "operator is not unique: {X}",
    "invalid input syntax for type {T}: {X}", "invalid input value for enum {N}: {X}", "division by zero",
    "{T} out of range", "numeric field overflow", "value too long for type {T}", "value out of range: {W}",
    "date/time field value out of range: {X}", "date out of range: {X}", "timestamp out of range",
    "unit {X} not recognized for type {T}", 'syntax error at or near "{S}"', "syntax error at end of input",
    "more than one row returned by a subquery used as an expression", "subquery must return only one column",
    "aggregate functions are not allowed in {W}", "window functions are not allowed in {W}",
    "aggregate function calls cannot be nested", "argument of {W} must be type boolean, not type {T}",
    "{W} types {T} and {T} cannot be matched", "cannot cast type {T} to {T}",
    'column "{N}" is of type {T} but expression is of type {T}', "invalid regular expression: {X}",
    "invalid value {X} for {X}", "cannot take logarithm of zero", "cannot take logarithm of a negative number",
    "permission denied for {W} {N}",
    # DuckDB (after its class: "Conversion Error: ...")
    "Could not convert string {X} to {T}", 'Could not convert string {X} to {T} when casting from source column "{N}"',
    "Could not convert string {X} to {T} when casting from source column {N}",
    "Type {T} with value {X} can't be cast to the destination type {T}",
    "Type {T} with value {X} can't be cast because the value is out of range for the destination type {T}",
    "Overflow in {W} of {T} ({X})!", "Could not parse string {X} according to format specifier {X}",
    "Failed to parse format specifier {X}", "date field value out of range: {X}",
    # MySQL / MariaDB
    "Unknown column '{N}' in '{W}'", "Table '{N}' doesn't exist", "FUNCTION {N} does not exist",
    "Column '{N}' in {W} is ambiguous", "Incorrect {W} value: {X}", "Truncated incorrect {W} value: {X}",
    "You have an error in your SQL syntax; check the manual that corresponds to your {W} server version for the "
    "right syntax to use near '{S}' at line {D}",
    # Snowflake's errors at run time (its compilation errors stay whole)
    "Numeric value {X} is not recognized", "Date {X} is not recognized", "Timestamp {X} is not recognized",
    "Division by zero",
    # BigQuery, SQL Server, Databricks (its error class, the rest masked)
    "Unrecognized name: {N} at [{D}:{D}]", "Unrecognized name: {N}; Did you mean {N}? at [{D}:{D}]",
    "Invalid column name '{N}'.", "Invalid object name '{N}'.", "Ambiguous column name '{N}'.",
    "Conversion failed when converting the {W} value {X} to data type {T}.", "Divide by zero error encountered.",
    "[{C}] {X}",
    # the adapters' own sentences around an engine's message
    "refused by the read-only connection: {X}",
    "the connection to the warehouse was lost during the query ({X}); the next query reconnects",
    "the result holds more than {D} MB; select fewer or shorter columns, or aggregate",
    "the result could not be read: {E}", "the result could not be read: {E}: {X}",
    "the connection to BigQuery failed during the query ({E})",
]


def _compile(form: str) -> tuple[re.Pattern, list[str], list[str]]:
    parts = re.split(r"(\{[A-Z]+\})", form)
    rx, kinds = [], []
    for p in parts:
        if p[1:-1] in _SLOTS and p.startswith("{"):
            rx.append(_SLOTS[p[1:-1]])
            kinds.append(p[1:-1])
        else:
            rx.append(re.escape(p))
    return re.compile("".join(rx), re.S), kinds, parts


FORMS = [_compile(f) for f in _FORMS_TEXT]


def _redact_contacts(text: str) -> str:
    return _PHONE.sub(MASK, _EMAIL.sub(MASK, text))


# the types a T slot may hold: one type word, or one of these names in several words; digits only as a type's
# precision ("DECIMAL(18,3)"). A slot after a value's was read to the end of a line the adapter cut, so the value's
# own tail filled it ("to int 199197214..." spelt an e-mail in character codes: red team 17)
TYPE_WORDS = VOCABULARY - frozenset("""
select from where group by order having limit offset join on as and or not in is case when then else end distinct
union all over partition window cast true false conditions intersect except coalesce values field list clause
statement with without zone precision varying
""".split())
MULTI_WORD_TYPES = frozenset({"double precision", "character varying", "timestamp with time zone",
                              "timestamp without time zone", "time with time zone", "time without time zone",
                              "bit varying"})
_TYPE = re.compile(r"(?P<name>[A-Za-z_]\w*(?: [A-Za-z]+){0,3})(?:\(\d{1,3}(?:, ?\d{1,3})?\))?(?:\[\])?")


def _a_type(value: str) -> bool:
    m = _TYPE.fullmatch(value)
    if m is None:
        return False
    name = m.group("name").lower()
    return name in TYPE_WORDS or name in MULTI_WORD_TYPES


def _slot_ok(kind: str, value: str, names: set[str], statement: str) -> bool:
    words = [w.lower() for w in _WORD.findall(value)]
    if kind == "N":
        return all(p.lower() in names for p in value.split("."))
    if kind == "T":
        return _a_type(value)
    if kind == "TL":
        return len(value) <= 200 and all(_a_type(t.strip()) for t in value.split(",")) if value.strip() else True
    if kind == "W":
        return 0 < len(words) <= _MAX_CLAUSE_WORDS and all(w in VOCABULARY or w in _CLAUSE_WORDS for w in words)
    if kind == "S":
        return bool(value.strip()) and value in statement
    return kind in ("OP", "D", "C", "E")


# the clauses and operations engines name in a form's W slot
_CLAUSE_WORDS = frozenset("""
multiplication addition subtraction division function functions table schema relation sequence view integer
decimal double datetime mariadb mysql overflow underflow nvarchar
""".split())


def _in_a_form(rest: str, names: set[str], statement: str) -> str | None:
    for rx, kinds, parts in FORMS:
        m = rx.fullmatch(rest)
        if m is None:
            continue
        values = m.groups()
        if not all(k == "X" or _slot_ok(k, v, names, statement) for k, v in zip(kinds, values)):
            continue
        # every slot from the first value's on is masked: an adapter keeps a message's first line and its first few
        # hundred characters, so where the value ends the engine's own tail may be gone and the value's own text
        # fill the form's last slots ("to INT32(097108105...)", "source column qal.qic": red teams 17 and 18)
        out, i, after_value = [], 0, False
        for p in parts:
            if p.startswith("{") and p[1:-1] in _SLOTS:
                after_value |= kinds[i] == "X"
                out.append(MASK if after_value else values[i])
                i += 1
            else:
                out.append(p)
        return "".join(out)
    return None


def _statement_names(statement: str) -> set[str]:
    """The identifiers of the statement (not its literals): a name a model misspelt is its own word."""
    if not statement:
        return set()
    try:
        import sqlglot
        from sqlglot import exp

        out: set[str] = set()
        for tree in sqlglot.parse(statement):
            if tree is not None:
                out |= {i.name.lower() for i in tree.find_all(exp.Identifier)}
                out |= {(f.name if isinstance(f, exp.Anonymous) else f.sql_name()).lower()
                        for f in tree.find_all(exp.Func)}
        return out
    except Exception:
        return set()


# DuckDB's classes of errors raised before a row is read (binding names, the catalog, parsing): they quote the
# statement's names, never a value, and a model needs them whole to fix its query (a tenant filter masked
# 'Table "o" does not have a column named "amout"': session 24's review)
_BEFORE_DATA = frozenset({"Binder", "Catalog", "Parser"})
_COMPILATION = "SQL compilation error"  # Snowflake compiles a statement before it reads a row


def scrub_error(message: str, *, strict: bool = False, known: Iterable[str] = (), statement: str = "") -> str:
    """``message`` safe to show: contacts always masked; when ``strict``, only in a known form (the catalog's
    names, ``known``, and the statement's, ``statement``, may fill its name slots), else its class and WITHHELD."""
    text = _redact_contacts(str(message)).strip()
    m = _CLASS_PREFIX.match(text)
    if not strict or (m and text[:m.end()].removesuffix(" Error: ") in _BEFORE_DATA) or \
            text.startswith(_COMPILATION):
        return text
    names = {w.lower() for k in known for w in [str(k)]} | _statement_names(statement)
    prefix, rest = (text[:m.end()], text[m.end():]) if m else ("", text)
    kept = _in_a_form(rest.rstrip(), names, statement)
    return prefix + (kept if kept is not None else f"{MASK} {WITHHELD}")
