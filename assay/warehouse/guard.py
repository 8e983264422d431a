"""The SQL guard: every statement from every phase passes through it. It fails closed.

Enforcement is on the parsed tree (sqlglot, in the warehouse's dialect), never on
substrings, and every check refuses what it does not recognise.

What the guard guarantees (for the statement it returns, which is sqlglot's rendering
of the checked tree, without comments, and refused unless it parses back to the same
text, so what is checked is exactly what runs):

- one statement of at most 100,000 characters; a read-only query (SELECT / WITH / set operation); no DDL, DML, COPY,
  PRAGMA, ATTACH, SET, CALL, transaction control, time travel (``AT``/``BEFORE``/``CHANGES``, ``FOR SYSTEM_TIME
  AS OF``, ``VERSION AS OF``) or unparsed command anywhere in the tree; no temporary table (``#t``, ``##t``).
- functions: only those on the dialect's ALLOW-list of pure functions
  (``functions.py``), by the name the engine will execute (quotes and case as the engine
  resolves them); qualified or method-style calls (``pg_catalog.f()``, ``x.f()``) refused;
  string and series generators only with literal bounds (<= 10,000 characters,
  <= 100,000 values for all series of a statement together); no table function in FROM
  except ``unnest``, JSON element readers (``jsonb_each``, ``json_object_keys``, ...) and
  bounded ``generate_series``/``range``; no cast to catalog types (``::regclass``) or user types.
- tables: names are resolved by SCOPE as the engine does (a CTE shadows a name only where
  it is visible, and only where the engine's folding of unquoted names makes the two names one:
  PostgreSQL folds them to lower case and Snowflake to upper case, and keeps a quoted name as
  written; a quoted name in the kept case must be the catalog's own spelling); a table named by
  a string (Snowflake's ``TABLE('db.schema.t')``) is refused, and so is a parenthesized join
  with an alias (``(t AS a CROSS JOIN (...) AS x) AS s``: sqlglot reads a table as its body);
  every other table reference is a real table and must be in the catalog
  (when the guard has one), in the project's schemas and database, and not a system
  relation (``information_schema``, ``pg_catalog``, ``pg_*``, ``duckdb_*``, ...: catalog
  questions are answered from the discovered schema, not by querying the engine). Without
  a catalog, names that look like files or URLs are refused. If scope analysis fails, the
  statement is refused.
- tenant filter (when set): every real relation read by a SELECT must be filtered in that
  SELECT by ``alias.tenant_column = value`` (AND-ed into WHERE or an inner join's ON; the alias
  as the engine folds it, and compared as written but on DuckDB, where C and c are one alias; an
  unqualified column counts only when the engine would bind it to that relation), or be
  listed in ``shared_tables``. With a catalog, a relation without the tenant column that is
  not shared is refused; without a catalog, every relation needs the predicate. Column-
  alias lists on tables (``orders AS o(a, b, tenant_id)``) are refused everywhere (they
  rename the columns the checks bind to); PIVOT/UNPIVOT over a table is refused under a
  tenant filter. Injection mode adds the missing predicates instead of refusing.
- PII (``lineage.py``): the 0-based output columns derived from a PII column through any
  expression, CTE, subquery, set operation or aggregate (except ``count``) are returned in
  ``masked_outputs``, and ``touches_pii`` says whether a PII column is read anywhere (VALUES lists
  hold only literals, set operations match columns by position, never BY NAME; two columns whose
  names differ only in case share their taint; a qualified star over a USING or NATURAL join,
  which sqlglot expands without the columns the engine keeps in it, is refused). PIVOT
  over PII relations is refused; when lineage cannot be computed and a relation read has PII
  columns, the statement is refused.

Any failure inside the guard itself (a sqlglot error, a recursion limit) is a refusal, and so is a
comment that carries a directive to the parser (``/* sqlglot.meta case_sensitive */``). Redshift is
checked as PostgreSQL (it folds quoted names too unless ``enable_case_sensitive_identifier`` is on;
the stricter reading holds either way), and catalog tables whose names differ only in case are
refused by name.

What it does NOT guarantee:

- resource use: a cross join or a huge aggregate is allowed; the statement timeout, memory
  limit and row cap of the adapter (and the engine) bound it.
- PII inside a JSON/struct column is caught only when the whole column is declared PII; a
  column that appears after the schema was cached is not in the catalog (``output_count``
  lets the executor notice a wider result and mask everything).
- inference: filters and counts over PII (``WHERE email LIKE 'a%'``, ``count(DISTINCT
  email)``) are allowed; only values are masked. Error text is scrubbed by the executor
  when ``touches_pii`` is set, not here.
- the engine's own privileges: functions on the allow-list may still raise; views are
  taken at their catalog columns; a user-defined function that shadows a built-in name in a
  schema searched before the built-ins is not detected. A least-privilege, read-only role
  remains what a team should configure: the guard is one lock, not the only one.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers
from sqlglot.optimizer.scope import Scope, traverse_scope

from ..errors import GuardRefusal
from ..models import TableInfo, TenantFilter
from ..pii import looks_like_pii
from .functions import (ALLOWED, FunctionRefused, check_call, check_growth_budget, check_self_concatenation,
                        check_series_budget)
from .lineage import LineageError, _chain, compute

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "falling back to Command" is our refusal to make

# Statement kinds that may appear nowhere in the tree.
_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    t
    for t in (
        getattr(exp, name, None)
        for name in (
            "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "AlterColumn",
            "TruncateTable", "Command", "Set", "SetItem", "Pragma", "Transaction", "Commit",
            "Rollback", "Copy", "Attach", "Detach", "Use", "LoadData", "Into", "Lock",
            "Grant", "Revoke", "Install", "Analyze", "Describe", "Summarize", "Export",
            "Refresh", "Cache", "Uncache", "Kill", "Show", "Execute", "Declare", "UserDefinedFunction",
            # time travel (Snowflake AT/BEFORE/CHANGES, BigQuery FOR SYSTEM_TIME AS OF, Databricks VERSION AS OF):
            # rows deleted or changed since (erased PII), read against today's catalog
            "HistoricalData", "Version", "Changes",
        )
    )
    if isinstance(t, type)
)

MAX_STATEMENT_CHARS = 100_000

# #3 (DuckDB) and $1 (Snowflake) read a column by position, invisibly to column checks; ? and $1 elsewhere
# are parameters the executor never binds
_POSITIONAL = tuple(t for t in (getattr(exp, n, None) for n in ("PositionalColumn", "Parameter", "Placeholder"))
                    if isinstance(t, type))

# MySQL/MariaDB server settings (@@version); user variables (@x, @x := 1) are Parameters, refused below
_VARIABLES = tuple(t for t in (getattr(exp, n, None) for n in ("SessionParameter",))
                   if isinstance(t, type))

def _star_over_using(select: exp.Select) -> bool:
    """A qualified star (t.*) in a SELECT whose joins merge columns (USING, NATURAL)."""
    joins = select.args.get("joins") or []
    if not any(j.args.get("using") or "NATURAL" in (j.args.get("method") or "").upper()
               or "NATURAL" in str(j.args.get("kind") or "").upper() for j in joins):
        return False
    return any(isinstance(p, exp.Column) and isinstance(p.this, exp.Star) for p in select.expressions)


# FROM sources that name a table by an expression (TABLE('name'), TABLE(:var))
_ROW_SOURCES = tuple(t for t in (getattr(exp, n, None) for n in ("TableFromRows",)) if isinstance(t, type))

# Schemas no query may read even if the project allows "everything".
SYSTEM_SCHEMAS = {
    "information_schema", "pg_catalog", "pg_toast", "sys", "system", "temp", "main.pg_catalog",
    "account_usage", "snowflake", "pg_temp", "snowflake_sample_data",
}
# casts to these run catalog lookups or parsers with external references (XML entities)
_REFUSED_TYPES = {exp.DataType.Type.USERDEFINED, exp.DataType.Type.XML}
_SYSTEM_PREFIXES = ("pg_", "duckdb_", "sqlite_", "pragma_")
# per engine: its own catalog schemas/databases and system-view prefixes (on top of the above)
_DIALECT_SYSTEM_SCHEMAS = {
    "mysql": {"mysql", "performance_schema", "sys"},
    "tsql": {"sys", "master", "msdb", "tempdb", "model", "information_schema"},
    "bigquery": {"information_schema"},
    "databricks": {"system", "information_schema", "samples"},
    "redshift": {"pg_catalog", "pg_automv", "pg_internal"},
}
_DIALECT_SYSTEM_PREFIXES = {
    "bigquery": ("__",),  # __TABLES__, __TABLES_SUMMARY__
    "redshift": ("stl_", "stv_", "svl_", "svv_", "svcs_", "sys_", "pg_"),
    "tsql": ("#",),  # temp tables
}
# functions PostgreSQL can call in field notation on a whole row (t.to_json), refused without a catalog
_PG_ROW_FUNCTIONS = ALLOWED["postgres"] | {"row_to_json", "hstore", "text", "json_populate_record", "record_out",
                                           "pg_column_size", "pg_typeof", "quote_literal", "quote_nullable"}
_PLAIN_NAME = re.compile(r"^[A-Za-z_][\w$ -]*$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# the columns PostgreSQL names for a table function's result (one of one value is named after the function)
_PG_FUNCTION_COLUMNS = {f: ("key", "value") for f in ("json_each", "jsonb_each", "json_each_text", "jsonb_each_text")}
_PG_FUNCTION_COLUMNS.update({f: ("value",) for f in ("json_array_elements", "jsonb_array_elements",
                                                    "json_array_elements_text", "jsonb_array_elements_text")})
_FLOAT_TYPE = re.compile(r"float|double|real", re.I)
_EXACT_TYPE = re.compile(r"uuid|bytea|binary|blob|\bbit\b", re.I)  # compared as values or bytes already
_COLLATED_TYPE = re.compile(r"char|text|string|clob|\bname\b", re.I)  # (varchar, nchar, citext, mediumtext, ...)
# a column type compared as a number: the tenant value is written as a number only on these; against any other
# type (text, binary, blob, enum, set, uuid, ...) a number compares in ways that read other tenants' rows on MySQL
# ('01' and '1-eu' equal 1 as text or binary, ENUM by position, SET as a bitmask: red teams 9 and 10)
_NUMBER_TYPE = re.compile(r"^\s*(?:unsigned\s+)?u?(?:tiny|small|medium|big|huge)?(?:int|integer|serial)\d*\b|^\s*(?:"
                          r"decimal|numeric|number|dec|fixed|float|double|real|bit|year|int64|float64|bignumeric)\b",
                          re.I)


MAX_DEPTH = 512  # levels of a statement's tree the guard analyses (see _check)
MAX_NODES = 50_000  # ... and its parts


def _projecting(query: exp.Expression) -> list[exp.Select]:
    """The SELECTs whose lists are a query's outputs: itself, or each branch of a set operation (not the subqueries
    inside them: EXISTS (SELECT * ...) names no output)."""
    while isinstance(query, (exp.Subquery, exp.Paren)):
        query = query.this
    if isinstance(query, exp.SetOperation):
        return _projecting(query.this) + _projecting(query.expression)
    return [query] if isinstance(query, exp.Select) else []


def _lateral_body(e: exp.Expression) -> exp.Expression:
    """``LATERAL (SELECT ...)``'s SELECT (a scope's expression is the Lateral); any other expression as it is."""
    while isinstance(e, exp.Lateral) and isinstance(e.this, (exp.Subquery, exp.Select, exp.SetOperation)):
        e = e.this
    while isinstance(e, exp.Subquery) and isinstance(e.this, (exp.Select, exp.SetOperation, exp.Subquery)):
        e = e.this
    return e


def _regexp_for_mariadb(tree: exp.Expression) -> None:
    """sqlglot writes MySQL's ``x REGEXP y`` as ``REGEXP_LIKE(x, y)``, which MariaDB does not have (the statement
    failed there: the false-refusal audit, session 25); ``(REGEXP_INSTR(x, y) > 0)`` reads the same on both, NULL
    included. A call with match flags stays (MySQL 8 only)."""
    for node in list(tree.find_all(exp.RegexpLike)):
        if node.args.get("flag") is None:
            node.replace(exp.Paren(this=exp.GT(this=exp.Anonymous(this="REGEXP_INSTR", expressions=[
                node.this.copy(), node.expression.copy()]), expression=exp.Literal.number(0))))


# engines where a schema's or table's name may be case-sensitive whatever its quoting: MySQL/MariaDB with
# lower_case_table_names=0 (Linux's default: databases and tables are directories and files), BigQuery's datasets
# and tables, SQL Server under a case-sensitive collation. A name there must be written as the catalog spells it
# (red team 9: MariaDB read `REDTEAM9.customers`, another database, as the project's `redteam9.customers`)
_NAMES_AS_STORED = {"mysql", "bigquery", "tsql"}


@dataclass
class GuardVerdict:
    allowed: bool
    reason: str = ""
    sql: str = ""  # the statement to run (rewritten when the tenant filter was injected)
    tables: list[str] = field(default_factory=list)
    # positions (0-based) of the result's output columns whose values derive from a PII column
    # (by lineage, not by name); the executor masks them before anyone sees the result
    masked_outputs: list[int] = field(default_factory=list)
    # the statement reads a PII column anywhere (then error text from the engine is scrubbed)
    touches_pii: bool = False
    # number of output columns the lineage traced (None: not traced, no PII relation read); an
    # executor that sees another width in the result should mask every column
    output_count: int | None = None
    # the output names the lineage traced where the statement fixes them ("" elsewhere): a result whose names
    # differ was laid out by another catalog than the guard's (a table rebuilt since the schema was cached)
    output_names: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"allowed": self.allowed, "reason": self.reason}


class SQLGuard:
    """Check (and optionally rewrite) one statement for a project's warehouse.

    ``tables`` is the catalog the project may read (None: catalog-less mode, which refuses
    what it cannot prove); references are resolved case-insensitively by ``schema.table``
    or, when unambiguous, bare name. ``default_schema`` is what a bare name means to the
    engine. ``pii_columns`` are the project's declared PII columns (``col`` or
    ``table.col``); catalog columns whose names look like PII are added.
    """

    def __init__(
        self,
        dialect: str,
        *,
        tables: list[TableInfo] | None = None,
        schemas: list[str] | None = None,
        default_schema: str | None = None,
        tenant: TenantFilter | None = None,
        inject_tenant: bool = False,
        database: str | None = None,
        pii_columns: list[str] | None = None,
    ):
        self.dialect = dialect
        # PostgreSQL folds an unquoted name to lower case and Snowflake to upper case, and both keep a quoted one
        # as written: "PG_SHADOW" and PG_SHADOW are two names there. The statement's names are folded as the engine
        # folds them before any check, and compared as written after that (_fold)
        # Redshift folds quoted names too, unless enable_case_sensitive_identifier is on (a parameter group or a
        # user's setting can turn it on): it is checked as PostgreSQL, which holds in both
        self._fold_dialect = "postgres" if dialect == "redshift" else dialect
        strategy = Dialect.get_or_raise(self._fold_dialect).normalization_strategy
        self._fold = {NormalizationStrategy.LOWERCASE: str.lower,
                      NormalizationStrategy.UPPERCASE: str.upper}.get(strategy)
        # an alias is matched as written, but where the engine matches aliases whatever their case (DuckDB,
        # BigQuery, Databricks, SQL Server's default collations; each refuses two that differ only in case):
        # MySQL/MariaDB on Linux tell "C" from "c", and a predicate on one must not count for the other
        self._alias_any_case = dialect in ("duckdb", "bigquery", "databricks", "tsql")
        self.database = (database or "").lower() or None
        self.schemas = {s.lower() for s in (schemas or [])}
        self._search_path = [s.lower() for s in (schemas or [])]  # PostgreSQL: the adapter's search_path
        self.default_schema = (default_schema or "").lower() or None
        self.tenant = tenant
        self.inject_tenant = inject_tenant
        self._by_fqn: dict[str, TableInfo] = {}
        self._by_name: dict[str, list[TableInfo]] = {}
        self._same_but_case: set[str] = set()  # catalog tables whose names differ only in case (MySQL, BigQuery)
        for t in tables or []:
            if t.fqn.lower() in self._by_fqn and self._by_fqn[t.fqn.lower()].fqn != t.fqn:
                self._same_but_case.add(t.fqn.lower())
            self._by_fqn[t.fqn.lower()] = t
            self._by_name.setdefault(t.name.lower(), []).append(t)
        self.known_tables = tables is not None
        self.tables: list[TableInfo] = list(self._by_fqn.values())
        declared = [p.lower() for p in (pii_columns or [])]
        self._pii_bare = {p for p in declared if "." not in p}
        self._pii_qualified = {p for p in declared if "." in p}
        # fqn -> PII columns of that table (declared by name or table.column, or named like PII)
        self.pii: dict[str, set[str]] = {}
        for t in tables or []:
            cols = {
                c.name.lower() for c in t.columns
                if c.name.lower() in self._pii_bare or looks_like_pii(c.name)
                or f"{t.name}.{c.name}".lower() in self._pii_qualified
                or f"{t.fqn}.{c.name}".lower() in self._pii_qualified
            }
            if cols:
                self.pii[t.fqn.lower()] = cols
        self._shared = {s.lower() for s in (tenant.shared_tables if tenant else [])}

    # ------------------------------------------------------------------ api

    def check(self, sql: str) -> GuardVerdict:
        try:
            return self._check(sql)
        except GuardRefusal as r:
            return GuardVerdict(False, r.reason)
        except Exception as exc:  # fail closed: a check that breaks refuses
            return GuardVerdict(False, f"the guard could not analyse this statement ({type(exc).__name__}); "
                                       "simplify it")

    def enforce(self, sql: str) -> str:
        """Return the statement to run, or raise GuardRefusal."""
        return self.vet(sql).sql

    def vet(self, sql: str) -> GuardVerdict:
        """The allowed verdict (statement to run, outputs to mask), or raise GuardRefusal."""
        v = self.check(sql)
        if not v.allowed:
            raise GuardRefusal(v.reason)
        return v

    # ------------------------------------------------------------------ internals

    def _parse(self, sql: str) -> exp.Expression:
        if not isinstance(sql, str) or not sql.strip():
            raise GuardRefusal("empty statement")
        if len(sql) > MAX_STATEMENT_CHARS:
            raise GuardRefusal(f"statement longer than {MAX_STATEMENT_CHARS:,} characters; split the question")
        try:
            statements = [s for s in sqlglot.parse(sql, read=self.dialect) if s is not None]
        except (ParseError, TokenError) as exc:
            msg = str(exc).splitlines()[0][:200]
            raise GuardRefusal(f"could not parse the statement as {self.dialect} SQL: {msg}") from None
        except Exception as exc:  # sqlglot raises a few other types on odd input
            raise GuardRefusal(f"could not parse the statement: {type(exc).__name__}") from None
        if len(statements) != 1:
            raise GuardRefusal(
                f"exactly one statement is allowed, got {len(statements)}" if statements else "empty statement"
            )
        return statements[0]

    def _check(self, sql: str) -> GuardVerdict:
        root = self._parse(sql)
        nodes, stack = 0, [(root, 0)]
        while stack:
            node, depth = stack.pop()
            nodes += 1
            if depth > MAX_DEPTH or nodes > MAX_NODES:
                # scope and lineage analysis grow faster than a deep tree: an OR chain of 7,000 terms (84,000
                # characters, a tree 7,000 deep) kept the guard busy for minutes (red team 8); no question needs it
                raise GuardRefusal(
                    f"the statement nests more than {MAX_DEPTH} levels deep (a chain of AND, OR, ||, + or UNION is one "
                    f"level per term)" if depth > MAX_DEPTH else f"the statement has more than {MAX_NODES:,} parts"
                ) from None
            stack.extend((child, depth + 1) for child in node.iter_expressions())
            # a comment "/* sqlglot.meta case_sensitive */" is a directive to the parser (it turns name folding off
            # for its node), and the comment is not sent: what the guard would check is not what the engine reads
            if node.meta_get("case_sensitive") or any("sqlglot." in c.lower() for c in node.comments or ()):
                raise GuardRefusal("comments that carry parser directives (sqlglot.meta) are not allowed")
        written: dict[int, str] = {}
        if self._fold is not None:
            # names as the engine reads them, so that scopes match a name to a CTE or an alias only where the
            # engine does (WITH "PG_SHADOW" AS (...) SELECT ... FROM PG_SHADOW reads pg_catalog.pg_shadow); the
            # statement sent keeps its unquoted names as written (the engine folds them alike)
            written = {id(i): i.this for i in root.find_all(exp.Identifier) if not i.quoted}
            root = normalize_identifiers(root, dialect=self._fold_dialect)
        if self.dialect == "postgres":
            # a function in FROM is lateral on PostgreSQL with or without the keyword: LATERAL jsonb_each_text(...)
            # is checked (and sent) as the same call without it, which every check already reads
            for lat in list(root.find_all(exp.Lateral)):
                if isinstance(lat.this, exp.Func) and isinstance(lat.parent, (exp.From, exp.Join)) and not any(
                        lat.args.get(k) for k in ("view", "outer", "ordinality", "cross_apply")):
                    lat.replace(exp.Table(this=lat.this, alias=lat.args.get("alias")))
        inner = root
        while isinstance(inner, (exp.Subquery, exp.Paren)):
            inner = inner.this
        if not isinstance(inner, (exp.Select, exp.SetOperation)):
            kind = type(inner).__name__.upper()
            hint = "; write it as SELECT * FROM (PIVOT ...)" if isinstance(inner, exp.Pivot) and self.tenant is None \
                else ""
            raise GuardRefusal(f"only SELECT, WITH and set operations are allowed, not {kind}{hint}")
        names: dict = {}  # each call's engine name, read once for both checks (the tree is not changed between)
        self._check_nodes(root, names)
        try:
            check_series_budget(root, self.dialect, names)
            check_growth_budget(root, self.dialect, names)
            check_self_concatenation(root)
        except FunctionRefused as r:
            raise GuardRefusal(str(r)) from None
        try:
            scopes = traverse_scope(root)
        except Exception as exc:
            raise GuardRefusal(f"could not resolve the query's scopes ({type(exc).__name__}); simplify it") from None
        if not scopes:
            raise GuardRefusal("could not resolve the query's scopes; simplify it")
        real = self._real_tables(root, scopes)
        for t in real:
            ta = t.args.get("alias")
            if isinstance(ta, exp.TableAlias) and ta.columns:
                raise GuardRefusal(
                    f"column-alias lists on tables ({t.sql(dialect=self.dialect)}) are not allowed (they rename "
                    "the columns the checks bind to); rename columns in the SELECT list instead (col AS name)"
                )
        for node in root.find_all(exp.TableAlias):
            # a subquery's or CTE's column list renames its outputs by position, and a * among them is laid out
            # by the guard's catalog: a table rebuilt in another column order since would rename a PII column
            # past the lineage and past the result's names
            body = node.parent.this if isinstance(node.parent, (exp.Subquery, exp.CTE)) else None
            if node.columns and isinstance(body, exp.Query) and any(
                    isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
                    for sel in _projecting(body) for p in sel.expressions):
                raise GuardRefusal(
                    f"a column list over a * ({node.sql(dialect=self.dialect)}) is not allowed; select the columns "
                    "by name in the subquery or CTE and rename them there (col AS name)")
        infos = {id(t): self._check_table(t) for t in real}
        if self.dialect == "postgres":
            self._check_field_notation(root, scopes, infos)
        referenced = sorted({(i.fqn if i else self._fallback_name(t)) for t, i in
                             ((t, infos[id(t)]) for t in real)})
        out = root
        if self.tenant is not None:
            out = self._check_tenant(root, scopes, real, infos)
        masked, touches, width, names = self._lineage(root, real, infos)
        if self._fold is not None:
            for i in out.find_all(exp.Identifier):
                if not i.quoted:  # as written; a name the guard added (the tenant predicate) in lower case
                    i.set("this", written.get(id(i), i.this.lower()))
        if self.dialect == "mysql":
            _regexp_for_mariadb(out)
        return GuardVerdict(True, "", self._render(out), referenced,
                            masked_outputs=masked, touches_pii=touches, output_count=width, output_names=names)

    def _render(self, tree: exp.Expression) -> str:
        """The text to send: the checked tree, without comments, and only if it parses back to itself."""
        # neither tree is used after it is rendered: no copy first (a deep copy of the whole tree per rendering)
        text = tree.sql(dialect=self.dialect, comments=False, copy=False)
        try:
            again = [s for s in sqlglot.parse(text, read=self.dialect) if s is not None]
        except Exception:
            again = []
        if len(again) != 1 or again[0].sql(dialect=self.dialect, comments=False, copy=False) != text:
            raise GuardRefusal("the statement does not survive a round trip through the SQL parser; simplify it")
        return text

    # ------------------------------------------------------------------ nodes and functions

    def _check_nodes(self, root: exp.Expression, names: dict | None = None) -> None:
        for node in root.walk():
            if isinstance(node, _FORBIDDEN_NODES):
                raise GuardRefusal(f"{type(node).__name__.upper()} is not allowed in a read-only query")
            if isinstance(node, exp.ObjectIdentifier) or (
                isinstance(node, exp.DataType) and node.this in _REFUSED_TYPES
            ):
                raise GuardRefusal(
                    f"cast to {node.sql(dialect=self.dialect)} is not allowed (catalog and user-defined types); "
                    "cast to a standard type such as INTEGER, TEXT, DATE or TIMESTAMP"
                )
            if isinstance(node, exp.Func):
                in_from = isinstance(node.parent, exp.Table) or (
                    isinstance(node, exp.Unnest) and isinstance(node.parent, (exp.From, exp.Join, exp.Lateral))
                )
                try:
                    check_call(node, self.dialect, in_from=in_from, memo=names)
                except FunctionRefused as r:
                    raise GuardRefusal(str(r)) from None
            if isinstance(node, _VARIABLES):
                raise GuardRefusal(
                    f"variables and server settings ({node.sql(dialect=self.dialect)[:30]}) are not allowed; "
                    "write values as literals"
                )
            if isinstance(node, _POSITIONAL):
                raise GuardRefusal(
                    f"positional references and parameters ({node.sql(dialect=self.dialect)[:20]}) are not allowed; "
                    "name the column (and write values as literals)"
                )
            if isinstance(node, getattr(exp, "Operator", ())):
                raise GuardRefusal("OPERATOR(schema.op) is not allowed; write the operator itself (a + b)")
            if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Table):
                # (t AS a CROSS JOIN (SELECT 1) AS x) AS s: sqlglot reads a table as the body of a subquery and
                # its scope hides the table from every check
                raise GuardRefusal("a parenthesized join with an alias is not allowed; write the joins in FROM "
                                   "without parentheses, or put a SELECT in the parentheses")
            if isinstance(node, exp.Select) and _star_over_using(node):
                # sqlglot expands t.* over a USING/NATURAL join without the joined columns the engine keeps in it:
                # every later output shifts, and the lineage masks the wrong column
                raise GuardRefusal("t.* over a JOIN ... USING or a NATURAL JOIN is not allowed; name the columns, "
                                   "or join with ON")
            if isinstance(node, exp.SetOperation) and node.args.get("by_name"):
                raise GuardRefusal("UNION/INTERSECT/EXCEPT BY NAME is not allowed; align the columns by position")
            if isinstance(node, exp.Values) and node.find(exp.Column, exp.Query, exp.Subquery):
                raise GuardRefusal("VALUES lists may hold only literals; select columns and subqueries in a SELECT")
            if isinstance(node, _ROW_SOURCES) and not isinstance(node.this, (exp.Generator, exp.Explode)):
                # Snowflake's TABLE('db.schema.table') names a table by a string: no check would see it; its
                # TABLE(GENERATOR(ROWCOUNT => n)) reads nothing and counts in the series budget (a date spine)
                raise GuardRefusal(f"{node.sql(dialect=self.dialect)[:80]} is not allowed in FROM; name the table")
            if isinstance(node, exp.Table):
                if not isinstance(node.this, (exp.Identifier, exp.Func)):
                    raise GuardRefusal("file readers, URLs and table expressions are not allowed in FROM")
                if isinstance(node.this, exp.Func) and (node.args.get("db") or node.args.get("catalog")):
                    raise GuardRefusal(
                        f"qualified table function {node.sql(dialect=self.dialect)[:80]} is not allowed; "
                        "call it by its plain name"
                    )
            if isinstance(node, exp.Pivot) and self.tenant is not None:
                raise GuardRefusal(
                    "PIVOT/UNPIVOT is not allowed under the project's tenant filter; aggregate with "
                    "CASE WHEN ... or FILTER (WHERE ...) in a filtered SELECT instead"
                )
            if isinstance(node, exp.Lateral) and not isinstance(node.this, (exp.Subquery, exp.Select, exp.Unnest,
                                                                              exp.Explode)):
                raise GuardRefusal("LATERAL VIEW / table functions are not allowed")

    # ------------------------------------------------------------------ tables by scope

    def _real_tables(self, root: exp.Expression, scopes: list[Scope]) -> list[exp.Table]:
        """Every Table node that scope analysis did not resolve to a CTE (fail closed)."""
        cte_refs: set[int] = set()
        for scope in scopes:
            for node, source in scope.selected_sources.values():
                # a name that reads a CTE; any other table mapped to a scope is checked as the table it is
                if isinstance(node, exp.Table) and isinstance(source, Scope) and source.is_cte:
                    cte_refs.add(id(node))
        return [
            t for t in root.find_all(exp.Table)
            if id(t) not in cte_refs and isinstance(t.this, exp.Identifier)
        ]

    def _kept_case(self, t: exp.Table) -> str:
        """On an engine that folds names, the case a quoted part of the table's name keeps ("" when every part reads
        as its folded form)."""
        if self._fold is None:
            return ""
        for part in (t.catalog, t.db, t.name):
            if part and part != self._fold(part):
                return "upper" if self._fold is str.lower else "lower"
        return ""

    def _names_exactly(self, t: exp.Table, info: TableInfo) -> bool:
        """The table's (folded) name parts are the catalog's, as the engine spells them: PostgreSQL's catalog keeps
        each name as created; the Snowflake adapter's lists them in lower case for names it reads in upper case."""
        spell = (lambda x: x) if self._fold_dialect == "postgres" else self._fold
        if t.catalog and t.catalog != self._fold(t.catalog):
            return False
        return t.name == spell(info.name) and (not t.db or t.db == spell(info.schema_name))

    def _fallback_name(self, t: exp.Table) -> str:
        schema = (t.db or "").lower() or self.default_schema or ""
        return f"{schema}.{t.name.lower()}" if schema else t.name.lower()

    def resolve(self, table: exp.Table) -> TableInfo | None:
        name = table.name.lower()
        db = (table.db or "").lower()
        if db:
            return self._by_fqn.get(f"{db}.{name}")
        cands = self._by_name.get(name, [])
        # a bare name means what the engine's search order finds first: the configured schemas in
        # order (PostgreSQL's search_path), else the default schema
        order = self._search_path if self.dialect == "postgres" and self._search_path else \
            [self.default_schema] if self.default_schema else []
        if self.dialect == "postgres" and not self._search_path and len(cands) > 1:
            return None  # "$user" may come before public: which one the engine reads is unknown
        for schema in order:
            for c in cands:
                if c.schema_name.lower() == schema:
                    return c
        return cands[0] if len(cands) == 1 else None

    def _check_table(self, t: exp.Table) -> TableInfo | None:
        name = t.name.lower()
        db = (t.db or "").lower()
        shown = t.sql(dialect=self.dialect)
        if t.catalog and t.catalog.lower() != self.database:
            # another database (an ATTACHed DuckDB file, another Snowflake database, ...)
            raise GuardRefusal(f"table {shown} is outside the project's database")
        schema = db or self.default_schema or ""
        system = SYSTEM_SCHEMAS | _DIALECT_SYSTEM_SCHEMAS.get(self.dialect, set())
        prefixes = _SYSTEM_PREFIXES + _DIALECT_SYSTEM_PREFIXES.get(self.dialect, ())
        # BigQuery keeps a dotted path in one quoted name (`dataset.INFORMATION_SCHEMA.TABLES`)
        parts = {p for x in (name, db, (t.catalog or "").lower()) for p in x.split(".") if p}
        if isinstance(t.this, exp.Identifier) and any(t.this.args.get(k) for k in ("temporary", "global", "global_")):
            raise GuardRefusal(f"temporary table {shown} is not allowed; read the project's tables")
        if schema in system or db in system or name in system or parts & system \
                or any(p.startswith(prefixes) for p in parts - {db, (t.catalog or "").lower()} | {name}):
            raise GuardRefusal(
                f"system table {shown} is not allowed: the engine's catalog is not queryable; "
                "use lookup_schema/search_tables (the discovered schema) to learn tables and columns"
            )
        if self.schemas and schema and schema not in self.schemas:
            raise GuardRefusal(
                f"table {shown} is outside the project's schemas ({', '.join(sorted(self.schemas))})"
            )
        kept = self._kept_case(t)
        if not self.known_tables:
            if not _PLAIN_NAME.match(t.name) or (t.db and not _PLAIN_NAME.match(t.db)):
                raise GuardRefusal(f"table name {shown} is not a plain table name (files and URLs are not allowed)")
            if kept:
                raise GuardRefusal(f"table {shown}: a quoted name in {kept!r} case names another object than the "
                                   "same name unquoted, and the guard has no catalog to tell which; write it unquoted")
            return None
        if self._fallback_name(t) in self._same_but_case or (
                not t.db and any(c.fqn.lower() in self._same_but_case for c in self._by_name.get(name, []))):
            raise GuardRefusal(f"table {shown}: the catalog has tables whose names differ only in case, and the "
                               "guard cannot tell which one the engine reads")
        info = self.resolve(t)
        if info is not None and kept and not self._names_exactly(t, info):
            raise GuardRefusal(f"table {shown} is not the catalog's {info.fqn}: this engine keeps the case of a quoted "
                               f"name; write it unquoted or as the catalog spells it")
        if info is not None and self.dialect in _NAMES_AS_STORED and (
                t.name != info.name or (t.db and t.db != info.schema_name)):
            raise GuardRefusal(f"table {shown} is not written as the catalog spells it ({info.fqn}): on this engine "
                               "a name in another case may be another table; write it as the catalog does")
        if info is None:
            cands = self._by_name.get(t.name.lower(), []) if not t.db else []
            if len(cands) > 1:
                raise GuardRefusal(f"table name {shown} is ambiguous ({', '.join(sorted(c.fqn for c in cands))}); "
                                   "qualify it with its schema")
            raise GuardRefusal(f"unknown table {shown}: not in the project's catalog")
        return info

    # ------------------------------------------------------------------ PostgreSQL field notation

    def _check_field_notation(self, root: exp.Expression, scopes: list[Scope],
                              infos: dict[int, TableInfo | None]) -> None:
        """PostgreSQL reads ``t.f`` / ``(t).f`` as ``f(t)`` when ``f`` is no column of ``t``: a function
        call (``c.to_json`` serialises the whole row) that no function check sees. Only real columns pass."""
        for node in root.find_all(exp.Dot):
            # over anything but a name: ``(t).f``, ``(ARRAY[...])[1].f``, ``(SELECT ...).f``, ``g.q[1].f`` are
            # ``f(value)`` when f is no field of the value (red team 14 ran ts_stat on a text through the last three:
            # every tenant's e-mail); no analytical statement needs a field of a composite value
            if not (isinstance(node.this, (exp.Identifier, exp.Var)) and isinstance(node.expression, exp.Func)):
                raise GuardRefusal(
                    f"field selection {node.sql(dialect=self.dialect)[:80]} is not allowed (PostgreSQL may read it "
                    "as a function call); select the column as alias.column"
                )
        for scope in scopes:
            for col in scope.columns:
                if not col.table:
                    continue
                src = None
                for sc in _chain(scope):
                    if col.table in sc.sources:
                        src = sc.sources[col.table]
                        break
                name = col.name.lower()
                if isinstance(src, exp.Table) and isinstance(src.this, exp.Identifier):
                    info = infos.get(id(src))
                    if info is not None:
                        ok = name in {c.name.lower() for c in info.columns}
                    else:
                        ok = name not in _PG_ROW_FUNCTIONS
                    where = info.fqn if info is not None else src.name
                elif isinstance(src, Scope) and isinstance(_lateral_body(src.expression), (exp.Select, exp.SetOperation)):
                    e = _lateral_body(src.expression)
                    if any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
                           for p in e.selects):
                        ok = name not in _PG_ROW_FUNCTIONS
                    else:
                        ta = src.expression.args.get("alias") if isinstance(src.expression, exp.Lateral) else \
                            src.expression.parent.args.get("alias") if src.expression.parent else None
                        names = [c.name for c in ta.columns] if isinstance(ta, exp.TableAlias) and ta.columns \
                            else e.named_selects
                        ok = name in {n.lower() for n in names}
                    where = col.table
                else:
                    # a function in FROM (unnest, generate_series, jsonb_each_text, ...) or anything else: its alias
                    # is its value, so g.ts_stat is ts_stat(g), which runs the text it is given (red team 12 read
                    # every tenant's e-mail; g.pg_terminate_backend ended another session). Only its own columns pass
                    node = src.expression if isinstance(src, Scope) else src
                    ok = isinstance(node, exp.Expression) and name in self._function_columns(node)
                    where = f"the function's result {col.table}"
                if not ok:
                    known = not (isinstance(src, exp.Table) and isinstance(src.this, exp.Identifier)
                                 and infos.get(id(src)) is None)
                    raise GuardRefusal(
                        f"{col.sql(dialect=self.dialect)} is not a column of {where} (PostgreSQL would call "
                        f"{col.name}({col.table}) on the whole row); check the column name" if known else
                        f"{col.sql(dialect=self.dialect)} may be a function call on the whole row (PostgreSQL field "
                        "notation) and the guard has no catalog to tell; use a project's guard (--project)"
                    )

    def _function_columns(self, src: exp.Expression) -> set[str]:
        """The columns a function in FROM gives on PostgreSQL. With an alias's column list: those names, and a JSON
        reader's own names past the list's length (a partial list renames the first columns); without one: the
        JSON readers' own names (key, value), else the alias (a function of one value is named after it), else the
        function's own name. Nothing else: over a column list the alias is no column, so ``a.ts_stat`` over
        ``... AS ts_stat(q)`` is the call ``ts_stat(a)`` (red team 13 read every tenant's e-mail through it)."""
        ta = src.args.get("alias")
        alias = ta.name.lower() if isinstance(ta, exp.TableAlias) and ta.this is not None and ta.name else ""
        listed = [c.name.lower() for c in ta.columns] if isinstance(ta, exp.TableAlias) else []
        call = src if isinstance(src, (exp.Unnest, exp.Func)) else src.this
        text = call.sql(dialect=self.dialect) if isinstance(call, exp.Expression) else ""
        m = re.match(r"\s*([A-Za-z_][\w$]*)\s*\(", text)
        fname = (m.group(1) if m else "").lower()
        own = _PG_FUNCTION_COLUMNS.get(fname)
        if listed:
            return set(listed) | set((own or ())[len(listed):])
        if own is not None:
            return set(own)
        return {alias} if alias else ({fname} if fname else set())

    # ------------------------------------------------------------------ tenant filter

    def _is_shared(self, t: exp.Table, info: TableInfo | None) -> bool:
        """Whether ``shared_tables`` exempts this table from the tenant predicate. A bare name there names one table:
        the catalog's only table of that name (two schemas holding ``plans``: only a qualified entry shares one),
        or without a catalog the table in the project's default schema; ``plans`` never shared ``sales.plans``
        of another schema. A table that has the tenant column holds tenants' rows and is never exempt."""
        col = self.tenant.column.lower()
        if info is not None:
            if any(c.name.lower() == col for c in info.columns):
                return False
            bare = info.name.lower()
            return info.fqn.lower() in self._shared or (bare in self._shared and len(self._by_name.get(bare, [])) == 1)
        name = self._fallback_name(t)
        if name in self._shared:
            return True
        schema = (t.db or "").lower()
        return t.name.lower() in self._shared and (not schema or schema == (self.default_schema or ""))

    def _tenant_kind(self, info: TableInfo | None) -> str | None:
        """How the table's tenant column compares: "number" for a number type, "text" for any other known type
        (MySQL compares a text or binary column with a number as numbers, so ``tenant_id = 1`` also reads '01' and
        '1-eu' (red team 9), an ENUM by position and a SET as a bitmask (red team 10)); None when unknown."""
        typ = self._tenant_type(info)
        return None if not typ else "number" if _NUMBER_TYPE.search(typ) else "text"

    def _tenant_type(self, info: TableInfo | None) -> str:
        """The catalog's type of the table's tenant column ("" when the table or the type is unknown)."""
        col = self.tenant.column.lower()
        return next((c.type.strip() for c in (info.columns if info is not None else [])
                     if c.name.lower() == col and (c.type or "").strip()), "")

    def _tenant_float(self, info: TableInfo | None) -> bool:
        return bool(_FLOAT_TYPE.search(self._tenant_type(info)))

    def _tenant_literal(self, info: TableInfo | None) -> exp.Expression:
        v = self.tenant.value
        kind = self._tenant_kind(info)
        if kind == "number" and not _NUMBER.fullmatch(str(v)):
            # MySQL reads int_col = 'acme' as int_col = 0: another tenant's rows
            raise GuardRefusal(f"the tenant value {v!r} is no number, and {self.tenant.column} of {info.fqn} is a "
                               "number column: the project's tenant_filter.value must be its number")
        if kind == "number" or (kind is None and isinstance(v, int)):
            return exp.Literal.number(v)
        return exp.Literal.string(str(v))

    def _literal_matches(self, lit: exp.Expression, info: TableInfo | None) -> bool:
        """``lit`` names exactly the tenant's value for this table: a string on a text column; on a number column
        the number, or the same digits quoted (every engine reads ``int_col = '1'`` as 1)."""
        if not isinstance(lit, exp.Literal):
            return False
        want = self.tenant.value
        kind = self._tenant_kind(info)
        if kind == "number":
            return bool(_NUMBER.fullmatch(str(want))) and lit.this == str(want)
        if kind == "text" or not isinstance(want, int):
            return lit.is_string and lit.this == str(want)
        return not lit.is_string and str(lit.this) == str(want)

    def _might_have(self, scope: Scope, alias: str, col: str) -> bool:
        """Could the engine bind an unqualified ``col`` to source ``alias`` of this scope?"""
        node, src = scope.selected_sources.get(alias, (None, None))
        if isinstance(src, exp.Table):
            if not isinstance(src.this, exp.Identifier):
                return False  # a bounded series: its column is the alias's
            info = self.resolve(src) if self.known_tables else None
            if info is None:
                return True
            return any(c.name.lower() == col for c in info.columns)
        if isinstance(src, Scope):
            e = src.expression
            ta = node.args.get("alias") if isinstance(node, exp.Expression) else None
            if isinstance(ta, exp.TableAlias) and ta.columns:
                return any(c.name.lower() == col for c in ta.columns)
            if isinstance(e, (exp.Select, exp.SetOperation)):
                if any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
                       for p in e.selects):
                    return True
                return col in {n.lower() for n in e.named_selects}
        return True

    def _binds_to(self, column: exp.Column, scope: Scope, alias: str) -> bool:
        col = self.tenant.column.lower()
        if column.name.lower() != col:
            return False
        if column.table:
            # where the engine folds names, they were folded (_check): "O" and o are two aliases there
            same = column.table.lower() == alias.lower() if self._alias_any_case else column.table == alias
            return same and alias in scope.selected_sources
        # unqualified: binds to the one source that has the column; a SELECT alias of that
        # name would win in some engines where the relation lacks it, so refuse the ambiguity
        select = scope.expression
        for p in select.expressions if isinstance(select, exp.Select) else []:
            if isinstance(p, exp.Alias) and p.alias.lower() == col and not (
                isinstance(p.this, exp.Column) and p.this.name.lower() == col
            ):
                return False
        cands = [a for a in scope.selected_sources if self._might_have(scope, a, col)]
        return cands == [alias]

    def _is_tenant_pred(self, cond: exp.Expression, scope: Scope, alias: str, info: TableInfo | None) -> bool:
        if isinstance(cond, exp.In) and len(cond.expressions) == 1 and not cond.args.get("query") \
                and not cond.args.get("unnest") and not cond.args.get("field") and not cond.args.get("is_global"):
            cond = exp.EQ(this=cond.this, expression=cond.expressions[0])  # tenant_id IN (7)
        if not isinstance(cond, exp.EQ):
            return False
        left, right = cond.this, cond.expression
        if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
            left, right = right, left
        if not isinstance(left, exp.Column) or not self._literal_matches(right, info):
            return False
        return self._binds_to(left, scope, alias) and self._tenant_spelled(left, info)

    def _exact_pred(self, pred: exp.Expression, info: TableInfo | None) -> exp.Expression | None:
        """MySQL/MariaDB compare text under the column's collation, by default case- and accent-insensitive and
        padded: ``tenant_id = 'acme'`` also reads 'ACME', 'acme  ' and 'acmé' (red team 10); PostgreSQL does so
        for citext and nondeterministic collations. Beside the predicate (which the engine's index serves) the same
        value compared as bytes (MySQL) or under the "C" collation (PostgreSQL, and DuckDB for a column declared
        COLLATE NOCASE); None where no such rule applies."""
        if self.dialect not in ("mysql", "postgres", "duckdb") or not self._tenant_collated(info):
            return None
        if isinstance(pred, exp.In) and len(pred.expressions) == 1:  # tenant_id IN ('acme') (red team 11)
            pred = exp.EQ(this=pred.this, expression=pred.expressions[0])
        col = pred.this if isinstance(pred.this, exp.Column) else pred.expression
        lit = pred.expression if isinstance(pred.this, exp.Column) else pred.this
        if not (isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string):
            raise GuardRefusal("the tenant predicate could not be made exact; write it as "
                               f"{self.tenant.column} = {self._tenant_literal(info).sql(dialect=self.dialect)}")
        if self.dialect == "duckdb":  # a column declared COLLATE NOCASE equates 'ACME' and 'acme'
            return exp.EQ(this=exp.Collate(this=col.copy(), expression=exp.to_identifier("C")), expression=lit.copy())
        if self.dialect == "postgres":
            # citext and nondeterministic collations equate 'ACME' and 'acme' (red team 11): compared under "C"
            return exp.EQ(this=exp.Collate(this=exp.Cast(this=col.copy(), to=exp.DataType.build("TEXT")),
                                           expression=exp.to_identifier("C", quoted=True)), expression=lit.copy())
        # the column's bytes as utf8mb4 (a latin1 column's 'acmé' is other bytes than the statement's)
        as_bytes = sqlglot.parse_one("CAST(CAST(x AS CHAR CHARACTER SET utf8mb4) AS BINARY)", read="mysql")
        as_bytes.find(exp.Column).replace(col.copy())
        return exp.EQ(this=as_bytes, expression=exp.Cast(this=lit.copy(), to=exp.DataType.build("BINARY")))

    def _tenant_collated(self, info: TableInfo | None) -> bool:
        """The tenant column may compare under a collation: any type but a number, a uuid or a binary one, whose
        comparisons are exact already and which a cast to text would change (session 25's review: an upper-case
        uuid value matched nothing). Fail closed: a type the guard does not know (PostgreSQL's citext reported as
        USER-DEFINED let 'ACME' through: red team 12) gets the exact comparison. DuckDB: its text types only."""
        typ = self._tenant_type(info)
        if not typ:
            return False
        if self.dialect == "duckdb":
            return bool(_COLLATED_TYPE.search(typ))
        return not _NUMBER_TYPE.search(typ) and not _EXACT_TYPE.search(typ)

    def _tenant_spelled(self, column: exp.Column, info: TableInfo | None) -> bool:
        """On an engine that keeps a quoted name's case (PostgreSQL, Snowflake, Redshift; SQL Server under a
        case-sensitive collation), ``"TENANT_ID"`` can be another column than ``tenant_id``: the predicate's column
        must be the catalog's tenant column as the engine spells it (red team 10 read tenant 2's rows on
        PostgreSQL through ``e."TENANT_ID" = 1``)."""
        if info is None or (self._fold is None and self.dialect != "tsql"):
            return True
        want = self.tenant.column.lower()
        spelled = [c.name for c in info.columns if c.name.lower() == want]
        if self._fold is not None and self._fold_dialect != "postgres":
            spelled = [self._fold(n) for n in spelled]  # the Snowflake adapter lists upper-case names in lower case
        return len(spelled) == 1 and column.name == spelled[0]

    @staticmethod
    def _conjuncts(cond: exp.Expression | None) -> list[exp.Expression]:
        if cond is None:
            return []
        while isinstance(cond, exp.Paren):
            cond = cond.this
        if isinstance(cond, exp.And):
            return SQLGuard._conjuncts(cond.this) + SQLGuard._conjuncts(cond.expression)
        return [cond]

    def _check_tenant(self, root: exp.Expression, scopes: list[Scope], real: list[exp.Table],
                      infos: dict[int, TableInfo | None]) -> exp.Expression:
        covered: set[int] = set()
        for scope in scopes:
            covered |= self._check_scope(scope, infos)
        for t in real:
            if id(t) not in covered:
                raise GuardRefusal(
                    f"table {t.sql(dialect=self.dialect)} is read where the tenant filter cannot be proved; "
                    "read it in a plain SELECT ... FROM with the tenant predicate in WHERE"
                )
        return root

    def _check_scope(self, scope: Scope, infos: dict[int, TableInfo | None]) -> set[int]:
        select = scope.expression
        sources = {a: (n, s) for a, (n, s) in scope.selected_sources.items()
                   if isinstance(s, exp.Table) and isinstance(s.this, exp.Identifier)}
        if not sources:
            return set()
        if not isinstance(select, exp.Select):
            return set()  # not covered: refused by the caller
        where = select.args.get("where")
        conds = self._conjuncts(where.this if where else None)
        # ON predicates: an inner join's ON filters every side; a LEFT join's ON
        # filters only the joined table; RIGHT/FULL ON filters nothing safely.
        own_on: dict[str, list[exp.Expression]] = {}
        for join in select.args.get("joins") or []:
            side = (join.side or "").upper()
            kind = (join.kind or "").upper()
            on = self._conjuncts(join.args.get("on"))
            if join.args.get("method"):  # ASOF (its last condition is >=), NATURAL, POSITIONAL: no ON counts
                continue
            if not side and kind in ("", "INNER"):
                conds = conds + on
            elif side == "LEFT" and isinstance(join.this, exp.Table):
                own_on.setdefault(join.this.alias_or_name, []).extend(on)
        using: dict[str, str] = {}  # a join's USING (..., tenant column): the joined alias -> the one it pairs with
        seen: list[str] = []  # the catalog tables since the last comma that have the tenant column
        col = self.tenant.column.lower()
        for source in [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or []):
            t = source.this if source is not None else None
            if isinstance(source, exp.Join) and not any(source.args.get(k) for k in (
                    "on", "using", "kind", "side", "method")):
                seen = []  # a comma binds looser than JOIN: `a, b JOIN c USING (t)` pairs c with b only
            if not (isinstance(t, exp.Table) and isinstance(t.this, exp.Identifier)):
                seen = []  # a subquery or function before it: which source USING pairs with is not traced here
                continue
            names = {u.name.lower() for u in (source.args.get("using") or []) if isinstance(u, exp.Identifier)}
            side = (source.side or "").upper() if isinstance(source, exp.Join) else ""
            if col in names and side in ("", "LEFT") and (source.kind or "").upper() in ("", "INNER", "OUTER") \
                    and not source.args.get("method") and len(seen) == 1:
                using[t.alias_or_name] = seen[0]  # (two before it: the engine merges or refuses; not traced)
            info = infos.get(id(t))
            if info is None or any(c.name.lower() == col for c in info.columns):
                seen.append(t.alias_or_name)
        covered: set[int] = set()
        proved: set[str] = set()
        pending: list[tuple[str, exp.Table, TableInfo | None]] = []
        for alias, (_node, table) in sources.items():
            info = infos.get(id(table))
            covered.add(id(table))
            if self._is_shared(table, info):
                continue
            if info is not None and not any(c.name.lower() == col for c in info.columns):
                raise GuardRefusal(
                    f"table {table.sql(dialect=self.dialect)} has no {self.tenant.column} column, so the tenant "
                    "filter cannot be applied; the project must list it in tenant_filter.shared_tables if it "
                    "holds no tenant's data"
                )
            mine = conds + own_on.get(alias, [])
            join = table.parent if isinstance(table.parent, exp.Join) else None
            found = next((c for c in mine if self._is_tenant_pred(c, scope, alias, info)), None)
            if found is None:
                pending.append((alias, table, info))
                continue
            proved.add(alias)
            exact = self._exact_pred(found, info)
            if exact is not None and not any(m == exact for m in mine):
                # beside the predicate, where it is (WHERE, an inner JOIN's ON, its own LEFT JOIN's ON): moved to
                # WHERE it would drop an outer join's unmatched rows (session 25's review)
                found.replace(exp.Paren(this=exp.and_(found.copy(), exact, copy=False)))
        # a source tied by its tenant column to a proved one (x.tenant_id = y.tenant_id AND-ed in WHERE or an inner
        # ON, or in its own LEFT JOIN's ON; USING (..., tenant_id)) holds only that tenant's rows too
        while pending:
            tied = [item for item in pending if self._tied(item[0], item[2], conds + own_on.get(item[0], []),
                                                           using.get(item[0]), proved, scope, sources, infos)]
            if not tied:
                break
            for item in tied:
                proved.add(item[0])
                pending.remove(item)
        for alias, table, info in pending:
            join = table.parent if isinstance(table.parent, exp.Join) else None
            if self.inject_tenant:
                # the source's own alias (or name) node, quoted as it is: an unquoted o beside "O" is the other
                ta = table.args.get("alias")
                ident = ta.this if isinstance(ta, exp.TableAlias) and isinstance(ta.this, exp.Identifier) \
                    else table.this
                pred = exp.EQ(this=exp.Column(this=exp.to_identifier(self.tenant.column), table=ident.copy()),
                              expression=self._tenant_literal(info))
                exact = self._exact_pred(pred, info)
                if exact is not None:
                    pred = exp.and_(pred, exact, copy=False)
                if join is not None and (join.side or "").upper() == "LEFT" and join.args.get("on") is not None:
                    # the joined side of a LEFT JOIN: in its ON, so the left rows are kept as the query meant
                    join.set("on", exp.and_(join.args["on"], pred, copy=False))
                else:
                    select.where(pred, append=True, copy=False)
                continue
            tie = (", or its tenant column equal to a filtered table's of the same FROM"
                   if self._tenant_kind(info) == "number" else "")
            raise GuardRefusal(
                f"table {table.sql(dialect=self.dialect)} must be filtered by "
                f"{alias}.{self.tenant.column} = {self._tenant_literal(info).sql(dialect=self.dialect)} in the same SELECT "
                f"(an AND-ed predicate in WHERE or an inner JOIN's ON{tie}; OR does not count)"
            )
        return covered

    def _tied(self, alias: str, info: TableInfo | None, mine: list[exp.Expression], using: str | None,
              proved: set[str], scope: Scope, sources: dict, infos: dict[int, TableInfo | None]) -> bool:
        """``alias``'s tenant column equals a proved source's: by an equality among ``mine`` (the conjuncts that
        filter it) or a USING over the tenant column. Number columns only: text compares under a collation that
        may equate 'ACME' and 'acme' (MySQL's default, SQL Server's, PostgreSQL's citext and nondeterministic
        collations: red team 11), and text against a number by conversion."""
        kind = self._tenant_kind(info)
        if kind != "number":
            return False

        def alike(other: str) -> bool:
            oinfo = infos.get(id(sources[other][1])) if other in sources else None
            return other in proved and other in sources and self._tenant_kind(oinfo) == kind \
                and not self._tenant_float(oinfo)

        if self._tenant_float(info):
            return False  # a bigint above 2**53 equals a double it is not (red team 12: another tenant's row)

        if using is not None and alike(using):
            return True
        for c in mine:
            if not (isinstance(c, exp.EQ) and isinstance(c.this, exp.Column) and isinstance(c.expression, exp.Column)):
                continue
            for mine_side, other_side in ((c.this, c.expression), (c.expression, c.this)):
                if not (self._binds_to(mine_side, scope, alias) and self._tenant_spelled(mine_side, info)):
                    continue
                other = other_side.table
                if not other:
                    continue
                if self._alias_any_case:
                    other = next((a for a in sources if a.lower() == other.lower()), other)
                if other == alias or not alike(other):
                    continue
                oinfo = infos.get(id(sources[other][1]))
                if self._binds_to(other_side, scope, other) and self._tenant_spelled(other_side, oinfo):
                    return True
        return False

    # ------------------------------------------------------------------ PII lineage

    def _lineage(self, root: exp.Expression, real: list[exp.Table],
                 infos: dict[int, TableInfo | None]) -> tuple[list[int], bool, int | None, list[str]]:
        with_pii = []
        for t in real:
            info = infos.get(id(t))
            if info is not None and info.fqn.lower() in self.pii:
                with_pii.append(t.sql(dialect=self.dialect))
            elif info is None and (self._pii_bare or self._pii_qualified):
                with_pii.append(t.sql(dialect=self.dialect))  # catalog-less: any table may hold them
        if not with_pii:
            return [], False, None, []
        if any(isinstance(n, exp.Pivot) for n in root.walk()):
            raise GuardRefusal(
                f"PIVOT/UNPIVOT is not allowed on tables with PII columns ({', '.join(sorted(set(with_pii)))}); "
                "aggregate with CASE WHEN ... instead"
            )
        copy = root.copy()
        schema: dict[str, dict[str, dict[str, str]]] = {}
        ids = {id(t): t for t in real}
        # resolve each real table to its schema in the copy, so that qualification sees what the engine sees
        for orig, node in zip(root.find_all(exp.Table), copy.find_all(exp.Table)):
            if id(orig) not in ids:
                continue
            info = infos.get(id(orig))
            if info is not None:
                # unquoted: the guard resolves names case-insensitively, and so does the schema below
                node.set("db", exp.to_identifier(info.schema_name, quoted=False))
                node.set("this", exp.to_identifier(info.name, quoted=False))
                schema.setdefault(info.schema_name, {})[info.name] = {c.name: "TEXT" for c in info.columns}
            node.set("catalog", None)
        pii = {}
        for fqn, cols in self.pii.items():
            pii[fqn] = cols
        try:
            lin = compute(copy, self.dialect, schema, pii, self._pii_bare)
        except LineageError as exc:
            raise GuardRefusal(
                f"the statement reads tables with PII columns ({', '.join(sorted(set(with_pii)))}) and which "
                f"outputs derive from them could not be traced ({exc}); select explicit columns "
                "(no *, no whole-row references) from plainly joined tables"
            ) from None
        return lin.masked_outputs, lin.touches_pii, lin.output_count, lin.output_names
