"""Sums as claims: a total of a column or expression over the segment's rows ("revenue of paid_social customers is
$1.2M", round 10: every model asked for it, and "total" then parsed as a count of rows).

A sum claim (metric ``sum``) names what is summed as a SQL expression (``sum_sql``: ``oi.quantity * oi.unit_price``
for revenue) beside its measure in words; ``value`` is the total over the segment's rows within the period,
``baseline_value`` over the baseline's. The verifier is shown the aggregate in its warehouse's dialect
(``sum_expression``, through sqlglot) and re-derives it blind; a query that sums nothing, or sums another expression
(the unit price without the quantity), measures something else and is refused (``off_sum``). Tolerances are the
mean's (``compare.within``: 10% relative, the comparison's direction must hold).

Grounding (``grounding.sum_numbers``): a total read off a step's rows (the paid_social rows of a revenue-by-channel-
and-month result, added up) is recomputed by code on the cited step's stored rows, the segment's condition applied
to them, as a share of a stated whole is.
"""

from __future__ import annotations

from ..models import Claim


def sum_expression(sum_sql: str, dialect: str | None = None) -> str:
    """SUM of the stated expression, written for ``dialect`` (DuckDB's form otherwise or when it does not parse)."""
    text = f"SUM({sum_sql})"
    if not dialect or dialect == "duckdb":
        return text
    import sqlglot

    try:
        return sqlglot.transpile(text, read="duckdb", write=dialect)[0]
    except Exception:
        return text


def _summing(sql: str, claim: Claim, dialect: str | None):
    """The query parsed, its SUM calls, the claim's ``sum_sql``, the columns that reads and the query's aliases;
    None when the query does not parse (it fails when it runs)."""
    import sqlglot
    from sqlglot import exp

    from .conditions import condition_columns
    from .fit import _aliases

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return None
    stated = (claim.sum_sql or "").strip()
    want = condition_columns(f"({stated}) IS NOT NULL", dialect) if stated else set()
    return tree, list(tree.find_all(exp.Sum)), stated, want, _aliases(tree)


def off_sum(sql: str, claim: Claim, dialect: str | None = None) -> list[str]:
    """What of a sum's definition the verification query leaves out: a SUM call (a count of rows is no total), and,
    when the claim states ``sum_sql``, a SUM over an expression that reads every column of it (directly or through a
    column a CTE or subquery names)."""
    from .fit import _reads

    if (parsed := _summing(sql, claim, dialect)) is None:
        return []
    tree, sums, stated, want, aliases = parsed
    if not sums:
        return [f"sum (SUM({stated or 'the summed column'}): the query sums nothing)"]
    if _divided(tree, want, aliases):
        return [f"sum (SUM({stated or 'the summed column'}) as it is: the query divides it, an average or a "
                "ratio is no total)"]
    if not want:
        return []
    if any(_reads(s.this, want, aliases) for s in sums):
        return []
    return [f"summed expression (SUM({stated}): the query sums another expression)"]


def off_share(sql: str, claim: Claim, dialect: str | None = None) -> list[str]:
    """What of a share of a total (``sum_sql`` stated: a share of revenue, or its change) the verification query
    leaves out: the part and the whole are SUMs of that expression, so the query sums it and divides a sum of it by
    something (its whole); a share of rows (count over count) or the bare total measures something else."""
    from .fit import _reads

    if (parsed := _summing(sql, claim, dialect)) is None:
        return []
    tree, sums, stated, want, aliases = parsed
    if not any(_reads(x.this, want, aliases) for x in sums):
        return [f"share of a total (SUM({stated}) of the part over SUM({stated}) of the whole: the query does not sum "
                "it; a share of rows is another number)"]
    if not _divided(tree, want, aliases):
        return [f"share of a total (SUM({stated}) of the part over SUM({stated}) of the whole: the query divides "
                "nothing; the part's total alone is no share)"]
    return []


def _divided(tree, want: set[str], aliases: dict[str, set[str]]) -> bool:
    """segment_value or baseline_value is the sum divided by something other than a number (a count: an average;
    another sum: a ratio), in the query or through a column a CTE or subquery names; a division inside an aggregate
    (part of the summed expression) or by a number (cents to dollars) keeps it a total."""
    from sqlglot import exp

    from .conditions import _outputs
    from .fit import _reads

    outputs = _outputs(tree)
    for name in ("segment_value", "baseline_value"):
        node = outputs.get(name)
        if node is None:
            continue
        for div in node.find_all(exp.Div, exp.SafeDivide, exp.IntDiv):  # BigQuery's SAFE_DIVIDE, DIV, //
            p, inside = div.parent, False
            while p is not None and p is not node.parent:
                if isinstance(p, exp.AggFunc):
                    inside = True
                    break
                p = p.parent
            den = div.expression
            while isinstance(den, (exp.Paren, exp.Cast)):
                den = den.this
            if inside or isinstance(den, exp.Literal) or (isinstance(den, exp.Neg)
                                                          and isinstance(den.this, exp.Literal)):
                continue
            num = div.this
            if (want and _reads(num, want, aliases)) or (not want and num.find(exp.Sum) is not None):
                return True
    return False
