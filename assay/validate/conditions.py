"""Does a verification query apply the claim's stated conditions?

A claim states its segment, baseline and period as SQL conditions. A re-derivation that leaves one
out (the period forgotten, the baseline taken over every row) measures something else, and a
number it happens to match would be confirmed for the wrong reason. Each comparison of a stated
condition (column, operator, literals; table qualifiers ignored) must appear in the query's tree.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

_ATOMS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Is, exp.Between, exp.Like, exp.ILike)
_FLIP = {"GT": "LT", "GTE": "LTE", "LT": "GT", "LTE": "GTE"}


def _atom(node: exp.Expression) -> tuple | None:
    cols = tuple(sorted({c.name.lower() for c in node.find_all(exp.Column)}))
    lits = tuple(sorted({str(v.this).lower() for v in node.find_all(exp.Literal)}))
    if not cols:
        return None
    op = type(node).__name__
    if op in _FLIP and isinstance(node.this, exp.Literal | exp.Cast):  # 5 < x is x > 5
        op = _FLIP[op]
    return op, cols, lits


def atoms(tree: exp.Expression, renames: dict[str, list[exp.Expression]] | None = None) -> set[tuple]:
    """The comparisons of a tree as (operator, columns, literals). With ``renames`` (a query's renamed columns,
    ``renames_of``), also each comparison with a renamed column read as the expression it names."""
    out = {a for n in tree.find_all(*_ATOMS) if (a := _atom(n)) is not None}
    if renames:
        for n in list(tree.find_all(*_ATOMS)):
            for v in _expanded(n, renames)[1:]:  # with the comparisons inside what a renamed column names
                out |= {a for m in v.find_all(*_ATOMS) if (a := _atom(m)) is not None}
    return out


MAX_VARIANTS = 16


def renames_of(tree: exp.Expression) -> dict[str, list[exp.Expression]]:
    """The columns a query defines under another name: ``date_diff('day', installed_at, ...) AS last_day`` in a
    CTE or subquery, read by ``WHERE last_day < 1`` outside it. A projection that keeps its column's name is no
    rename."""
    out: dict[str, list[exp.Expression]] = {}
    for sel in tree.find_all(exp.Select):
        for e in sel.expressions:
            if not isinstance(e, exp.Alias) or not e.alias:
                continue
            inner = e.this
            if isinstance(inner, exp.Column) and inner.name.lower() == e.alias.lower():
                continue
            defs = out.setdefault(e.alias.lower(), [])
            if len(defs) < 3 and not any(inner == d for d in defs):
                defs.append(inner)
    return out


def _expanded(node: exp.Expression, renames: dict[str, list[exp.Expression]]) -> list[exp.Expression]:
    """The comparison as written, and with each renamed column replaced by what it names (a few levels deep: a
    rename of a rename)."""
    variants, frontier = [node], [node]
    for _ in range(3):
        nxt = []
        for v in frontier:
            for col in v.find_all(exp.Column):
                for d in renames.get(col.name.lower(), []):
                    if len(variants) + len(nxt) >= MAX_VARIANTS:
                        break
                    nxt.append(_replace(v, col, d))
        if not nxt:
            break
        variants += nxt
        frontier = nxt
    return variants


def _replace(node: exp.Expression, col: exp.Column, by: exp.Expression) -> exp.Expression:
    """A copy of ``node`` with the column ``col`` (found in it) replaced by ``by``."""
    path = []
    n = col
    while n is not node and n is not None:
        path.append((n.arg_key, n.index))
        n = n.parent
    out = node.copy()
    target = out
    for key, idx in reversed(path):
        child = target.args.get(key)
        target = child[idx] if isinstance(child, list) else child
    target.replace(exp.Paren(this=by.copy()))
    return out


def where_of(sql: str | None, dialect: str | None = None) -> str:
    """The WHERE condition of a query's outermost SELECT, as SQL ("" when it has none)."""
    try:
        tree = sqlglot.parse_one(sql or "", read=dialect)
    except Exception:
        return ""
    sel = _select_of(tree)
    for _ in range(4):  # count(*) FROM (SELECT ... WHERE ...) AS x: the inner query's conditions
        if sel is None:
            return ""
        where = sel.args.get("where")
        if where is not None:
            return where.this.sql(dialect=dialect)
        src = sel.args.get("from_") or sel.args.get("from")
        sel = _select_of(src.this) if src is not None else None
    return ""


def _condition(text: str, dialect: str | None) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(f"SELECT 1 WHERE {text}", read=dialect)
    except Exception:
        return None


def missing_conditions(sql: str, stated: dict[str, str], dialect: str | None = None) -> list[str]:
    """The names of stated conditions ({"segment": "platform = 'android'", ...}) of which the query
    applies not every comparison. Unparseable text is not held against the query."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return []
    have = atoms(tree, renames_of(tree))  # a condition on a renamed column is the condition on what it names
    out = []
    for name, text in stated.items():
        if not text or not text.strip():
            continue
        cond = _condition(text, dialect)
        if cond is None:
            continue
        if not atoms(cond) <= have:
            out.append(f"{name} ({text})")
    return out


# --- where a condition applies: the whole metric, or one side of it -------------------------------

def _select_of(node: exp.Expression | None) -> exp.Select | None:
    while isinstance(node, exp.Subquery):
        node = node.this
    return node if isinstance(node, exp.Select) else None


class _Ctes(dict):
    """A query's CTEs by name, and its renamed columns (``renames_of``) for reading its conditions."""

    renames: dict[str, list[exp.Expression]] = {}


def _ctes(tree: exp.Expression) -> _Ctes:
    out = _Ctes()
    for cte in tree.find_all(exp.CTE):
        sel = _select_of(cte.this)
        if sel is not None and cte.alias:
            out[cte.alias.lower()] = sel
    out.renames = renames_of(tree)
    return out


def _qatoms(node: exp.Expression, ctes: dict) -> set[tuple]:
    """The comparisons of a part of the query, renamed columns read as what they name."""
    return atoms(node, getattr(ctes, "renames", None))


def _sources(sel: exp.Select, ctes: dict[str, exp.Select]) -> list[exp.Select]:
    """The SELECTs a query reads its rows from (FROM and JOIN subqueries, CTEs referenced by name)."""
    out = []
    src = sel.args.get("from_") or sel.args.get("from")  # the key changed name across sqlglot versions
    nodes = ([src.this] if src is not None else []) + [j.this for j in sel.args.get("joins") or []]
    for n in nodes:
        if isinstance(n, exp.Table) and n.name.lower() in ctes:
            out.append(ctes[n.name.lower()])
        elif (inner := _select_of(n)) is not None:
            out.append(inner)
    return out


def _row_bound(sel: exp.Select, ctes: dict[str, exp.Select], depth: int = 0) -> set[tuple]:
    """The comparisons that bound every row a SELECT aggregates: its WHERE, HAVING, QUALIFY and join
    conditions, and those of the queries it reads from."""
    out: set[tuple] = set()
    for key in ("where", "having", "qualify"):
        if (node := sel.args.get(key)) is not None:
            out |= _qatoms(node, ctes)
    for j in sel.args.get("joins") or []:
        if (on := j.args.get("on")) is not None:
            out |= _qatoms(on, ctes)
    if depth < 6:
        for inner in _sources(sel, ctes):
            out |= _row_bound(inner, ctes, depth + 1)
    return out


def _leaves(node: exp.Expression):
    """The computations an output column is made of: aggregates (with their FILTER), windows and
    scalar subqueries; bare column references when it aggregates nothing."""
    if isinstance(node, (exp.Filter, exp.AggFunc, exp.Window, exp.Subquery)):
        yield node
        return
    if isinstance(node, exp.Column):
        yield node
        return
    for child in node.iter_expressions():
        yield from _leaves(child)


def _bounded(node: exp.Expression, need: set[tuple], sel: exp.Select, ctes: dict[str, exp.Select],
             depth: int = 0, other_ok=None) -> bool:
    """Does ``need`` restrict every computation of the output expression ``node`` of ``sel``? ``other_ok``:
    a test of the conditions bounding a computation that ``need`` does not restrict (True: it may stand)."""
    bound = _row_bound(sel, ctes)
    need = need - bound
    if not need or depth > 6:
        return True
    for leaf in _leaves(node):
        if isinstance(leaf, exp.Subquery):
            inner = _select_of(leaf)
            if inner is None or not all(_bounded(e.unalias(), need, inner, ctes, depth + 1, other_ok)
                                        for e in inner.expressions):
                return False
        elif isinstance(leaf, exp.Column):
            # a column of a source query: bounded when its definition there is; a base table's value
            # outside any aggregate is bounded by the row conditions only, which were not enough
            defs = [(src, e) for src in _sources(sel, ctes) for e in src.expressions
                    if e.alias_or_name.lower() == leaf.name.lower()]
            if not defs or not all(_bounded(e.unalias(), need, src, ctes, depth + 1, other_ok) for src, e in defs):
                return False
        elif not need <= _qatoms(leaf, ctes) and not (other_ok is not None and other_ok(_qatoms(leaf, ctes) | bound)):
            return False
    return True


SHARE_WORDS = re.compile(r"\b(share|percent(age)? of|proportion of|part of)\b", re.I)


def metric_kind(metric: str | None, measure: str | None) -> str | None:
    """The rule a claim's metric follows: a change of a share ("electronics' share of revenue fell") is a share
    in each period (its whole is the period's rows, not the segment)."""
    if metric == "change" and SHARE_WORDS.search(measure or ""):
        return "share"
    return metric


def _columns(node: exp.Expression) -> set[str]:
    return {c.name.lower() for c in node.find_all(exp.Column)}


def condition_columns(text: str | None, dialect: str | None = None) -> set[str]:
    """The column names a condition reads (lower case); empty when there is none or it does not parse."""
    tree = _condition(text, dialect) if text and text.strip() else None
    return _columns(tree) if tree is not None else set()


def _outputs(tree: exp.Expression) -> dict[str, exp.Expression]:
    sel = _select_of(tree)
    if sel is None:
        return {}
    return {e.alias_or_name.lower(): e.unalias() for e in sel.expressions}


def partial_conditions(sql: str, stated: dict[str, str], dialect: str | None = None,
                       metric: str | None = None) -> list[str]:
    """Conditions applied to the wrong part of the computation. The period bounds the whole metric
    (numerator and denominator, segment and baseline): a query that filters only the numerator by it
    computes another number. The segment's condition bounds the whole ``segment_value`` column and
    the baseline's the whole ``baseline_value`` column (a rate's numerator and denominator, an
    average's sum and count), except for a share, whose whole is not the segment, and a ratio to the
    stated baseline (no baseline_value column): there the condition must reach its column. A query of another shape (a UNION, columns not named so) is
    not held against the claim."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return []
    sel = _select_of(tree)
    if sel is None:
        return []
    ctes = _ctes(tree)
    outs = _outputs(tree)
    named = {k: v for k, v in outs.items() if k in ("segment_value", "baseline_value")}
    out = []
    period = stated.get("period")
    cond = _condition(period, dialect) if period and period.strip() else None  # parsed once, used twice
    period_atoms = atoms(cond) if cond is not None else set()
    if cond is not None:
        need = atoms(cond)
        bounded = named or outs
        # a baseline that is another period ("the same segment before 2026-07-01": its condition is on the
        # period's own column) is not inside the period: the period bounds the segment's side only
        base = _condition(stated.get("baseline") or "", dialect)
        if base is not None and "segment_value" in named and _columns(base) & _columns(cond):
            bounded = {"segment_value": named["segment_value"]}
        # a computation bounded by another window of the period's own column ("carts before July", the
        # baseline of a before/after comparison or a counterfactual) reads rows outside the period on purpose
        # (only when the claim states no baseline: a stated baseline's side follows its own condition)
        pcols = _columns(cond)
        window = None if (stated.get("baseline") or "").strip() else (
            lambda have: any(set(a[1]) & pcols for a in have))
        if need and not all(_bounded(e, need, sel, ctes, other_ok=window) for e in bounded.values()):
            out.append(f"period ({period}) applied to part of the metric only: it must bound all of it")
    for side, column in (("segment", "segment_value"), ("baseline", "baseline_value")):
        text = stated.get(side)
        if not text or not text.strip() or column not in named or (cond := _condition(text, dialect)) is None:
            continue
        need = atoms(cond)
        if not need:
            continue
        # a share's whole is not its segment; nor is a rate's whose baseline is its denominator (a
        # stated baseline with no baseline_value: "1 - players at level 5 / players at level 4")
        ratio_to_baseline = side == "segment" and bool((stated.get("baseline") or "").strip()) \
            and "baseline_value" not in named
        # a reach rate ("share of all players who reach level 8"): the condition selects the part, and the part of
        # the computation it does not bound counts every row (of the period), with no condition of its own
        whole = metric == "rate" and _bounded(named[column], need, sel, ctes,
                                              other_ok=lambda have: not (have - period_atoms))
        if metric == "share" or ratio_to_baseline or whole:
            if not (need - _row_bound(sel, ctes)) <= _reach(named[column], sel, ctes):
                out.append(f"{side} ({text}) not applied to {column}")
        elif not _bounded(named[column], need, sel, ctes):
            out.append(f"{side} ({text}) applied to part of {column} only: it must bound all of it")
    return out


def _reach(node: exp.Expression, sel: exp.Select, ctes: dict[str, exp.Select]) -> set[tuple]:
    """Every comparison that touches some computation of an output column."""
    reach = _qatoms(node, ctes)
    for leaf in _leaves(node):
        if isinstance(leaf, exp.Subquery) and (inner := _select_of(leaf)) is not None:
            reach |= _row_bound(inner, ctes)
        elif isinstance(leaf, exp.Column):
            for s in _sources(sel, ctes):
                e = next((e for e in s.expressions if e.alias_or_name.lower() == leaf.name.lower()), None)
                if e is not None:
                    reach |= _qatoms(e, ctes) | _row_bound(s, ctes)
    return reach
