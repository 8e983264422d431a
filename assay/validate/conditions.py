"""Does a verification query apply the claim's stated conditions?

A claim states its segment, baseline and period as SQL conditions. A re-derivation that leaves one
out (the period forgotten, the baseline taken over every row) measures something else, and a
number it happens to match would be confirmed for the wrong reason. Each comparison of a stated
condition (column, operator, literals; table qualifiers ignored) must appear in the query's tree.
"""

from __future__ import annotations

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


def atoms(tree: exp.Expression) -> set[tuple]:
    return {a for n in tree.find_all(*_ATOMS) if (a := _atom(n)) is not None}


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
    have = atoms(tree)
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
