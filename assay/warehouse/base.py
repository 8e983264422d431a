"""The Warehouse protocol every adapter implements, and its result type."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import pyarrow as pa

from ..models import TableInfo, WarehouseConfig

FIX_PROMPTS = Path(__file__).parent / "prompts"
DEFAULT_TIMEOUT_S = WarehouseConfig.model_fields["statement_timeout_s"].default
DEFAULT_MEMORY_LIMIT_MB = WarehouseConfig.model_fields["memory_limit_mb"].default


@dataclass
class QueryResult:
    table: pa.Table
    truncated: bool = False
    total_rows: int | None = None  # the true count when the engine can give it
    duration_ms: float = 0.0
    columns: list[str] = field(default_factory=list)

    @property
    def row_count(self) -> int:
        return self.total_rows if self.total_rows is not None else self.table.num_rows


@runtime_checkable
class Warehouse(Protocol):
    kind: str
    dialect: str  # sqlglot dialect name

    def list_tables(self) -> list[TableInfo]: ...

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]: ...

    def query(self, sql: str, *, row_cap: int, timeout_s: float) -> QueryResult: ...

    def quote(self, ident: str) -> str: ...

    def sql_fix_prompt(self) -> str: ...

    def health_check(self) -> None: ...

    def explain_cost(self, sql: str) -> dict | None:
        """The engine's own cost estimate of a SELECT without running it, as {"unit", "value"}
        (PostgreSQL: plan cost units; Snowflake: bytes assigned), or None when it cannot tell."""
        ...

    def close(self) -> None: ...


def fix_prompt_for(kind: str) -> str:
    return (FIX_PROMPTS / f"sql_fix_{kind}.md").read_text()


MAX_RESULT_BYTES = 256 * 2**20  # what one result may hold in this process: the row cap counts rows, not bytes
FETCH_ROWS = 1_000  # rows an adapter reads at a time, its result's size checked after each batch


def check_result_bytes(n: int) -> None:
    """Stop reading a result that has grown past ``MAX_RESULT_BYTES`` (long values in many rows: red team 8 grew
    the client past 3.6 GB within the row cap)."""
    if n > MAX_RESULT_BYTES:
        from ..errors import QueryError

        raise QueryError(f"the result holds more than {MAX_RESULT_BYTES // 2**20} MB; select fewer or shorter "
                         "columns, or aggregate")


def fetch_capped(cur, row_cap: int, *, before_batch=None) -> list:
    """Up to ``row_cap + 1`` rows from a DB-API cursor (one more than the cap says the result was cut), read
    ``FETCH_ROWS`` at a time with the result's size checked after each batch; ``before_batch`` runs before each
    read (a deadline check). Every adapter whose driver streams reads its result through this."""
    got: list = []
    size = 0
    while len(got) <= row_cap:
        if before_batch is not None:
            before_batch()
        batch = cur.fetchmany(min(FETCH_ROWS, row_cap + 1 - len(got)))
        if not batch:
            break
        got.extend(batch)
        size += rows_bytes(batch)
        check_result_bytes(size)
    return got


def rows_bytes(rows) -> int:
    """About how many bytes fetched rows hold: text and binary by their length, lists, tuples and dicts (arrays,
    JSON, records as drivers load them) by what they hold, anything else as 8."""
    n = 0
    stack = [v for row in rows for v in row]
    while stack:
        v = stack.pop()
        if isinstance(v, (str, bytes, bytearray, memoryview)):
            n += len(v)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        else:
            n += 8
    return n


MAX_COMMENT_CHARS = 300  # a table or column comment is documentation, not a manual


def clean_comment(text: str | None, limit: int = MAX_COMMENT_CHARS) -> str:
    """A warehouse comment as one line of at most ``limit`` characters ('' for none)."""
    if not text:
        return ""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[:limit - 1].rstrip() + "…"
