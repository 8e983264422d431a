"""Statistical exploration: plan real SQL probes from the schema and run them as steps.

Probes go through the same guarded executor, store and step index as the
LLM's queries, so analysis, validation, reports and reruns treat them alike.
Every probe records what it measured (``step.probe``) for the detectors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ..digest import build_compact_result, cap_bytes
from ..explore.executor import Executor
from ..models import ExplorationStep, StepAction, TableInfo
from ..pii import looks_like_pii
from .detectors import MIN_BEHAVIOUR_ROWS
from .portable import portable

MAX_DIM_CARDINALITY = 60      # a column with more values is not a segment
MAX_SERIES_SEGMENTS = 8       # monthly series are split by dims with at most this many values
MAX_TABLES = 12
_MONEY = re.compile(r"(amount|revenue|price|total|spend|value|cost|gmv|sales|usd|eur)", re.I)
_NONNEG = re.compile(r"(duration|amount|price|total|qty|quantity|count|age|revenue|spend|cost|seconds|_s$|"
                     r"minutes|hours|days)", re.I)
_EVENT = re.compile(r"(^|_)(event|event_type|action|type|status|state|result|outcome|step|stage)($|_)", re.I)
_START = re.compile(r"(start|begin|open|created|installed|signup|registered|purchased|submitted)", re.I)
_END = re.compile(r"(end|finish|close|resolved|completed|processed|expir)", re.I)
_ORDINAL = re.compile(r"(level|tier|stage|grade|chapter|world|episode|round|wave|floor|rank|plan|version|"
                      r"priority|rating|score_band|segment|cohort|week|weekday|hour|month|quarter|year)", re.I)
_PERSON = re.compile(r"(customer|user|player|account|member|client|visitor|patient|employee|subscriber|"
                     r"buyer|seller|creator|person)", re.I)
_CREATED = re.compile(r"(created|installed|signup|signed_up|registered|joined|first_seen|acquired)", re.I)


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
    c = col.lower()
    return c == "id" or c.endswith("_id") or c.endswith("_key") or c.endswith("_uuid")


@dataclass
class Profile:
    table: TableInfo
    rows: int = 0
    distinct: dict[str, int] = field(default_factory=dict)
    nulls: dict[str, int] = field(default_factory=dict)
    negatives: dict[str, int] = field(default_factory=dict)

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
        ids = [c.name for c in self.table.columns if is_id(c.name) and c.name != self.pk]
        for c in ids:
            if _PERSON.search(c):
                return c
        return ids[0] if ids else self.pk

    def dims(self) -> list[str]:
        out = []
        for c in self.table.columns:
            k = kind_of(c.type)
            d = self.distinct.get(c.name, 0)
            if looks_like_pii(c.name) or c.name == self.pk or is_counter(c.name):
                continue
            if k in ("string", "bool") and 1 < d <= MAX_DIM_CARDINALITY:
                out.append(c.name)
            elif k == "number" and "INT" in c.type.upper() and 1 < d <= MAX_DIM_CARDINALITY and _ORDINAL.search(c.name):
                out.append(c.name)  # ordinal integers such as level, tier, stage
        return out

    def measures(self) -> list[str]:
        return [c.name for c in self.table.columns
                if kind_of(c.type) == "number" and not is_id(c.name) and c.name not in self.dims()]

    def bools(self) -> list[str]:
        return [c.name for c in self.table.columns if kind_of(c.type) == "bool"]

    def times(self) -> list[str]:
        return [c.name for c in self.table.columns if kind_of(c.type) == "time"]

    def event_col(self) -> str | None:
        for c in self.dims():
            if _EVENT.search(c) and kind_of(next(x.type for x in self.table.columns if x.name == c)) == "string" \
                    and self.distinct.get(c, 99) <= 12:
                return c
        return None

    def money(self) -> str | None:
        for m in self.measures():
            if _MONEY.search(m):
                return m
        return None

    def duration(self) -> tuple[str, str, str] | None:
        """(start, end, label) of the table's main interval: opened -> closed, start -> end."""
        times = self.times()
        starts = [x for x in times if _START.search(x)]
        ends = [x for x in times if _END.search(x) and x not in starts]
        if not starts or not ends:
            return None
        return starts[0], ends[0], duration_label(starts[0], ends[0])

    def created_at(self) -> str | None:
        for t in self.times():
            if _CREATED.search(t):
                return t
        return None


@dataclass
class Probe:
    kind: str
    table: str
    purpose: str
    sql: str
    meta: dict = field(default_factory=dict)
    keywords: str = ""


class Planner:
    def __init__(self, tables: list[TableInfo], quote: Callable[[str], str], keywords: list[str]):
        self.tables = tables
        self.q = quote
        self.keywords = [k.lower() for k in keywords]
        self.referenced: set[str] = set()

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
        sql = f"SELECT {', '.join(parts)} FROM {self.ref(t)}"
        return Probe("profile", t.fqn, f"Profile of {t.fqn}: row count, distinct values, nulls and negative "
                                       f"values per column (data quality)", sql)

    # ------------------------------------------------------------------ probes from profiles

    def plan(self, profiles: dict[str, Profile]) -> list[Probe]:
        probes: list[Probe] = []
        by_name = {p.table.name.lower(): p for p in profiles.values()}
        # tables that other tables point at by *_id (products, channels): catalogues, not behaviour
        self.referenced = {name for p in profiles.values() for c in p.table.columns if is_id(c.name)
                           and c.name != p.pk for name in (c.name.lower()[:-3] + "s", c.name.lower()[:-3])
                           if name in by_name and by_name[name] is not p}
        for p in sorted(profiles.values(), key=lambda x: (-self.relevance(x.table), x.table.fqn)):
            probes += self._table_probes(p, by_name)
        probes += self._retention_probes(profiles)
        # interleave by kind so a small budget still covers every kind of probe
        order = {"funnel": 0, "rate_series": 1, "breakdown": 2, "retention": 3, "concentration": 4,
                 "series": 5, "joined_breakdown": 6, "end_before_start": 7, "segment_series": 8,
                 "duration_breakdown": 9, "duration_series": 10, "correlation": 11, "crosstab": 12}
        probes.sort(key=lambda pr: (order.get(pr.kind, 13), -self._probe_relevance(pr)))
        return probes

    def _probe_relevance(self, pr: Probe) -> float:
        text = (pr.purpose + " " + pr.sql).lower()
        return sum(1 for k in self.keywords if k in text)

    def _aggs(self, p: Profile) -> list[str]:
        aggs = ["count(*) AS n"]
        ent = p.entity()
        if ent and ent != p.pk:
            aggs.append(f"count(DISTINCT {self.q(ent)}) AS entities")
        for m in [x for x in p.measures() if not is_counter(x)][:3]:
            aggs.append(f"avg({self.q(m)}) AS {self.q('avg_' + m)}")
            aggs.append(f"stddev_samp({self.q(m)}) AS {self.q('sd_' + m)}")
            if _MONEY.search(m):
                aggs.append(f"sum({self.q(m)}) AS {self.q('sum_' + m)}")
        for b in p.bools()[:2]:
            aggs.append(f"avg(CASE WHEN {self.q(b)} THEN 1.0 ELSE 0.0 END) AS {self.q(b + '_rate')}")
        return aggs

    def _table_probes(self, p: Profile, by_name: dict[str, Profile]) -> list[Probe]:
        t, q, ref = p.table, self.q, self.ref(p.table)
        out: list[Probe] = []
        ev = p.event_col()
        times = p.times()
        ts = times[0] if times else None
        for d in p.dims():
            if d == ev:
                continue
            out.append(Probe("breakdown", t.fqn, f"{t.name} by {d}: counts, averages and rates per {d}",
                             f"SELECT {q(d)}, {', '.join(self._aggs(p))} FROM {ref} GROUP BY 1 ORDER BY 1",
                             {"dim": d, "entity": p.entity(), "small": p.rows < MIN_BEHAVIOUR_ROWS,
                              "catalogue": t.name.lower() in self.referenced}))
        if ev:
            segs = [d for d in p.dims() if d != ev and p.distinct.get(d, 99) <= MAX_SERIES_SEGMENTS]
            for seg in segs[:3]:
                out.append(Probe("funnel", t.fqn, f"Funnel of {ev} by {seg} in {t.name} (conversion between steps)",
                                 f"SELECT {q(seg)}, {q(ev)}, count(*) AS n FROM {ref} GROUP BY 1, 2 ORDER BY 1, 2",
                                 {"dim": seg, "event": ev, "entity": p.entity(), "time": ts}))
                if ts:
                    out.append(Probe("rate_series", t.fqn,
                                     f"Monthly {ev} mix by {seg} in {t.name} (conversion and status over time)",
                                     f"SELECT date_trunc('month', {q(ts)}) AS month, {q(seg)}, {q(ev)}, count(*) AS n "
                                     f"FROM {ref} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
                                     {"dim": seg, "event": ev, "entity": p.entity(), "time": ts}))
        if ts:
            out.append(Probe("series", t.fqn, f"Monthly trend of {t.name} (volume and measures)",
                             f"SELECT date_trunc('month', {q(ts)}) AS month, {', '.join(self._aggs(p))} "
                             f"FROM {ref} GROUP BY 1 ORDER BY 1", {"time": ts, "entity": p.entity()}))
        money = p.money()
        ent = p.entity()
        if money and ent and ent != p.pk:
            out.append(Probe(
                "concentration", t.fqn, f"Concentration of {money} across {ent} in {t.name} (top 1%, 5%, 10% share)",
                f"WITH e AS (SELECT {q(ent)} AS entity, sum({q(money)}) AS v FROM {ref} GROUP BY 1), "
                f"r AS (SELECT v, row_number() OVER (ORDER BY v DESC) AS rk, count(*) OVER () AS n FROM e) "
                f"SELECT max(n) AS entities, sum(v) AS total, "
                f"sum(CASE WHEN rk <= ceil(n * 0.01) THEN v ELSE 0 END) AS top1, "
                f"sum(CASE WHEN rk <= ceil(n * 0.05) THEN v ELSE 0 END) AS top5, "
                f"sum(CASE WHEN rk <= ceil(n * 0.10) THEN v ELSE 0 END) AS top10, "
                f"sum((n - rk + 1) * v) AS weighted FROM r",
                {"entity": ent, "measure": money}))
        # joined dimensions: a fact table's *_id that names a small dimension table
        for c in t.columns:
            if not is_id(c.name) or c.name == p.pk:
                continue
            stem = c.name.lower()[:-3]
            other = by_name.get(stem + "s") or by_name.get(stem)
            if other is None or other is p:
                continue
            for d in [x for x in other.dims() if other.distinct.get(x, 99) <= 12][:4]:
                okey = other.pk or c.name
                if ev:
                    out.append(Probe(
                        "funnel", t.fqn, f"Funnel of {ev} by {other.table.name}.{d} (joined on {c.name})",
                        f"SELECT o.{q(d)}, f.{q(ev)}, count(*) AS n FROM {ref} f JOIN {self.ref(other.table)} o "
                        f"ON f.{q(c.name)} = o.{q(okey)} GROUP BY 1, 2 ORDER BY 1, 2",
                        {"dim": d, "event": ev, "join": {"table": other.table.fqn, "on": c.name, "key": okey},
                         "entity": p.entity()}))
                fact_measures = [m for m in p.measures() if not is_counter(m)][:3]
                if fact_measures or p.bools():
                    aggs = ["count(*) AS n"]
                    if ent and ent != p.pk:
                        aggs.append(f"count(DISTINCT f.{q(ent)}) AS entities")
                    for m in fact_measures:
                        aggs += [f"avg(f.{q(m)}) AS {q('avg_' + m)}", f"stddev_samp(f.{q(m)}) AS {q('sd_' + m)}"]
                    for b in p.bools()[:2]:
                        aggs.append(f"avg(CASE WHEN f.{q(b)} THEN 1.0 ELSE 0.0 END) AS {q(b + '_rate')}")
                    out.append(Probe(
                        "joined_breakdown", t.fqn, f"{t.name} by {other.table.name}.{d}: averages and rates",
                        f"SELECT o.{q(d)}, {', '.join(aggs)} FROM {ref} f JOIN {self.ref(other.table)} o "
                        f"ON f.{q(c.name)} = o.{q(okey)} GROUP BY 1 ORDER BY 1",
                        {"dim": d, "entity": ent, "join": {"table": other.table.fqn, "on": c.name, "key": okey}}))
                if ev and ts:
                    out.append(Probe(
                        "rate_series", t.fqn, f"Monthly {ev} mix by {other.table.name}.{d} (joined on {c.name})",
                        f"SELECT date_trunc('month', f.{q(ts)}) AS month, o.{q(d)}, f.{q(ev)}, count(*) AS n "
                        f"FROM {ref} f JOIN {self.ref(other.table)} o ON f.{q(c.name)} = o.{q(okey)} "
                        f"GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
                        {"dim": d, "event": ev, "entity": p.entity(), "time": ts,
                         "join": {"table": other.table.fqn, "on": c.name, "key": okey}}))
                if ts and money:
                    out.append(Probe(
                        "segment_series", t.fqn, f"Monthly {money} of {t.name} by {other.table.name}.{d}",
                        f"SELECT date_trunc('month', f.{q(ts)}) AS month, o.{q(d)}, count(*) AS n, "
                        f"sum(f.{q(money)}) AS {q('sum_' + money)} FROM {ref} f JOIN {self.ref(other.table)} o "
                        f"ON f.{q(c.name)} = o.{q(okey)} GROUP BY 1, 2 ORDER BY 1, 2",
                        {"dim": d, "time": ts, "measure": "sum_" + money,
                         "join": {"table": other.table.fqn, "on": c.name, "key": okey}}))
        out += self._interval_probes(p)
        out += self._crosstab_probes(p)
        out += self._correlation_probes(p)
        if ts and not money:
            for d in [x for x in p.dims() if p.distinct.get(x, 99) <= MAX_SERIES_SEGMENTS][:3]:
                out.append(Probe("segment_series", t.fqn, f"Monthly number of {t.name} by {d}",
                                 f"SELECT date_trunc('month', {q(ts)}) AS month, {q(d)}, count(*) AS n "
                                 f"FROM {ref} GROUP BY 1, 2 ORDER BY 1, 2",
                                 {"dim": d, "time": ts, "measure": "n", "trend": True}))
        starts = [x for x in times if _START.search(x)]
        ends = [x for x in times if _END.search(x)]
        if starts and ends:
            out.append(Probe("end_before_start", t.fqn, f"Rows of {t.name} whose {ends[0]} precedes {starts[0]}",
                             f"SELECT count(*) AS n, sum(CASE WHEN {q(ends[0])} < {q(starts[0])} THEN 1 ELSE 0 END) "
                             f"AS bad FROM {ref}", {"start": starts[0], "end": ends[0]}))
        for d in [x for x in p.dims() if p.distinct.get(x, 99) <= MAX_SERIES_SEGMENTS][:2]:
            if ts and p.money():
                m = p.money()
                out.append(Probe("segment_series", t.fqn, f"Monthly {m} of {t.name} by {d}",
                                 f"SELECT date_trunc('month', {q(ts)}) AS month, {q(d)}, count(*) AS n, "
                                 f"sum({q(m)}) AS {q('sum_' + m)} FROM {ref} GROUP BY 1, 2 ORDER BY 1, 2",
                                 {"dim": d, "time": ts, "measure": "sum_" + m}))
        return out

    def _interval_expr(self, start: str, end: str) -> str:
        return f"date_diff('second', {self.q(start)}, {self.q(end)}) / 86400.0"

    def _interval_probes(self, p: Profile) -> list[Probe]:
        """The table's main interval (opened -> closed) in days: by segment, and month by month."""
        dur = p.duration()
        if not dur:
            return []
        start, end, label = dur
        q, t, ref = self.q, p.table, self.ref(p.table)
        expr = self._interval_expr(start, end)
        col = slug(label) + "_days"
        valid = f"{q(end)} IS NOT NULL AND {q(end)} >= {q(start)}"
        meta = {"start": start, "end": end, "label": label, "measure": "avg_" + col}
        out = [Probe("duration_breakdown", t.fqn, f"Average {label} in days ({start} to {end}) of {t.name} by {d}",
                     f"SELECT {q(d)}, count(*) AS n, avg({expr}) AS {q('avg_' + col)}, "
                     f"stddev_samp({expr}) AS {q('sd_' + col)} FROM {ref} WHERE {valid} GROUP BY 1 ORDER BY 1",
                     {**meta, "dim": d}) for d in p.dims()]
        out.append(Probe("duration_series", t.fqn, f"Monthly volume and average {label} of {t.name}",
                         f"SELECT date_trunc('month', {q(start)}) AS month, count(*) AS n, "
                         f"avg(CASE WHEN {valid} THEN {expr} END) AS {q('avg_' + col)} FROM {ref} "
                         f"GROUP BY 1 ORDER BY 1", {**meta, "time": start}))
        for d in [x for x in p.dims() if p.distinct.get(x, 99) <= MAX_SERIES_SEGMENTS][:3]:
            out.append(Probe("segment_series", t.fqn, f"Monthly average {label} of {t.name} by {d}",
                             f"SELECT date_trunc('month', {q(start)}) AS month, {q(d)}, count(*) AS n, "
                             f"avg({expr}) AS {q('avg_' + col)} FROM {ref} WHERE {valid} GROUP BY 1, 2 ORDER BY 1, 2",
                             {**meta, "dim": d, "time": start, "trend": True}))
        return out

    def _crosstab_probes(self, p: Profile, limit: int = 10) -> list[Probe]:
        """Pairs of small dimensions: is one value concentrated within a segment of the other?"""
        small = [d for d in p.dims() if p.distinct.get(d, 99) <= 12]
        q, t, ref = self.q, p.table, self.ref(p.table)
        out = []
        for i, a in enumerate(small):
            for b in small[i + 1:]:
                out.append(Probe("crosstab", t.fqn, f"{t.name} by {a} and {b}: the mix of one within the other",
                                 f"SELECT {q(a)}, {q(b)}, count(*) AS n FROM {ref} GROUP BY 1, 2 ORDER BY 1, 2",
                                 {"dims": [a, b]}))
        out.sort(key=lambda pr: -self._probe_relevance(pr))
        return out[:limit]

    def _correlation_probes(self, p: Profile, limit: int = 6) -> list[Probe]:
        """Pearson correlation between the table's measures (and its main interval), computed in SQL."""
        q, t, ref = self.q, p.table, self.ref(p.table)
        exprs = {m: q(m) for m in [x for x in p.measures() if not is_counter(x)][:4]}
        dur = p.duration()
        if dur:
            exprs[dur[2]] = f"CASE WHEN {q(dur[1])} >= {q(dur[0])} THEN {self._interval_expr(dur[0], dur[1])} END"
        names = list(exprs)
        pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]][:limit]
        if not pairs:
            return []
        parts = []
        for k, (a, b) in enumerate(pairs):
            parts.append(f"corr({exprs[a]}, {exprs[b]}) AS r{k}")
            parts.append(f"sum(CASE WHEN {exprs[a]} IS NOT NULL AND {exprs[b]} IS NOT NULL THEN 1 ELSE 0 END) AS n{k}")
        return [Probe("correlation", t.fqn, f"Correlation between measures of {t.name} ({', '.join(names)})",
                      f"SELECT {', '.join(parts)} FROM {ref}", {"pairs": [list(x) for x in pairs], "exprs": exprs})]

    def _retention_probes(self, profiles: dict[str, Profile]) -> list[Probe]:
        """Entity tables (a key and a created-at time) with activity tables that reference them."""
        out: list[Probe] = []
        q = self.q
        for ent in profiles.values():
            key, created = ent.pk, ent.created_at()
            if not key or not created:
                continue
            for act in profiles.values():
                if act is ent or key not in act.table.column_names() or not act.times():
                    continue
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
                        f"avg(CASE WHEN a.acts > 1 THEN 1.0 ELSE 0.0 END) AS repeat_rate, "
                        f"sum(CASE WHEN a.acts >= 1 THEN 1 ELSE 0 END) AS active "
                        f"FROM {self.ref(ent.table)} e LEFT JOIN a ON a.k = e.{q(key)} GROUP BY 1 ORDER BY 1",
                        {"dim": d, "entity_table": ent.table.fqn, "key": key, "created": created,
                         "activity_table": act.table.fqn, "activity_time": ats}))
        return out


def _profile_from_row(t: TableInfo, row: dict) -> Profile:
    p = Profile(table=t, rows=int(row.get("row_count") or 0))
    for c in t.columns:
        p.distinct[c.name] = int(row.get(c.name + "__distinct") or 0)
        p.nulls[c.name] = int(row.get(c.name + "__nulls") or 0)
        if c.name + "__negative" in row:
            p.negatives[c.name] = int(row.get(c.name + "__negative") or 0)
    return p


def run_probe(executor: Executor, probe: Probe, run_id: str, n: int, pii: list[str]) -> ExplorationStep:
    out = executor.run(portable(probe.sql, executor.warehouse.dialect), fix=False, purpose="statistical")
    step = ExplorationStep(run_id=run_id, step=n, turn=n, action=StepAction.query,
                           thinking=f"statistical analyst: {probe.kind} probe", purpose=probe.purpose,
                           query=out.sql, probe={"kind": probe.kind, "table": probe.table, **probe.meta},
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
    from ..explore.loop import step_summary

    step.summary = step_summary(step)
    return step


def explore_statistically(s, prior: list[ExplorationStep], sink: Callable[[ExplorationStep], None]) -> str:
    """Plan and run probes up to ``max_steps``; resumes after the last persisted step."""
    keywords = [k for a in s.pack.areas for k in a.keywords]
    planner = Planner(s.tables, s.warehouse.quote, keywords)
    dialect = s.warehouse.dialect
    done_sql = {st.query for st in prior}
    n = len(prior)
    profiles: dict[str, Profile] = {}
    by_fqn = {t.fqn: t for t in s.tables}
    for st in prior:
        if st.probe and st.probe.get("kind") == "profile" and st.ok and st.probe["table"] in by_fqn:
            profiles[st.probe["table"]] = _profile_from_row(by_fqn[st.probe["table"]], st.digest.all_rows[0])
    for t in planner.ranked_tables():
        if n >= s.run.max_steps:
            return "max_steps"
        pr = planner.profile_probe(t)
        if portable(pr.sql, dialect) in done_sql or t.fqn in profiles:
            continue
        n += 1
        step = run_probe(s.executor, pr, s.run_id, n, s.project.warehouse.pii_columns)
        sink(step)
        if step.ok and step.digest.all_rows:
            profiles[t.fqn] = _profile_from_row(t, step.digest.all_rows[0])
    for pr in planner.plan(profiles):
        if n >= s.run.max_steps:
            return "max_steps"
        sql = portable(pr.sql, dialect)
        if sql in done_sql:
            continue
        done_sql.add(sql)
        n += 1
        sink(run_probe(s.executor, pr, s.run_id, n, s.project.warehouse.pii_columns))
    return "done"
