"""Grounding check: every number of a claim must come from a cited step's stored result.

Deterministic and free (no LLM, no warehouse). A number is grounded when it equals, within
rounding, a number of a cited step's stored result (a cell, a column statistic, a column total,
the row count), scaled by 100 or not (a rate stored as 0.14 and written as 14%), or when it is
arithmetic on such numbers recomputed here: a difference, a ratio, a relative change, a share.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..models import Claim, ExplorationStep, Insight, MetricKind

MAX_POOL = 400  # numbers of a step kept for the pairwise arithmetic (head rows first)


# a date or timestamp in prose, and a number as written in prose: 1,785 / -0.111 / 13.4% (not part of an identifier,
# a date or 1.1e-06); read by the report's unchecked numbers and by the leads' figures (findings.stated_numbers)
DATE_TEXT = re.compile(r"\d{4}-\d{2}(?:-\d{2})?(?:[ T]\d{2}:\d{2}(?::\d{2})?)?")
PROSE_NUMBER = re.compile(r"(?<![\w.\-/])-?\d+(?:,\d{3})*(?:\.\d+)?%?(?![\w.]*\w)")


def close(claimed: float, stored: float) -> bool:
    """Equal within rounding: to two significant digits of the claimed number, or 0.5% of it."""
    if claimed == stored:
        return True
    if claimed == 0 or not math.isfinite(claimed) or not math.isfinite(stored):
        return abs(claimed - stored) < 1e-9
    half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(claimed))) - 1)
    return abs(claimed - stored) <= max(half_unit, 0.005 * abs(claimed)) + 1e-12


def _num(v) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, str):
        try:
            f = float(v.replace(",", ""))
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def _unique(nums: list[float]) -> list[float]:
    return list(dict.fromkeys(nums))


def step_numbers(step: ExplorationStep, *, statistics: bool = True) -> list[float]:
    """Every number the step's stored result holds: its cells, column totals and row count, and with
    ``statistics`` its column summaries (quartiles, top-value counts). Arithmetic is done on the
    first kind only: a difference of two quartiles is no number anyone reported."""
    d = step.digest
    if d is None or not step.ok:
        return []
    nums: list[float] = [float(d.row_count)]
    rows = d.rows()
    for r in rows:
        nums += [x for x in map(_num, r.values()) if x is not None]
    if d.all_rows:
        for name in {k for r in d.all_rows for k in r}:
            vals = [x for r in d.all_rows if (x := _num(r.get(name))) is not None]
            if vals:
                nums.append(sum(vals))  # column totals: the denominator of a share
    if statistics:
        for c in d.columns:
            nums += [x for x in (c.min, c.p25, c.median, c.p75, c.max) if x is not None]
            nums += [float(t.count) for t in (c.top or [])]
            nums += [x for t in (c.top or []) if (x := _num(t.value)) is not None]
    return _unique(nums)


def derived(pool: list[float]) -> np.ndarray:
    """Differences, ratios and relative changes of every pair of numbers in the pool."""
    a = np.asarray(pool[:MAX_POOL], dtype=float)
    if a.size == 0:
        return a
    x, y = a[:, None], a[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        parts = [x - y, np.where(y != 0, x / y, np.nan), np.where(y != 0, (x - y) / y, np.nan)]
    out = np.concatenate([p.ravel() for p in parts])
    return out[np.isfinite(out)]


def _in(claimed: float, pool: list[float] | np.ndarray) -> bool:
    for scale in (1.0, 100.0, 0.01):
        c = claimed * scale
        if c == 0:
            if any(v == 0 for v in pool):
                return True
            continue
        half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(c))) - 1)
        tol = max(half_unit, 0.005 * abs(c)) + 1e-12
        arr = np.asarray(pool, dtype=float)
        if arr.size and bool(np.any(np.abs(arr - c) <= tol)):
            return True
    return False


def claim_numbers(claim: Claim) -> list[float]:
    return [v for v in (claim.value, claim.baseline_value) if v is not None]


def ground_claim(claim: Claim, steps: dict[int, ExplorationStep], insight_steps: list[int]) -> list[float]:
    """The claim's numbers that trace to no cited step (empty: grounded). Sets claim.grounded."""
    cited = [n for n in (claim.source_steps or insight_steps) if n in steps]
    pool = _unique([x for n in cited for x in step_numbers(steps[n])])
    nums = claim_numbers(claim)
    direct = [x for x in nums if _in(x, pool)]
    missing = [x for x in nums if x not in direct]
    if missing and pool:
        cells = _unique([x for n in cited for x in step_numbers(steps[n], statistics=False)])
        arithmetic = derived(cells + direct)  # the claim's own grounded numbers: a change of two of them
        missing = [x for x in missing if not _in(x, arithmetic)]
    if missing and claim.metric == MetricKind.share and (claim.whole_sql or "").strip():
        # a share of a stated whole: the part over the whole, recomputed on a cited step's rows
        shares = [x for n in cited for x in share_numbers(steps[n], claim.segment_sql, claim.whole_sql)]
        missing = [x for x in missing if not _in(x, shares)]
    if missing and claim.metric == MetricKind.sum:
        # a total read off a step's rows (the segment's rows added up): recomputed on those rows (validate/sums.py)
        sums = [x for n in cited for x in sum_numbers(steps[n], claim)]
        missing = [x for x in missing if not _in(x, sums)]
    if missing and claim.metric == MetricKind.fit:
        # a slope, r or R² read off the rows a step showed: recomputed by code on those rows (validate/fit.py)
        from .fit import fit_numbers

        fits = [x for n in cited for x in fit_numbers(steps[n])]
        missing = [x for x in missing if not _in(x, fits)]
    claim.grounded = not missing
    claim.ungrounded_numbers = missing
    return missing


def _unqualified(text: str) -> tuple[str, set[str]] | None:
    """A condition with its table qualifiers dropped, and the columns it reads; None when it does not parse, or
    when it is more than a condition on the row: a subquery, or a call off the guard's allow-list (the text is the
    model's, and it runs here outside the warehouse's guard)."""
    import sqlglot
    from sqlglot import exp

    from ..warehouse.functions import FunctionRefused, check_call

    try:
        tree = sqlglot.parse_one(f"SELECT 1 WHERE {text}", read="duckdb").args["where"].this
    except Exception:
        return None
    if tree.find(exp.Query, exp.Subquery, exp.Table) is not None:
        return None
    try:
        for f in tree.find_all(exp.Func):
            check_call(f, "duckdb")
    except FunctionRefused:
        return None
    cols = set()
    for c in tree.find_all(exp.Column):
        c.set("table", None)
        cols.add(c.name)
    return tree.sql(dialect="duckdb"), cols


def _on_rows(step: ExplorationStep, conditions: list[str], parts) -> list[float]:
    """Aggregates computed on the step's stored rows in an in-process DuckDB (no warehouse, external access off):
    ``parts(numeric, conds)`` gives the SELECT list from the numeric columns (quoted identifiers) and the conditions
    with their table qualifiers dropped. Empty when the digest holds only some of the rows, a condition does not
    parse as a row condition or the rows do not carry its columns (grouped by them)."""
    d = step.digest
    # every row of the result, or nothing: a sum over the signal rows a cut digest kept is a part of the total, which
    # no step showed (column totals are counted over every row too: ``step_numbers``)
    if d is None or not step.ok or d.all_rows is None or len(d.all_rows) < d.row_count:
        return []
    rows = d.all_rows
    conds = [_unqualified(t) for t in conditions]
    if not rows or any(c is None for c in conds):
        return []
    names = list(dict.fromkeys(k for r in rows for k in r))
    lower = {n.lower(): n for n in names}
    if not all(c.lower() in lower for cond in conds for c in cond[1]):
        return []
    import pyarrow as pa

    from ..warehouse import sandbox

    try:
        table = pa.Table.from_pylist([{k: r.get(k) for k in names} for r in rows])
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return []
    numeric = [n for n in names if pa.types.is_integer(table.schema.field(n).type)
               or pa.types.is_floating(table.schema.field(n).type) or pa.types.is_decimal(table.schema.field(n).type)]
    # a column name is the rows' (an alias the explorer wrote): one quoted identifier, its quotes doubled
    select = parts(['"' + n.replace('"', '""') + '"' for n in numeric], [c[0] for c in conds])
    if not select:
        return []
    try:  # the conditions are the model's text: the guard for DuckDB over the rows, a sandboxed connection
        out = sandbox.run("SELECT " + ", ".join(select) + " FROM step_rows", {"step_rows": table})
    except ValueError:
        return []
    if out.num_rows == 0:
        return []
    got = [col[0].as_py() for col in out.columns]  # by position: two outputs may share a name
    return [float(v) for v in got if v is not None and math.isfinite(float(v))]


def share_numbers(step: ExplorationStep, segment_sql: str, whole_sql: str) -> list[float]:
    """A share of a stated whole recomputed on the step's stored rows (no warehouse): for each numeric column,
    its sum over the rows of the part (segment and whole) over its sum over the whole's rows, and the same with
    rows counted. Empty when the rows do not carry the conditions' columns (grouped by them)."""
    if not (segment_sql or "").strip():
        return []

    def parts(numeric: list[str], conds: list[str]) -> list[str]:
        s, w = conds
        out = [f"count(*) FILTER (WHERE ({s}) AND ({w})) * 1.0 / nullif(count(*) FILTER (WHERE {w}), 0)"]
        return out + [f'sum({n}) FILTER (WHERE ({s}) AND ({w})) * 1.0 / nullif(sum({n}) FILTER (WHERE {w}), 0)'
                      for n in numeric]
    return _on_rows(step, [segment_sql, whole_sql or "TRUE"], parts)


def sum_numbers(step: ExplorationStep, claim: Claim) -> list[float]:
    """A sum's totals recomputed on the step's stored rows: for each numeric column, its sum over the rows of the
    segment and over the rows of the baseline (each also within the period when the rows carry the period's
    columns: a result grouped by month and channel, added up over the channel's months)."""
    def parts(numeric: list[str], conds: list[str]) -> list[str]:
        where = " AND ".join(f"({x})" for x in conds)
        return [f"sum({n}) FILTER (WHERE {where})" for n in numeric]

    out: list[float] = []
    for cond in (claim.segment_sql, claim.baseline_sql):
        if not (cond or "").strip():
            continue
        variants = [[cond]] + ([[cond, claim.period_sql]] if (claim.period_sql or "").strip() else [])
        for conds in variants:
            out += _on_rows(step, conds, parts)
    return out


def ground_insight(insight: Insight, steps: dict[int, ExplorationStep]) -> bool:
    """Check every claim of the insight (and its affected count); flags the insight ``ungrounded``
    when any number traces to nothing. Returns True when every number is grounded."""
    ok = True
    for c in insight.claims:
        if c.verification_sql:
            # computed by code from the step's stored rows with its own query (the statistical analyst):
            # grounded by construction; the warehouse re-runs that query
            c.grounded, c.ungrounded_numbers = True, []
            continue
        if ground_claim(c, steps, insight.source_steps):
            ok = False
    if insight.affected_count is not None and insight.verification_sql is None:
        # an LLM's affected count must come from a result too (the statistical analyst computes its own)
        probe = Claim(metric="count", value=float(insight.affected_count))
        if ground_claim(probe, steps, insight.source_steps):
            ok = False
    insight.ungrounded = not ok
    return ok


VERIFIER_FIELDS = ("verification_sql", "grounded", "ungrounded_numbers", "verdict", "verified_value",
                   "verified_baseline_value", "query", "reasoning")


def as_drafted(claims: list[dict], known: set[int]) -> list[dict]:
    """Claims as an analyst LLM may state them: what only the verifier sets is dropped, and cited
    steps the area was not shown are removed."""
    out = []
    for c in claims:
        c = {k: v for k, v in c.items() if k not in VERIFIER_FIELDS}
        c["source_steps"] = [n for n in c.get("source_steps") or [] if n in known]
        out.append(c)
    return out
