"""The guarded, self-healing SQL executor every phase uses.

Every statement passes the guard first. A refused statement is not "fixed"
behind the model's back: the refusal goes back to the caller (and from there
to the model, which can correct itself). A statement the warehouse rejects is
sent to the LLM with the error and the warehouse's dialect-specific fix
prompt, up to ``MAX_SQL_FIXES`` times; every attempt is kept.

What comes back is safe to show: the output columns the guard traced to a PII column are
masked in the result before anyone (explorer, digest, analyst, verifier, report) sees it, and
engine error text is scrubbed of the values it quotes (see ``warehouse.redact``). Whatever goes
wrong in one query (an engine error, a timeout, a value the adapter could not read, a bug) is
that query's error, never an exception out of ``run``; only an unreachable warehouse is.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import GuardRefusal, LLMError, QueryError, QueryTimeout, TransientError, UserError
from ..limits import MAX_SQL_FIXES
from ..llm.base import LLM, LLMRequest, Message, SystemBlock
from ..models import SQLAttempt, TokenUsage, WarehouseConfig
from ..pii import MASK
from ..warehouse.base import QueryResult, Warehouse
from ..warehouse.guard import GuardVerdict, SQLGuard
from ..warehouse.redact import scrub_error


@dataclass
class ExecOutcome:
    sql: str                      # the statement that finally ran (or the last attempt)
    result: QueryResult | None = None
    error: str | None = None
    refused: str | None = None
    attempts: list[SQLAttempt] = field(default_factory=list)
    fixes: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.result is not None


def apply_section(template: str, name: str, value: str | None) -> str:
    """Mustache-style conditional section: kept and filled when ``value``, else removed."""
    pat = re.compile(r"\{\{#" + name + r"\}\}(.*?)\{\{/" + name + r"\}\}", re.DOTALL)
    if value:
        return pat.sub(lambda m: m.group(1).replace("{{" + name + "}}", value), template)
    return pat.sub("", template)


_SQL_FENCE = re.compile(r"```(?:sql|SQL)?\s*(.*?)```", re.DOTALL)


def extract_sql(text: str) -> str:
    m = _SQL_FENCE.search(text or "")
    if m:
        return m.group(1).strip().rstrip(";").strip()
    t = (text or "").strip()
    if t.startswith("{"):
        try:
            import json

            obj = json.loads(t)
            for k in ("query", "sql", "fixed_sql"):
                if isinstance(obj.get(k), str):
                    return obj[k].strip()
        except ValueError:
            pass
    return t.rstrip(";").strip()


def mask_outputs(res: QueryResult, positions: list[int]) -> QueryResult:
    """The result with the output columns at ``positions`` (0-based) masked: every non-null
    value becomes ``MASK`` (a string column), nulls stay null (their count is not personal)."""
    table = res.table
    for i in sorted({p for p in positions if 0 <= p < table.num_columns}):
        col = table.column(i)
        masked = pc.if_else(pc.is_valid(col), pa.scalar(MASK), pa.scalar(None, pa.string()))
        table = table.set_column(i, table.schema.field(i).name, masked)
    if table is not res.table:
        res.table = table
    return res


def same_names(traced: list[str], names: list[str]) -> bool:
    """Whether the result's column names are the traced ones, where the statement fixes them (case aside: engines
    fold unquoted names; DuckDB's ``id_1`` for a second ``id`` is the same name)."""
    if not traced:
        return True
    if len(traced) != len(names):
        return False
    for want, got in zip(traced, names):
        if want and want.lower() != got.lower() and not re.fullmatch(re.escape(want.lower()) + r"_\d+", got.lower()):
            return False
    return True


class Executor:
    def __init__(self, warehouse: Warehouse, guard: SQLGuard, cfg: WarehouseConfig, llm: LLM | None = None):
        self.warehouse = warehouse
        self.guard = guard
        self.cfg = cfg
        self.llm = llm

    @cached_property
    def _catalog_names(self) -> frozenset[str]:
        """The names of the guard's catalog (its tables and their columns): words an error may keep."""
        return frozenset([t.name for t in self.guard.tables] + [c.name for t in self.guard.tables for c in t.columns])

    def _vet(self, sql: str) -> GuardVerdict:
        try:
            return self.guard.vet(sql)
        except GuardRefusal:
            raise
        except Exception as exc:  # a statement the guard cannot reason about is refused, not run
            raise GuardRefusal(f"the guard could not check this statement ({type(exc).__name__})") from None

    def _run_once(self, sql: str) -> tuple[QueryResult, str]:
        """The statement's result, and the statement as sent (the guard's, with a tenant predicate written in)."""
        v = self._vet(sql)
        # an error may quote a value the engine met: a PII column's (the result would have masked it), or another
        # tenant's row (PostgreSQL evaluates a cheap condition before the tenant predicate, and may fail on a row
        # the predicate would have removed). Then it is kept only in a form redact.py knows, its names the
        # catalog's or the statement's
        strict = v.touches_pii or self.guard.tenant is not None
        known = self._catalog_names if strict else ()
        try:
            res = self.warehouse.query(v.sql, row_cap=self.cfg.row_cap, timeout_s=self.cfg.statement_timeout_s)
        except QueryTimeout as exc:
            raise QueryTimeout(scrub_error(str(exc))) from None  # the adapter's own words and its limit
        except QueryError as exc:
            raise QueryError(scrub_error(str(exc), strict=strict, known=known, statement=v.sql)) from None
        except (UserError, TransientError):
            raise  # the warehouse is gone (or must be fixed by its owner): not this query's error
        except Exception as exc:  # whatever an adapter let through: this query failed, the run goes on
            msg = scrub_error(str(exc).strip().splitlines()[0][:300] if str(exc).strip() else "",
                              strict=strict, known=known, statement=v.sql)
            raise QueryError(f"the query failed: {type(exc).__name__}{': ' + msg if msg else ''}") from None
        positions = list(v.masked_outputs)
        traced = getattr(v, "output_count", None)  # the width the guard traced (None: no PII read)
        if traced is not None and traced != res.table.num_columns:
            positions = list(range(res.table.num_columns))  # the engine expanded what the guard traced: fail closed
        elif traced is not None and not same_names(getattr(v, "output_names", None) or [], res.table.column_names):
            # the result's columns are not the ones the guard traced (a table rebuilt with its columns in another
            # order since the schema was cached): which one is PII is unknown, so every one is masked
            positions = list(range(res.table.num_columns))
        return mask_outputs(res, positions), v.sql

    def _fix(self, sql: str, error: str, evidence: str | None, purpose: str) -> tuple[str, TokenUsage]:
        prompt = apply_section(self.warehouse.sql_fix_prompt(), "VERIFICATION_CONTEXT", evidence)
        req = LLMRequest(
            purpose=f"fix:{purpose}",
            system=[SystemBlock(prompt, cache=True)],
            # the error first: a model reads a request's head, and a long query pushed it out of view
            messages=[Message("user", f"Error:\n{error}\n\nQuery:\n```sql\n{sql}\n```\n\n"
                                      "Reply with the corrected query in one ```sql block.")],
            max_tokens=1500,
            meta={"sql": sql, "error": error, "evidence": evidence or ""},
        )
        resp = self.llm.complete(req)
        return extract_sql(resp.text), resp.usage

    def run(self, sql: str, *, evidence: str | None = None, fix: bool = True, purpose: str = "explore") -> ExecOutcome:
        t0 = time.perf_counter()
        out = ExecOutcome(sql=sql)
        current = sql
        for i in range(MAX_SQL_FIXES + 1):
            try:
                out.result, sent = self._run_once(current)
                # under an injected tenant filter the statement that ran holds the predicate the guard wrote in: a
                # step, a claim's verification SQL and the report show that one, so that a reader who runs it gets
                # the same number (a new user ran the shown count SQL and got every tenant's 1,863 for our 1,072)
                out.sql = sent if self.guard.inject_tenant and self.guard.tenant is not None and sent else current
                out.error = None
                break
            except GuardRefusal as r:
                out.attempts.append(SQLAttempt(sql=current, error=f"refused: {r.reason}"))
                out.refused, out.sql, out.error = r.reason, current, None
                break
            except QueryTimeout as exc:
                out.attempts.append(SQLAttempt(sql=current, error=str(exc)))
                out.error, out.sql = str(exc), current
                break
            except QueryError as exc:
                out.attempts.append(SQLAttempt(sql=current, error=str(exc)))
                out.error, out.sql = str(exc), current
                if not fix or self.llm is None or i == MAX_SQL_FIXES:
                    break
                try:
                    fixed, usage = self._fix(current, str(exc), evidence, purpose)
                except LLMError as lexc:
                    out.error = f"{exc} (and the SQL fixer failed: {lexc})"
                    break
                out.usage = out.usage.add(usage)
                out.fixes += 1
                if not fixed or fixed.strip() == current.strip():
                    continue
                current = fixed
        out.duration_ms = (time.perf_counter() - t0) * 1000
        if out.ok and out.attempts:
            out.attempts.append(SQLAttempt(sql=out.sql, error=None))
        return out
