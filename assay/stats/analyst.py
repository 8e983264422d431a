"""The statistical analyst's area analysis: detectors -> scored candidates -> insights.

Candidates are computed once per run from every probe step (cached in the
store), each assigned to exactly one area by keyword and embedding
similarity; an area keeps its top candidates. Affected counts are computed by
SQL and verified by the same verifier as an LLM's claims.
"""

from __future__ import annotations

import re
import threading
import warnings
from dataclasses import asdict

import numpy as np
import pandas as pd

from ..digest import to_frame
from ..models import AnalysisArea, Claim, ExplorationStep, Insight, Severity
from ..analysis.picker import area_query
from . import detectors as D
from .claims import candidate_claims
from .portable import portable, quote

MAX_INSIGHTS_PER_AREA = 5
MAX_INSIGHTS_GOAL = 12  # a goal-driven run has one area: it keeps more of what it found
MAX_NO_EFFECT = 4       # findings of no effect reported for a goal
MAX_OFF_GOAL = 3        # findings off the goal's subject reported after those on it...
ANSWERED = 3            # ...once at least this many findings are on it
FOLD_MARGIN = 0.05      # a spread this much closer to the goal than the outlier it would be folded into stays apart
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock(run_id: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(run_id, threading.Lock())


def _ref(s, fqn: str) -> str:
    schema, name = fqn.split(".", 1)
    return f"{quote(schema)}.{quote(name)}"  # generated SQL is DuckDB's, transpiled by portable()


def _frame(s, step: ExplorationStep) -> pd.DataFrame | None:
    if step.digest is not None and step.digest.all_rows is not None:
        return pd.DataFrame(step.digest.all_rows, columns=[c.name for c in step.digest.columns])
    out = s.executor.run(step.query, fix=False, purpose="statistical")
    return to_frame(out.result.table) if out.ok else None


def detect(s, step: ExplorationStep) -> list[D.Candidate]:
    """Candidates from one probe step (the detectors' registry picks the family by probe kind)."""
    probe = step.probe or {}
    table = probe.get("table", "")
    if not probe.get("kind") or not table:
        return []
    df = _frame(s, step)
    if df is None or df.empty:
        return []
    t = next((x for x in s.tables if x.fqn == table), None)
    cands = D.detect_probe(probe, df, step.step, lambda fqn: _ref(s, fqn), [c.name for c in t.columns] if t else [])
    join = probe.get("join") or {}
    averaged = {c.measure for c in cands if c.measure.startswith("avg_")}
    if join.get("on") and averaged:
        on = (join.get("via") or {}).get("on") or join["on"]  # the fact table's own column
        attributes = key_attributes(s, table, on, sorted(m[4:] for m in averaged))
        cands = [c for c in cands if c.measure[4:] not in attributes]
    return cands


KEY_ATTRIBUTE_SHARE = 0.05  # at most this share of a measure's variance lies within its rows of one key
MIN_ROWS_PER_KEY = 3  # ... judged only where a key has this many rows on average
_key_attr_cache: dict[str, frozenset] = {}
_key_attr_lock = threading.Lock()


def key_attributes(s, table: str, key: str, measures: list[str]) -> frozenset:
    """The measures of ``table`` that are attributes of ``key``: nearly all their spread lies between keys, not
    within one key's rows (``order_items.unit_price`` is the product's list price). Averaged over a dimension of the
    key's table (a product's category), such a measure describes that table, weighted by how many fact rows each
    key has: "furniture has a higher average unit_price" is the price list, not how anyone bought. A query that
    fails keeps every measure (this is judgement, not safety)."""
    q = quote
    ref = _ref(s, table)
    means = ", ".join(f"avg({q(m)}) AS {q('mean_' + m)}" for m in measures)
    sums = ", ".join(f"sum((f.{q(m)} - k.{q('mean_' + m)}) * (f.{q(m)} - k.{q('mean_' + m)})) AS {q('within_' + m)}, "
                     f"var_pop(f.{q(m)}) * count(f.{q(m)}) AS {q('total_' + m)}" for m in measures)
    sql = (f"WITH k AS (SELECT {q(key)} AS key_value, {means} FROM {ref} GROUP BY 1) "
           f"SELECT count(*) AS row_count, count(DISTINCT f.{q(key)}) AS key_count, {sums} "
           f"FROM {ref} f JOIN k ON f.{q(key)} = k.key_value")
    cache_key = f"{s.run_id}\n{sql}"
    with _key_attr_lock:
        if cache_key in _key_attr_cache:
            return _key_attr_cache[cache_key]
    out = s.executor.run(portable(sql, s.warehouse.dialect), fix=False, purpose="statistical")
    found: set[str] = set()
    row = out.result.table.to_pylist()[0] if out.ok and out.result.table.num_rows == 1 else {}
    try:
        n, keys = int(row.get("row_count") or 0), int(row.get("key_count") or 0)
    except (TypeError, ValueError):
        n, keys = 0, 0
    # keys that rarely repeat (97% of customers with one order) leave no spread within a key to speak of: no
    # judgement there (session 24's review: "premium customers spend more per order" was dropped)
    if keys and n >= MIN_ROWS_PER_KEY * keys:
        for m in measures:
            try:  # (a masked or odd value: no judgement)
                within, total = float(row.get("within_" + m)), float(row.get("total_" + m))
            except (TypeError, ValueError):
                continue
            # the spread within keys per degree of freedom, against the whole's
            if total > 0 and within / (n - keys) <= KEY_ATTRIBUTE_SHARE * total / (n - 1):
                found.add(m)
    with _key_attr_lock:
        if len(_key_attr_cache) > 512:
            _key_attr_cache.clear()
        _key_attr_cache[cache_key] = frozenset(found)
    return frozenset(found)


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def drop_artifact_echoes(cands: list[D.Candidate]) -> list[D.Candidate]:
    """One artifact, one finding: a change dated at a status switch is the switch seen again."""
    switches = [pd.Timestamp(c.segment.split()[-1]) for c in cands if c.kind == D.ARTIFACT and c.segment]
    seen: list[pd.Timestamp] = []
    out = []
    for c in cands:
        if c.kind == D.ARTIFACT:
            at = pd.Timestamp(c.segment.split()[-1])
            if any(abs((at - x).days) <= 62 for x in seen):
                continue  # the same switch seen through another status column
            seen.append(at)
        elif switches and c.kind in ("change_point", "trend"):
            dates = [pd.Timestamp(x) for x in _DATE.findall(c.name + " " + c.description)]
            if any(abs((d - sw).days) <= 62 for d in dates for sw in switches):
                continue
        out.append(c)
    return out


def _dedupe(cands: list[D.Candidate]) -> list[D.Candidate]:
    """One candidate per fact. Same count SQL, same kind and segment of a table, or the same
    number of defective rows in a table: the same fact seen by two probes. Best first wins; a spread
    effect gives way to a kept segment outlier of its highest or lowest group (said in its words)."""
    seen: set = set()
    kept: dict[int, D.Candidate] = {}
    order = list(enumerate(cands))  # already sorted best first
    for phase in ("others", "group_effect"):
        tops = {("top", c.table, c.measure, c.segment) for c in kept.values()
                if c.kind in ("outlier_segment", "mean_outlier") and c.measure and c.segment}
        for i, c in order:
            if (c.kind == "group_effect") != (phase == "group_effect"):
                continue
            if c.kind == "group_effect" and any(("top", c.table, c.measure, g) in tops for g in c.groups):
                continue
            keys = _fact_keys(c)
            if keys & seen:
                continue
            seen |= keys
            kept[i] = c
    return [kept[i] for i in sorted(kept)]


def _fact_keys(c: D.Candidate) -> set:
    # one finding per segment; two measures of one segment counted by one SQL are two findings
    # how a segment moves over time is its own finding beside its level: "Fred Luddy has a higher average
    # TTR" and "Fred Luddy's TTR is increasing over time", "Hardware incidents are higher" and "spiked in
    # 2023-08"; the table's burst and its segment's burst in the same periods are one
    # (a trend and a level shift of one segment are one movement over time: the better one is kept)
    # (a change point of a rate or a measure is a movement over time too: "ios purchases fail more" and "ios
    # failures rose from June" are a level and its movement, and the movement, the more telling, was lost to the
    # level's stronger p; a segment's row count stepping up is mostly the table's own growth, and stays one
    # fact with the segment's level)
    moving = (D.Kind.SPIKE, D.Kind.TREND) + (() if _volume_change(c) else (D.Kind.CHANGE_POINT,))
    over_time = c.kind if c.kind in moving else ""
    if c.kind == D.Kind.CROSSTAB:  # another column's mix within the segment is a fact of its own beside the
        over_time = f"mix {c.area_text}"  # segment's level ("Completed goals: more Critical priority")
    keys = {("sql", c.count_sql or c.name, "" if c.kind == "outlier_segment" else c.measure),
            ("seg", c.table, c.segment, over_time)}
    if c.kind in (D.Kind.TREND, D.Kind.CHANGE_POINT) and c.segment is not None:
        keys.add(("moves", c.table, c.segment))
    if c.kind == D.Kind.SPIKE:
        keys.add(("spike", c.table, c.measure, next((i for i in c.indicators if i.startswith("window =")), c.name)))
    if c.kind == "data_quality" and c.affected is not None:
        keys.add(("dq", c.table, c.affected))
    if c.segment is None:
        keys = {k for k in keys if k[:3] != ("seg", c.table, None)}
    elif "=" in c.segment:  # Hardware by category and Hardware by assignment group: one fact
        # (an outlier segment is one fact whatever its measure)
        keys.add(("value", c.table, c.kind, "" if c.kind == "outlier_segment" else c.measure,
                  c.segment.split("=", 1)[1]))
    return keys


def _volume_change(c: D.Candidate) -> bool:
    """A change point of a segment's monthly row count or active entities (``<table> <dim> <seg> n monthly``)."""
    parts = c.area_text.split()
    return c.kind == D.Kind.CHANGE_POINT and len(parts) >= 2 and parts[-1] == "monthly" and parts[-2] in ("n", "entities")


def volume_trend(c: D.Candidate) -> bool:
    """A steady trend of a monthly row count or of the active entities (not of a measure)."""
    if c.kind != "trend":
        return False
    measure = c.measure
    if not measure:  # the series detector states its measure only in the text it is matched by
        parts = c.area_text.split()
        measure = parts[1] if len(parts) == 3 and parts[2] == "trend" else ""
    return measure in ("n", "entities")


_OUTLIER_KINDS = ("outlier_segment", "mean_outlier", "retention_drop", "funnel_drop", "funnel_gain")


def fold_spreads_into_outliers(cands: list[D.Candidate]) -> list[D.Candidate]:
    """A spread effect whose highest or lowest group is a segment already reported as an outlier of the
    same table (whatever its measure) is that segment seen through another measure: one finding. It
    is folded into the outlier's insight as a supporting line, not reported twice ("level 42 has the
    lowest moves left" next to "level 42 has a much lower win rate"). When a goal has set relevances, a
    spread of another measure closer to the question than its host stays its own finding (the spread of
    life expectancy across continents is not a line under Oceania's higher GDP when life expectancy is asked)."""
    outliers = {(c.table, c.segment): c for c in cands if c.kind in _OUTLIER_KINDS and c.segment}
    out = []
    for c in cands:
        host = next((outliers[(c.table, g)] for g in c.groups if (c.table, g) in outliers), None) \
            if c.kind == "group_effect" else None
        if host is not None and c.measure != host.measure and c.relevance > host.relevance + FOLD_MARGIN:
            host = None
        if host is None:
            out.append(c)
            continue
        host.indicators = list(host.indicators) + [f"also: {c.name}"]
        host.description = f"{host.description} Also: {c.name}."
    return out


_DIRECTION = re.compile(r"\b(lower|higher)\b")


def _outlier_group(c: D.Candidate) -> tuple | None:
    """Outlier segments of one measure and dimension in one direction are one finding."""
    if c.kind not in ("outlier_segment", "mean_outlier") or not c.segment or "=" not in c.segment:
        return None
    m = _DIRECTION.search(c.name)
    return (c.kind, c.table, c.measure, c.segment.split("=", 1)[0], m.group(1) if m else "") if m else None


def _count_sql_for(segments: list[D.Candidate]) -> str | None:
    """The count query of several segments of one dimension: the first's, with ``dim = v`` widened to
    ``dim IN (v1, v2, ...)``; None when it does not have that form."""
    import sqlglot
    from sqlglot import exp

    first = segments[0]
    dim = first.segment.split("=", 1)[0]
    values = [c.segment.split("=", 1)[1] for c in segments]
    try:
        tree = sqlglot.parse_one(first.count_sql or "", read="duckdb")
    except Exception:
        return None
    hit = [e for e in tree.find_all(exp.EQ) if isinstance(e.this, exp.Column) and e.this.name == dim
           and isinstance(e.expression, exp.Literal) and str(e.expression.this) == values[0]]
    if len(hit) != 1:
        return None
    lit = hit[0].expression
    lits = [exp.Literal(this=v, is_string=lit.is_string) for v in values]
    hit[0].replace(exp.In(this=hit[0].this.copy(), expressions=lits))
    return tree.sql(dialect="duckdb")


def merge_segment_outliers(cands: list[D.Candidate]) -> tuple[list[D.Candidate], dict[int, list[D.Candidate]]]:
    """Several segments far from the rest on one measure, in one direction, are one finding ("furniture
    and electronics have a much higher average unit price"): the best keeps its place and names them
    all, its count covers them all. Returns the candidates and, per merged one, its members."""
    groups: dict[tuple, list[D.Candidate]] = {}
    for c in cands:
        if (k := _outlier_group(c)) is not None:
            groups.setdefault(k, []).append(c)
    members: dict[int, list[D.Candidate]] = {}
    out = []
    for c in cands:
        k = _outlier_group(c)
        g = groups.get(k) if k is not None else None
        if not g or len(g) == 1:
            out.append(c)
            continue
        if c is not g[0]:
            continue
        count_sql = _count_sql_for(g)
        if count_sql is None:
            out.extend(g)
            groups.pop(k)
            continue
        segs = [x.segment.split("=", 1)[1] for x in g]
        named = ", ".join(segs[:-1]) + f" and {segs[-1]}"
        merged = D.Candidate(**{**asdict(c), "indicators": [i for x in g for i in x.indicators if not i.startswith("unit:")]
                                + [i for i in c.indicators if i.startswith("unit:")]})
        lead = re.match(rf"^{re.escape(segs[0])} (has|{re.escape(c.table)} have) ", c.name)
        if lead:  # "furniture has" -> "furniture and electronics have"; "Low goals have" -> "Low and Medium goals have"
            subject = f"{named} have " if lead.group(1) == "has" else f"{named} {c.table} have "
            merged.name = subject + c.name[lead.end():]
        merged.description = " ".join(x.description for x in g)
        merged.count_sql = count_sql
        merged.affected = None
        merged.effect = max(x.effect for x in g)
        merged.area_text = " ".join(x.area_text for x in g)
        members[id(merged)] = g
        out.append(merged)
    return out, members


def insight_segment(c: D.Candidate, members: dict[int, list[D.Candidate]]) -> str | None:
    """The segment an insight names: a merged finding's is every member's ("category=furniture, electronics"),
    as its count covers them all (session 15: the count of furniture and electronics, 4,209, was labelled
    "category=furniture", whose own count is 1,785); the candidate's ``segment`` stays the first's, the key
    the merging and the de-duplication go by."""
    group = members.get(id(c))
    if not group:
        return c.segment
    dim = group[0].segment.split("=", 1)[0]
    return f"{dim}=" + ", ".join(x.segment.split("=", 1)[1] for x in group)


def _claims(s, c: D.Candidate, steps: dict[int, ExplorationStep], frames: dict) -> list[Claim]:
    """The candidate's headline number as a claim with its generated SQL (see ``claims``)."""
    step = steps.get(c.step)
    if step is None:
        return []
    if c.step not in frames:
        df = _frame(s, step)
        if df is not None and "month" in df:
            df["month"] = pd.to_datetime(df["month"])
        frames[c.step] = df
    try:
        return candidate_claims(c, step, frames[c.step], s.warehouse.dialect)
    except Exception as exc:  # one odd result must not sink the area: its count is still checked
        s.store.log_candidate_error(s.run_id, c.step, f"claim: {type(exc).__name__}: {exc}")
        return []


def _count(s, sql: str | None) -> int | None:
    if not sql:
        return None
    out = s.executor.run(portable(sql, s.warehouse.dialect), fix=False, purpose="statistical")
    if not out.ok or out.result.table.num_rows != 1:
        return None
    val = next(iter(out.result.table.to_pylist()[0].values()))
    return int(val) if val is not None else None


def detect_all(s, steps: list[ExplorationStep], on_error) -> list[D.Candidate]:
    """Candidates from every successful probe step; a step whose detection fails is reported to
    ``on_error(step_no, message)`` and skipped (one odd result must not sink the rest)."""
    cands: list[D.Candidate] = []
    for st in steps:
        if st.ok and st.probe:
            try:
                with warnings.catch_warnings():  # tests on near-constant series: their p says so
                    warnings.simplefilter("ignore", RuntimeWarning)
                    cands += detect(s, st)
            except Exception as exc:
                on_error(st.step, f"{type(exc).__name__}: {exc}")
    return cands


def worth_reporting(cands: list[D.Candidate], goal: str) -> list[D.Candidate]:
    """The candidates that are findings (not findings of no effect, not descriptions of the data)."""
    # how rows spread over a dimension describes the data; it is a finding when a goal asks about it
    findings = [c for c in cands if c.kind != D.NO_EFFECT and (goal or c.kind not in D.DESCRIPTIVE_KINDS)]
    if not goal:  # unasked, a spread effect must be large to be worth a line
        findings = [c for c in findings if c.kind != "group_effect" or c.effect >= D.MIN_UNASKED_EFFECT]
        # ...and how many rows (or active entities) a month holds describes the data's volume, usually the
        # base growing: a finding when a goal asks about it, as a spread is
        findings = [c for c in findings if not volume_trend(c)]
    else:  # asked, a small one must at least be clear of chance among the many spreads a run tests
        findings = [c for c in findings if c.kind != "group_effect" or c.effect >= D.MIN_UNASKED_EFFECT
                    or (c.p_value is not None and c.p_value <= D.SMALL_SPREAD_P)]
    # small reference tables (airports, products) describe the catalogue, not the question
    return [c for c in findings if not (c.catalogue and (goal or c.kind == "group_effect"))]


def run_candidates(s) -> tuple[list[D.Candidate], list[str]]:
    """Every scored candidate of the run, with its area (computed once, cached in the store)."""
    with _lock(s.run_id):
        area_ids = [a.id for a in s.pack.areas]
        items = s.store.get_candidates(s.run_id, area_ids)  # re-assigned when a rerun adds an area
        if items is not None:
            return [D.Candidate(**{k: v for k, v in c.items() if k != "area"}) for c in items], \
                [c["area"] for c in items]
        cands = detect_all(s, s.store.steps(s.run_id),
                           lambda step, err: s.store.log_candidate_error(s.run_id, step, err))
        scored = D.score(cands)
        for c in scored:
            c.affected = _count(s, c.count_sql)
        scored = drop_artifact_echoes(_dedupe(scored))
        goal = s.run.goal or (s.pack.description if s.pack.name == "goal" else "")
        if goal and scored:
            rank_by_goal(s, goal, scored)  # relevances only: a spread closer to the question is not folded away
        scored = fold_spreads_into_outliers(scored)
        areas = assign_areas(s, scored)
        s.store.put_candidates(s.run_id, [{**asdict(c), "area": a} for c, a in zip(scored, areas)], area_ids)
        return scored, areas


def assign_areas(s, cands: list[D.Candidate]) -> list[str]:
    areas = s.pack.areas
    if not cands or not areas:
        return []
    texts = [f"{c.name}. {c.description} {c.area_text}" for c in cands]
    cv = s.embedder.embed(texts)
    av = s.embedder.embed([area_query(a) for a in areas])
    sims = cv @ av.T
    out = []
    for i in range(len(cands)):
        text = texts[i].lower()
        bonus = np.array([0.15 * sum(1 for k in a.keywords if k.lower() in text) for a in areas])
        out.append(areas[int(np.argmax(sims[i] + np.minimum(bonus, 0.45)))].id)
    return out


def _closest(s, goal: str, cands: list[D.Candidate], k: int) -> list[D.Candidate]:
    if not cands or k <= 0:
        return []
    sims = s.embedder.embed([c.name for c in cands]) @ s.embedder.embed([goal])[0]
    return [cands[i] for i in np.argsort(-sims)[:k]]


def measure_text(c: D.Candidate) -> str:
    """What a candidate measures, in words, for its similarity to the goal: an average's or a total's column, and an
    outcome's rate as the table's rows in it ("appointments no show", "invoices failed"): "no show rate" alone is
    nothing like "which patients miss their appointments" (cosine -0.01 against 0.59), so Eastside's no-show rate was
    dropped as off the question (a judge's clinic, session 28)."""
    from .columns import expand

    m = c.measure
    if m[:4] in ("avg_", "sum_"):
        return expand(m.split("_", 1)[1])
    if m.endswith("_rate"):
        return f"{c.table} {expand(m[:-5])}"
    return expand(m)


def rank_by_goal(s, goal: str, cands: list[D.Candidate]) -> list[D.Candidate]:
    """Findings about the question first: each candidate's score weighted by the similarity of its
    headline and the columns it is about to the goal (findings of no effect keep their place last)."""
    if not cands:
        return cands
    from .columns import expand_text

    g = s.embedder.embed([expanded_goal(goal, cands)])[0]
    sims = s.embedder.embed([expand_text(f"{c.name}. {c.area_text}") for c in cands]) @ g
    texts = sorted({measure_text(c) for c in cands if c.measure})
    msim = dict(zip(texts, (s.embedder.embed(texts) @ g) if texts else []))
    for c, sim in zip(cands, sims):
        # what is measured counts as much as what the headline says: a count of rows per carrier is
        # not the carriers' delays
        c.relevance = round(float(min(sim, msim[measure_text(c)])) if c.measure else float(sim) * 0.75, 4)
    real = [c for c in cands if c.kind != D.NO_EFFECT]
    nulls = [c for c in cands if c.kind == D.NO_EFFECT]
    weight = {k: 0.35 for k in D.DESCRIPTIVE_KINDS}
    # what answers the question first, then the rest, each by score weighted by relevance
    real.sort(key=lambda c: (c.relevance < D.GOAL_RELEVANT,
                             -(c.score * weight.get(c.kind, 1.0) * (0.1 + max(c.relevance, 0.0)) ** 2), c.name))
    return real + nulls


def expanded_goal(goal: str, cands: list[D.Candidate]) -> str:
    from .columns import expand_acronyms, expand_text

    return expand_acronyms(goal, [expand_text(c.name) for c in cands])


_UNIFORM = re.compile(r"^The (.+) is uniform across (.+) values$")


def merge_no_effects(nulls: list[D.Candidate]) -> list[D.Candidate]:
    """One line per measure: "the average tax is uniform across ship mode and ship instructions values"
    rather than one per dimension (the first of each measure keeps its place)."""
    out: list[D.Candidate] = []
    by_key: dict[tuple, tuple[D.Candidate, list[str]]] = {}
    for c in nulls:
        m = _UNIFORM.match(c.name)
        if not m:
            out.append(c)
            continue
        key = (c.table, m.group(1))
        if key not in by_key:
            first = D.Candidate(**{**asdict(c), "indicators": list(c.indicators)})
            by_key[key] = (first, [m.group(2)])
            out.append(first)
            continue
        first, dims = by_key[key]
        dims.append(m.group(2))
        first.name = f"The {m.group(1)} is uniform across {', '.join(dims[:-1])} and {dims[-1]} values"
        first.description += " " + c.description
        first.p_value = min(first.p_value, c.p_value)
    return out


_STILL = re.compile(r"^The (.+) for each (.+) value remains uniform over time$")


def merge_still_over_time(nulls: list[D.Candidate]) -> list[D.Candidate]:
    """One line per measure for "... for each X value remains uniform over time": the same statement made
    through several dimensions is one finding of no effect, not one per dimension (the first keeps its place)."""
    out: list[D.Candidate] = []
    by_key: dict[tuple, tuple[D.Candidate, list[str]]] = {}
    for c in nulls:
        m = _STILL.match(c.name)
        if not m:
            out.append(c)
            continue
        key = (c.table, m.group(1))
        if key not in by_key:
            first = D.Candidate(**{**asdict(c), "indicators": list(c.indicators)})
            by_key[key] = (first, [m.group(2)])
            out.append(first)
            continue
        first, dims = by_key[key]
        dims.append(m.group(2))
        first.name = f"The {m.group(1)} for each {', '.join(dims[:-1])} and {dims[-1]} value remains uniform over time"
        first.description += " " + c.description
        first.p_value = min(first.p_value, c.p_value)
        first.relevance = max(first.relevance, c.relevance)
    return out


def cap_off_goal(cands: list[D.Candidate], keep: int = MAX_OFF_GOAL) -> list[D.Candidate]:
    """A report that answers a question keeps a few other strong findings, not a page of them (an
    artifact of how the data was made stays: it bears on every answer)."""
    real = [c for c in cands if c.kind not in (D.NO_EFFECT, D.ARTIFACT)]
    off = [c for c in real if c.relevance < D.GOAL_RELEVANT]
    if len(real) - len(off) < ANSWERED:
        return cands  # nothing found answers the question: what was found is the report
    drop = {id(c) for c in off[keep:]}
    return [c for c in cands if id(c) not in drop]


def analyze_area_statistically(s, area: AnalysisArea, picked: list[ExplorationStep]) -> list[Insight]:
    scored, areas = run_candidates(s)
    goal = s.run.goal or (s.pack.description if s.pack.name == "goal" else "")
    mine = [c for c, a in zip(scored, areas) if a == area.id]
    # several segments apart in one direction on one measure are one finding before any is ranked or capped
    # (a report that keeps "Low goals have a higher Completed rate" must not lose Medium's half of it to the cap)
    mine, members = merge_segment_outliers(mine)
    if goal:
        mine = cap_off_goal(rank_by_goal(s, goal, mine))
    findings = worth_reporting(mine, goal)
    if goal:
        # a goal asks a question: what is not the case is part of the answer (at most MAX_NO_EFFECT of
        # those findings, the ones closest to the goal)
        # ... about the question's measures, never about a reference table
        still = merge_still_over_time([c for c in mine if c.kind == D.NO_EFFECT and not c.catalogue
                                       and c.relevance >= D.NO_EFFECT_RELEVANT])
        nulls = _closest(s, expanded_goal(goal, mine), still, MAX_NO_EFFECT)
        nulls = merge_no_effects(nulls)
        findings = findings[:MAX_INSIGHTS_GOAL - len(nulls)] + nulls
    mine = findings[:MAX_INSIGHTS_GOAL if len(s.pack.areas) == 1 else MAX_INSIGHTS_PER_AREA]
    steps = {st.step: st for st in s.store.steps(s.run_id)}
    frames: dict = {}
    insights = []
    for n, c in enumerate(mine, start=1):
        if id(c) in members and c.affected is None:
            c.affected = _count(s, c.count_sql)
        count = c.affected
        claims = [x for m in members.get(id(c), [c]) for x in _claims(s, m, steps, frames)]
        insights.append(Insight(
            id=f"{area.id}-{n}", area=area.id, name=c.name, description=c.description,
            severity=Severity(D.severity(c, goal=bool(goal))), affected_count=count, risk_score=round(c.effect, 3),
            confidence=round(max(0.0, min(1.0, 1 - c.q_value)), 3), indicators=c.indicators,
            source_steps=[c.step], segment=insight_segment(c, members), claims=claims,
            verification_sql=portable(c.count_sql, s.warehouse.dialect) if c.count_sql else None,
        ))
    return insights
