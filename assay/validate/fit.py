"""Fit statistics as claims: the slope of a linear trend, the correlation r or R² of one numeric expression on
another (round 8's InsightBench model: "closed_at follows the open date almost exactly, R² 0.99999", with no claim
kind to say it in).

A fit claim (metric ``fit``) names its statistic (``slope`` | ``r`` | ``r2``), what is fitted (``y``/``y_sql``) and
on what (``x``/``x_sql``), as SQL expressions; ``value`` is the statistic on the segment's rows, ``baseline_value``
on the baseline's. In SQL: slope = regr_slope(y, x), r = corr(y, x), R² = regr_r2(y, x), y first. DuckDB,
PostgreSQL and Snowflake have all three; BigQuery has CORR only, so ``fit_expression`` (the form the verifier is
shown, ``verify.claim_definition``) writes the slope as covar_pop(y, x) / var_pop(x) and R² as power(corr(y, x), 2)
there (through sqlglot, from the DuckDB form).

Tolerances (``judge_fit``): a slope must have the same sign and be within 10% relative; r and R² within 0.05
absolute, r with the same sign; a claimed relation (|r| ≥ 0.3, R² ≥ 0.09) the warehouse shows as none (|r| < 0.1,
R² < 0.01) is rejected; a comparison of two fits must go the same way (no effect: within 0.05 for r and R², 5%
relative for a slope).

The grounding check recomputes r, R² and the slope by code on a cited step's stored rows (every pair of numeric
columns, and each column against the row's position: a trend over an ordered series), so a fit the model read from
rows it was shown is grounded even when the step did not compute the statistic itself.
"""

from __future__ import annotations

import math

import numpy as np

from ..models import Claim, ExplorationStep, ValidationStatus, normalize_statistic

STATISTICS = ("slope", "r", "r2")

SLOPE_REL_TOL = 0.10
R_ABS_TOL = 0.05
STRONG_R, NONE_R = 0.3, 0.1

# the calls that compute each statistic, as sqlglot types them (an equivalent form is accepted; another statistic is
# not): y is the first argument, x the second; the slope also as covar(y, x) / var(x)
_STAT_CALLS = {"slope": ("RegrSlope",), "r": ("Corr",), "r2": ("RegrR2", "Corr")}
_FORM = {"slope": "regr_slope(y, x)", "r": "corr(y, x)", "r2": "regr_r2(y, x)"}


def statistic_of(claim: Claim) -> str:
    return normalize_statistic(claim.statistic) or "r"


def fit_expression(stat: str, y: str, x: str, dialect: str | None = None, where: str | None = None) -> str:
    """The SQL of the statistic of ``y`` on ``x`` (optionally FILTERed), in ``dialect`` (DuckDB's form otherwise)."""
    filt = f" FILTER (WHERE {where})" if where else ""
    if dialect == "bigquery":  # no regr_* there: the same statistics from corr, covar_pop and var_pop
        import sqlglot

        cond = (lambda e: f"IF({where}, {e}, NULL)") if where else (lambda e: e)
        yy, xx = cond(y), cond(x)
        text = {"slope": f"COVAR_POP({yy}, {xx}) / NULLIF(VAR_POP({xx}), 0)", "r": f"CORR({yy}, {xx})",
                "r2": f"POWER(CORR({yy}, {xx}), 2)"}[stat]
        return sqlglot.transpile(text, read="duckdb", write="bigquery")[0]
    fn = {"slope": "regr_slope", "r": "corr", "r2": "regr_r2"}[stat]
    return f"{fn}({y}, {x}){filt}"


def _aliases(tree) -> dict[str, set[str]]:
    """The columns each renamed column reads (``conditions.renames_of``: a CTE's or subquery's ``... AS day``)."""
    from .conditions import _columns, renames_of

    return {name: set().union(*(_columns(d) for d in defs)) for name, defs in renames_of(tree).items()}


def _reads(node, want: set[str], aliases: dict[str, set[str]]) -> bool:
    """The expression reads every column of ``want``, directly or through a column a CTE or subquery names
    (``day`` for ``date_diff('day', ..., opened_at) AS day``)."""
    if node is None:
        return False
    from .conditions import _columns

    cols = _columns(node)
    for _ in range(3):  # a few levels of renaming
        cols |= {x for c in list(cols) for x in aliases.get(c, ())}
    return want <= cols


def off_fit(sql: str, claim: Claim, dialect: str | None = None) -> list[str]:
    """What of a fit's definition the verification query leaves out: a call of the statistic's function (the
    parsed query's, never a word in a comment), or the stated y as its first argument and x as its second (either
    order for r and R², which are symmetric; y first for a slope, whose swap is the slope of x on y)."""
    import sqlglot
    from sqlglot import exp

    from .conditions import condition_columns

    stat = statistic_of(claim)
    if stat not in _STAT_CALLS:
        return []
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return []  # a query that does not parse fails when it runs
    aliases = _aliases(tree)
    want = {n: (condition_columns(f"({t}) IS NOT NULL", dialect) if (t or "").strip() else set())
            for n, t in (("y", claim.y_sql), ("x", claim.x_sql))}
    y, x = want["y"], want["x"]
    calls = [(f.this, f.expression) for f in tree.find_all(exp.Func) if type(f).__name__ in _STAT_CALLS[stat]]
    if stat == "slope":  # covar(y, x) / var(x): the slope where a dialect has no regr_slope
        var_x = any(_reads(v.this, x, aliases) for v in tree.find_all(exp.VariancePop, exp.Variance))
        calls += [(c.this, c.expression) for c in tree.find_all(exp.CovarPop, exp.CovarSamp) if var_x] + \
                 [(c.expression, c.this) for c in tree.find_all(exp.CovarPop, exp.CovarSamp) if var_x]
    if not calls:
        return [f"statistic ({stat}: {_FORM[stat]})"]
    best: list[str] | None = None
    for a, b in calls:
        pairs = [(a, b)] if stat == "slope" else [(a, b), (b, a)]
        for first, second in pairs:
            miss = [f"{n} ({t})" for n, t, node in (("y", claim.y_sql, first), ("x", claim.x_sql, second))
                    if want[n] and not _reads(node, want[n], aliases)]
            if not miss:
                return []
            if best is None or len(miss) < len(best):
                best = miss
    if stat == "slope" and len(best or []) == 2 and any(_reads(a, x, aliases) and _reads(b, y, aliases)
                                                        for a, b in calls):
        return [f"y and x in that order ({_FORM[stat]}: y = {claim.y_sql}, x = {claim.x_sql}; swapped it is the "
                "slope of x on y)"]
    return best or []


def _sign(v: float) -> int:
    return 0 if v == 0 else (1 if v > 0 else -1)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g}"


def _close(stat: str, claimed: float, found: float) -> bool:
    if stat == "slope":
        return abs(found - claimed) <= SLOPE_REL_TOL * abs(claimed) + 1e-12
    return abs(found - claimed) <= R_ABS_TOL + 1e-12


def _apart(stat: str, a: float, b: float) -> int:
    """+1 a above b, -1 below, 0 no effect (the comparison of two fits)."""
    if stat == "slope":
        if abs(a - b) <= 0.05 * max(abs(a), abs(b)):
            return 0
    elif abs(a - b) <= R_ABS_TOL:
        return 0
    return 1 if a > b else -1


def _no_relation(stat: str, claimed: float, found: float) -> bool:
    if stat == "r":
        return abs(claimed) >= STRONG_R and abs(found) < NONE_R
    if stat == "r2":
        return claimed >= STRONG_R ** 2 and found < NONE_R ** 2
    return False


def judge_fit(claim: Claim, seg: float | None, base: float | None) -> tuple[ValidationStatus, str]:
    stat = statistic_of(claim)
    if stat not in STATISTICS:
        return ValidationStatus.error, f"unknown fit statistic {claim.statistic!r} (slope, r or r2)"
    c_val, c_base = claim.value, claim.baseline_value
    if stat == "r2":  # R² written as a percent (99.9 for 0.999)
        c_val, c_base = [v / 100 if v is not None and 1 < v <= 100 else v for v in (c_val, c_base)]
    said = f"claimed {stat} {_fmt(c_val)}" + (f" vs {_fmt(c_base)}" if c_base is not None else "")
    found = f"warehouse {_fmt(seg)}" + (f" vs {_fmt(base)}" if base is not None else "")
    sides = [(c_val, seg)]
    if c_base is not None:
        if base is None:
            return ValidationStatus.error, f"{said}; the query returned no baseline value"
        sides.append((c_base, base))
        if _apart(stat, c_val, c_base) != _apart(stat, seg, base):
            return ValidationStatus.rejected, f"{said}; {found}: the comparison goes the other way"
    for c, f in sides:
        if stat in ("slope", "r") and _sign(c) != _sign(f) and not (stat == "r" and abs(c) < NONE_R
                                                                   and abs(f) < NONE_R):
            return ValidationStatus.rejected, f"{said}; {found}: the direction is wrong"
        if _no_relation(stat, c, f):
            return ValidationStatus.rejected, f"{said}; {found}: no relation"
    if all(_close(stat, c, f) for c, f in sides):
        return ValidationStatus.confirmed, f"{said}; {found}"
    return ValidationStatus.adjusted, f"{said}; {found}: same direction, different values"


# --- grounding: the statistics recomputed on a cited step's stored rows ----------------------------

MAX_COLUMNS = 12


def _stats(y: np.ndarray, x: np.ndarray) -> list[float]:
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0:
        return []
    slope = float(np.polyfit(x, y, 1)[0])
    if np.ptp(y) == 0:
        return [slope]
    r = float(np.corrcoef(x, y)[0, 1])
    return [slope, r, r * r] if math.isfinite(r) else [slope]


def _column(rows: list[dict], name: str) -> np.ndarray:
    out = []
    for r in rows:
        v = r.get(name)
        if isinstance(v, bool) or v is None:
            out.append(np.nan)
            continue
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(np.nan)
    return np.asarray(out, dtype=float)


def fit_numbers(step: ExplorationStep) -> list[float]:
    """The slope, r and R² of every pair of numeric columns of the step's stored rows (each way), and of each column
    on the row's position (a trend over the rows as ordered)."""
    d = step.digest
    if d is None or not step.ok:
        return []
    rows = d.all_rows or d.rows()
    if len(rows) < 3:
        return []
    names = [k for k in dict.fromkeys(k for r in rows for k in r)]
    cols = {n: c for n in names if np.isfinite(c := _column(rows, n)).sum() >= 3}
    cols = dict(list(cols.items())[:MAX_COLUMNS])
    out: list[float] = []
    pos = np.arange(len(rows), dtype=float)
    for ny, y in cols.items():
        out += _stats(y, pos)
        for nx, x in cols.items():
            if nx != ny:
                out += _stats(y, x)
    return out
