"""PII by lineage: which output columns of a statement derive from a PII column.

The statement is qualified and star-expanded with sqlglot's optimizer against
the project's catalog (``qualify``), then every scope (CTE, derived table,
subquery, set-operation branch) is walked bottom-up: an output column is
tainted when any column its expression reads is a PII column of a real table,
or a tainted output of a scope it reads from, through any expression,
aggregate or window (``lower(email)``, ``string_agg(email, ',')``,
``max(email)``, ``CASE ... email ...``, ``to_json(c)`` ...). A whole-row
reference (``SELECT c FROM customers c``) is tainted when its relation has a
PII column. ``count(x)`` / ``count(DISTINCT x)`` is a number: it is the one
aggregate that does not carry taint. A set operation's output is tainted when
any branch's is. Filtering by a PII column (``WHERE email LIKE 'a%'``) does
not taint an output (the statement still ``touches_pii``).

A column the catalog cannot resolve (misspelt, ambiguous) is treated as
tainted when anything its scope reads carries PII: the engine binds it or
fails, and either way its value is masked. When lineage cannot be computed
(qualification fails, a star cannot be expanded), ``LineageError`` is raised: the guard refuses the statement when a
relation it reads has PII columns. A recursive CTE is traced to a fixpoint (its
self-reference read as the CTE traced so far, passes repeated until no taint changes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.schema import MappingSchema

from ..pii import looks_like_pii


class LineageError(Exception):
    pass


@dataclass
class Lineage:
    masked_outputs: list[int]
    touches_pii: bool
    output_count: int
    # the result's column names where the statement fixes them (a column read or an alias; "" where the engine
    # names an expression its own way): the executor compares them with the result's
    output_names: list[str] = field(default_factory=list)


def _result_names(e: exp.Expression, width: int) -> list[str]:
    """The names the engine gives the statement's outputs where the statement fixes them (a column read, an
    alias), "" elsewhere; [] when the statement's shape does not say (a VALUES, a table function)."""
    while isinstance(e, (exp.Subquery, exp.Paren)):
        e = e.this
    while isinstance(e, exp.SetOperation):  # a set operation's names are its first branch's
        e = e.this
        while isinstance(e, (exp.Subquery, exp.Paren)):
            e = e.this
    if not isinstance(e, exp.Select) or len(e.expressions) != width:
        return []
    # (qualify names an unaliased expression _col_<n>: the engine names it its own way)
    return ["" if re.fullmatch(r"_col_\d+", n) else n for n in
            (p.alias if isinstance(p, exp.Alias) else p.name if isinstance(p, exp.Column) else ""
             for p in e.expressions)]


def compute(root: exp.Expression, dialect: str, schema: dict, pii: dict[str, set[str]],
            pii_names: set[str]) -> Lineage:
    """``root``: a statement whose real tables carry their resolved schema (``db``) and no catalog.

    ``schema``: {schema: {table: {column: type}}} of every real table, or {} without a catalog
    (normalised as the dialect folds unquoted names, like the tables in ``root``).
    ``pii``: lowercase ``schema.table`` -> lowercase PII column names. ``pii_names``: PII column
    names that apply to any table not in ``pii`` (the catalog-less mode).
    """
    mapping = MappingSchema(schema, dialect=dialect, normalize=True) if schema else None
    try:
        q = qualify(root.copy(), schema=mapping, dialect=dialect, validate_qualify_columns=False,
                    quote_identifiers=False, identify=False, expand_stars=True)
        scopes = traverse_scope(q)
    except Exception as exc:
        raise LineageError(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}") from None
    if not scopes:
        raise LineageError("no scope")
    known = {f"{db.lower()}.{t.lower()}": {c.lower() for c in cols} for db, ts in schema.items()
             for t, cols in ts.items()}
    return _Tracer(dialect, pii, pii_names, bool(schema), known).run(scopes)


class _Tracer:
    def __init__(self, dialect: str, pii: dict[str, set[str]], pii_names: set[str], has_schema: bool,
                 known: dict[str, set[str]] | None = None):
        self.known = known or {}
        self.dialect = dialect
        self.pii = pii
        self.pii_names = {p.lower() for p in pii_names}
        self.has_schema = has_schema
        self.by_expr: dict[int, Scope] = {}
        self.outputs: dict[int, list[tuple[str, bool]]] = {}  # id(scope) -> [(name, tainted)]
        self.touches = False
        self.done: set[int] = set()
        self.provisional = False

    # -------------------------------------------------------------- relations

    def _table_pii(self, table: exp.Table) -> set[str]:
        key = f"{(table.db or '').lower()}.{table.name.lower()}"
        if key in self.pii:
            return self.pii[key]
        return self.pii_names if not self.has_schema else set()

    def _source_outputs(self, scope: Scope, alias: str) -> list[tuple[str, bool]] | None:
        """(name, tainted) columns of a derived source, renamed by an alias column list if any."""
        node, src = scope.selected_sources.get(alias, (None, None))
        if not isinstance(src, Scope):
            return None
        outs = self.outputs.get(id(src)) if id(src) in self.done else None
        if outs is None:
            # a recursive CTE's reference to itself (sqlglot gives it a scope of the base branch):
            # read as the whole CTE traced so far (first pass: its base branch), and pass again
            e = src.expression
            union = e if isinstance(e, exp.SetOperation) else e.parent
            while isinstance(union, (exp.Subquery, exp.Paren)):
                union = union.parent
            rec = self.by_expr.get(id(union)) if isinstance(union, exp.SetOperation) else None
            if rec is not None and id(rec) not in self.done:
                self.provisional = True
                base = self.by_expr.get(id(_unwrap(union.this)))
                outs = self.outputs.get(id(rec)) or (self.outputs.get(id(base)) if base is not None else None)
        if outs is None:
            raise LineageError(f"scope of {alias} not traced")
        ta = node.args.get("alias") if isinstance(node, exp.Expression) else None
        cols = ta.columns if isinstance(ta, exp.TableAlias) else []
        if cols and outs and all(n == "*" for n, _ in outs):
            # a table function's columns (FLATTEN's SEQ, KEY, ... VALUE, THIS; an UNNEST's): its argument's taint
            shared = any(t for _, t in outs)
            return [(c.name, shared) for c in cols]
        if cols:
            return [(c.name, outs[i][1] if i < len(outs) else True) for i, c in enumerate(cols)]
        return outs

    def _column_taint(self, col: exp.Column, scope: Scope) -> bool:
        name = col.name.lower()
        s: Scope | None = scope
        while s is not None:
            if col.table:
                if col.table in s.selected_sources or col.table in s.sources:
                    return self._from_source(s, col.table, name)
            else:
                # an unqualified column left by qualify: a whole-row reference to a relation
                if col.name in s.selected_sources or col.name in s.sources:
                    return self._whole_row(s, col.name)
            s = s.parent
        if not col.table and len(scope.selected_sources) == 1:
            # left unqualified (no catalog): the engine binds it to the scope's only relation
            (alias,) = scope.selected_sources
            try:
                return self._from_source(scope, alias, name)
            except LineageError:
                pass
        if not col.table:
            # unresolved (a column the catalog does not know, an ambiguous name): the engine will
            # bind it or fail; tainted if anything visible carries PII (masked rather than refused)
            hit = any(self._any_pii(sc) for sc in _chain(scope))
            self.touches |= hit
            return hit
        raise LineageError(f"column {col.sql(dialect=self.dialect)} could not be resolved")

    def _from_source(self, scope: Scope, alias: str, name: str) -> bool:
        src = scope.sources.get(alias)
        if isinstance(src, exp.Table) and isinstance(src.this, exp.Func):
            # a table function (jsonb_each(c.profile), a series): its rows carry its arguments' taint
            return self._expr_taint(src.this, scope)
        if isinstance(src, exp.Table):
            key = f"{(src.db or '').lower()}.{src.name.lower()}"
            if key in self.known and name not in self.known[key]:
                # a column the cached catalog does not know (added since): judged by its name
                hit = name in self.pii_names or looks_like_pii(name)
            else:
                hit = name in self._table_pii(src)
            self.touches |= hit
            return hit
        outs = self._source_outputs(scope, alias)
        if outs is None:
            return True
        named = [t for n, t in outs if n.lower() == name]
        if named:  # "A" and a are two columns to PostgreSQL: a name read in either case carries both's taint
            return any(named)
        if any(n == "*" for n, _ in outs):
            return any(t for _, t in outs)
        raise LineageError(f"column {alias}.{name} not found in its source")

    def _row_taint(self, alias: str, scope: Scope) -> bool:
        for s in _chain(scope):
            if alias in s.selected_sources or alias in s.sources:
                return self._whole_row(s, alias)
        return True

    def _whole_row(self, scope: Scope, alias: str) -> bool:
        src = scope.sources.get(alias)
        if isinstance(src, exp.Table) and isinstance(src.this, exp.Func):
            return self._expr_taint(src.this, scope)
        if isinstance(src, exp.Table):
            hit = bool(self._table_pii(src))
            self.touches |= hit
            return hit
        outs = self._source_outputs(scope, alias) or []
        return any(t for _, t in outs)

    def _any_pii(self, scope: Scope) -> bool:
        for src in scope.sources.values():
            if isinstance(src, exp.Table) and self._table_pii(src):
                return True
            if isinstance(src, Scope) and any(t for _, t in self.outputs.get(id(src), [])):
                return True
        return False

    # -------------------------------------------------------------- expressions

    def _expr_taint(self, e: exp.Expression, scope: Scope) -> bool:
        tainted = False
        stack = [e]
        while stack:
            n = stack.pop()
            if isinstance(n, exp.Count) or (isinstance(n, exp.Window) and isinstance(n.this, exp.Count)):
                self._touch_only(n, scope)
                continue
            if isinstance(n, (exp.Select, exp.SetOperation)) and n is not e:
                sub = self.by_expr.get(id(n))
                if sub is None:
                    raise LineageError("a subquery was not traced")
                if id(sub) not in self.done:
                    # traced after the scope that reads it (a subquery in a FLATTEN's or an explode's argument:
                    # sqlglot lists the lateral's scope first; red team 17): its last pass's outputs, or tainted
                    # until it is traced, and the pass repeats
                    self.provisional = True
                    if id(sub) not in self.outputs:
                        tainted |= not isinstance(n.parent, exp.Exists)
                        continue
                if not isinstance(n.parent, exp.Exists):
                    tainted |= any(t for _, t in self.outputs.get(id(sub), []))
                continue
            if isinstance(n, exp.Star) or (isinstance(n, exp.Column) and isinstance(n.this, exp.Star)):
                if self._any_pii(scope):
                    raise LineageError("a * could not be expanded")
                continue
            if isinstance(n, exp.TableColumn):  # a whole-row reference (SELECT c / to_json(c) FROM t c)
                tainted |= self._row_taint(n.name, scope)
                continue
            if isinstance(n, exp.Column):
                tainted |= self._column_taint(n, scope)
                continue
            stack.extend(n.iter_expressions())
        return tainted

    def _touch_only(self, e: exp.Expression, scope: Scope) -> None:
        for c in e.find_all(exp.Column):
            try:
                if self._column_taint(c, scope):
                    self.touches = True
            except LineageError:
                self.touches = True

    # -------------------------------------------------------------- scopes

    def run(self, scopes: list[Scope]) -> Lineage:
        for s in scopes:
            self.by_expr[id(s.expression)] = s
        # children come before their parents; a recursive CTE reads itself before it is traced, so
        # it is read as its previous pass (first: its base branch) and the pass repeats until no
        # taint changes (taints only grow: at most one more pass per output column)
        for _ in range(64):
            self.done: set[int] = set()
            self.provisional = False
            before = dict(self.outputs)
            for s in scopes:
                self.outputs[id(s)] = self._scope_outputs(s)
                self.done.add(id(s))
                self._touch_rest(s)
            if not self.provisional or self.outputs == before:
                break
        else:
            raise LineageError("a recursive CTE's lineage did not settle")
        root = scopes[-1]
        outs = self.outputs[id(root)]
        masked = [i for i, (_, t) in enumerate(outs) if t]
        return Lineage(masked_outputs=masked, touches_pii=self.touches or bool(masked), output_count=len(outs),
                       output_names=_result_names(root.expression, len(outs)))

    def _scope_outputs(self, s: Scope) -> list[tuple[str, bool]]:
        e = s.expression
        if isinstance(e, (exp.Subquery, exp.Paren)):  # (SELECT ...) as the statement or a branch
            inner = _unwrap(e)
            sub = self.by_expr.get(id(inner))
            if sub is not None and sub is not s and id(sub) in self.outputs:
                return self.outputs[id(sub)]
            e = inner
        if isinstance(e, exp.SetOperation):
            cols: list[list[tuple[str, bool]]] = []
            for b in (e.this, e.expression):
                bs = self.by_expr.get(id(b)) or self.by_expr.get(id(_unwrap(b)))
                if bs is None:
                    raise LineageError("a set-operation branch was not traced")
                cols.append(self.outputs[id(bs)])
            left = cols[0]
            if e.args.get("by_name"):  # matched by name, not position (the guard refuses it): all or nothing
                return [(n, any(t for c in cols for _, t in c)) for n, _ in left]
            return [(n, any(c[i][1] for c in cols if i < len(c))) for i, (n, _) in enumerate(left)]
        if isinstance(e, exp.Select):
            out = []
            for p in e.expressions:
                out.append((p.alias_or_name, self._expr_taint(p, s)))
            return out
        if isinstance(e, exp.Lateral):  # LATERAL (SELECT ...): the inner SELECT's outputs (traced before)
            inner = e.this
            while isinstance(inner, exp.Subquery):
                inner = inner.this
            sub = self.by_expr.get(id(inner))
            if sub is not None:
                return self.outputs[id(sub)]
            return [("*", self._expr_taint(e.this, s))]
        if isinstance(e, exp.TableFromRows) and isinstance(e.this, (exp.Generator, exp.Explode)):
            # Snowflake's TABLE(GENERATOR(ROWCOUNT => n)): rows without columns (its SEQ4() reads none);
            # TABLE(FLATTEN(input => ...)): its argument's taint, as UNNEST; the guard admits no other TABLE(...)
            return [("*", self._expr_taint(e.this, s))]
        if isinstance(e, exp.Values) or isinstance(e, exp.Unnest) or isinstance(e, exp.Table):
            # VALUES rows are literals; UNNEST / table functions carry their argument's taint
            # (a VALUES row with a column or a subquery in it is refused by the guard; traced as tainted here)
            taint = self._expr_taint(e, s) if not isinstance(e, exp.Values) else \
                bool(e.find(exp.Column, exp.Query, exp.Subquery))
            width = len(e.expressions[0].expressions) if isinstance(e, exp.Values) and e.expressions else 1
            return [("*", taint)] * width  # "*": the names are the alias's, the taint is shared
        raise LineageError(f"unsupported scope {type(e).__name__}")

    def _touch_rest(self, s: Scope) -> None:
        """A PII column read anywhere in the scope (WHERE, JOIN, ORDER BY ...) makes the statement touch PII."""
        if self.touches:
            return
        for c in s.columns:
            try:
                if self._column_taint(c, s):
                    self.touches = True
                    return
            except LineageError:
                continue


def _unwrap(e: exp.Expression) -> exp.Expression:
    while isinstance(e, (exp.Subquery, exp.Paren)):
        e = e.this
    return e


def _chain(scope: Scope):
    s: Scope | None = scope
    while s is not None:
        yield s
        s = s.parent
