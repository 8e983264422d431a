"""What a count counts: entity names normalised, and read off a count query."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp


def normalize_entity(text: str | None) -> str | None:
    """'Order items', 'order_item', 'orderitems' -> 'order_item'; 'customers' -> 'customer'."""
    if not text:
        return None
    t = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    t = re.sub(r"_?ids?$", "", t) or t
    words = [w for w in t.split("_") if w and w not in ("distinct", "unique", "the", "of", "rows", "row")]
    if not words:
        return None
    last = words[-1]
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("s", "")):
        if last.endswith(suffix) and len(last) > len(suffix) + 1 and not last.endswith("ss"):
            last = last[: -len(suffix)] + repl
            break
    return "_".join(words[:-1] + [last])


def same_entity(claimed: str | None, counted: str | None, known: set[str] | frozenset[str] = frozenset()) -> bool:
    """Does a query counting ``counted`` count the claim's entity? Compared by the head noun: "add_to_cart
    events", "purchase events" and "events" are all events (rows of one table, told apart by a condition
    the claim states elsewhere); "order items" and "items" agree, "customers" and "events" do not.
    ``known``: the entities the warehouse names (its tables and keys, normalised). A head noun that names none
    of them is the analyst's word for rows of the table its phrase names: "expense claims" counted as rows of
    ``expenses`` agree; "customer orders" counted as customers do not when the warehouse has orders."""
    a, b = normalize_entity(claimed), normalize_entity(counted)
    if a is None or b is None or a == b:
        return True
    ha, hb = a.split("_")[-1], b.split("_")[-1]
    if ha == hb or a.endswith("_" + b) or b.endswith("_" + a):
        return True
    if known and ha not in known and b in known:
        modifiers = {normalize_entity(w) for w in a.split("_")[:-1]}
        return b in modifiers
    return False


def warehouse_entities(tables) -> set[str]:
    """The entities a warehouse names: its tables and the ``*_id`` keys of their columns, normalised."""
    out: set[str] = set()
    for t in tables:
        for name in [t.name, *(c.name for c in t.columns if re.search(r"(?i)_?id$", c.name) and len(c.name) > 2)]:
            e = normalize_entity(name)
            if e:
                out.add(e)
    return out


def entity_of_sql(sql: str | None, dialect: str | None = None, *, strict: bool = False) -> str | None:
    """The entity a count query counts: count(DISTINCT x_id) -> x; count(*) -> the table's rows.
    ``strict``: only when the query says so plainly (one count of distinct ids, or count(*) over one
    SELECT without subqueries); None otherwise."""
    if not sql:
        return None
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:
        return None
    if strict:
        counts = list(tree.find_all(exp.Count))
        distinct = {c.this.expressions[0].name.lower() for c in counts if isinstance(c.this, exp.Distinct)
                    and c.this.expressions and isinstance(c.this.expressions[0], exp.Column)}
        if len(distinct) == 1 and len(counts) == len([c for c in counts if isinstance(c.this, exp.Distinct)]):
            return normalize_entity(distinct.pop())
        selects = list(tree.find_all(exp.Select))
        if distinct or len(selects) != 1 or not counts or any(isinstance(c.this, exp.Distinct) for c in counts):
            return None
        t = tree.args.get("from_") or tree.args.get("from")
        table = t.find(exp.Table) if t is not None else None
        return normalize_entity(table.name) if table is not None else None
    return _entity_of_select(tree) if isinstance(tree, exp.Select) else None


def _entity_of_select(sel: exp.Select, depth: int = 0) -> str | None:
    """count(DISTINCT x) -> x; count(*) FROM t -> t; count(*) FROM (SELECT x ... GROUP BY x) -> x."""
    if depth > 4:
        return None
    for proj in sel.expressions:
        cnt = proj.find(exp.Count)
        if cnt is not None and isinstance(cnt.this, exp.Distinct) and cnt.this.expressions \
                and isinstance(cnt.this.expressions[0], exp.Column):
            return normalize_entity(cnt.this.expressions[0].name)
    src = sel.args.get("from_") or sel.args.get("from")  # the key changed name across sqlglot versions
    src = src.this if src is not None else None
    if isinstance(src, exp.Table):
        return normalize_entity(src.name)
    if isinstance(src, exp.Subquery) and isinstance(src.this, exp.Select):
        inner = src.this
        cols = [c for c in inner.expressions if isinstance(c.unalias(), exp.Column)]
        if inner.args.get("group") and cols:
            return normalize_entity(cols[0].unalias().name)  # one row per entity of the grouping
        return _entity_of_select(inner, depth + 1)
    return None
