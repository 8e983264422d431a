"""Query slots: how many queries a warehouse runs at once, whoever sends them.

Every query a warehouse opened with ``open_warehouse`` runs inside ``slot(cfg)``. The core knows no
orchestrator: by default a slot is a no-op. An orchestrator installs a slot factory for the code it runs
(``use_slots``); the Prefect layer installs one that holds a Prefect global concurrency limit named after
the warehouse (``limit_name``), so that every worker of a pool shares one limit per warehouse.

The factory lives in a context variable: it applies to the thread that installed it and to the threads
that inherit its context (the explorer runs a turn's queries on a pool under a copy of its context).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

from ..models import TableInfo, WarehouseConfig

SlotFactory = Callable[[WarehouseConfig], AbstractContextManager]

_factory: ContextVar[SlotFactory | None] = ContextVar("assay_query_slot", default=None)

# the settings that say which server and database a warehouse is (never credentials)
_IDENTITY_KEYS = ("path", "host", "hostaddr", "port", "dbname", "database", "account")
_URL = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?:[^/@\s]*@)?(?P<rest>[^?\s]*)", re.IGNORECASE)
_KV = re.compile(r"(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")


def _dsn_identity(dsn: str) -> str:
    """Host, port and database of a DSN: user, password and options left out."""
    m = _URL.match(dsn.strip())
    if m:
        return f"{m.group('scheme').lower()}://{m.group('rest')}"
    kv = dict(_KV.findall(dsn))
    return " ".join(f"{k}={kv[k]}" for k in ("host", "hostaddr", "port", "dbname") if k in kv)


def connection_identity(cfg: WarehouseConfig) -> dict[str, Any]:
    """What tells this warehouse from another: its kind and where it is. Never a secret."""
    s = cfg.settings or {}
    ident: dict[str, Any] = {"kind": cfg.kind}
    for k in _IDENTITY_KEYS:
        if s.get(k) is not None:
            v = s[k]
            if k == "path" and cfg.kind == "duckdb":
                v = os.path.realpath(os.path.expanduser(str(v)))
            ident[k] = str(v).lower() if k in ("host", "account") else str(v)
    if s.get("dsn"):
        ident["dsn"] = _dsn_identity(str(s["dsn"]))
    return ident


def limit_name(cfg: WarehouseConfig) -> str:
    """``assay-warehouse-<kind>-<12 hex>``: the same for every project and worker that reaches the same
    warehouse; a hash, so no host name or path shows in the Prefect UI."""
    blob = json.dumps(connection_identity(cfg), sort_keys=True)
    return f"assay-warehouse-{cfg.kind}-{hashlib.sha256(blob.encode()).hexdigest()[:12]}"


def limit_size(cfg: WarehouseConfig) -> int:
    return max(1, int(cfg.max_concurrent_queries))


def slot(cfg: WarehouseConfig) -> AbstractContextManager:
    """The context one query runs in: the installed factory's, or nothing."""
    factory = _factory.get()
    return factory(cfg) if factory is not None else nullcontext()


@contextmanager
def use_slots(factory: SlotFactory | None) -> Iterator[None]:
    """Run the block (and the threads started under copies of its context) with ``factory``'s slots."""
    token = _factory.set(factory)
    try:
        yield
    finally:
        _factory.reset(token)


def _trace_path() -> str | None:
    return os.environ.get("ASSAY_QUERY_TRACE") or None


@contextmanager
def traced(kind: str) -> Iterator[None]:
    """With ``ASSAY_QUERY_TRACE=FILE``: one line per statement (pid, kind, start, end: epoch seconds) appended
    to FILE, written when it ends, by every process. How many statements a warehouse ran at once, counted
    at the engine call (``bench/scale_out.py --load``), not by the slots that bound them."""
    path = _trace_path()
    if path is None:
        yield
        return
    import time

    start = time.time()
    try:
        yield
    finally:
        line = f"{os.getpid()} {kind} {start:.6f} {time.time():.6f}\n".encode()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)  # one short write with O_APPEND: lines of processes never interleave
        finally:
            os.close(fd)


def peak_concurrency(lines) -> int:
    """The most statements of a trace that ran at the same moment."""
    events = []
    for line in lines:
        parts = line.split()
        if len(parts) == 4:
            events += [(float(parts[2]), 1), (float(parts[3]), -1)]
    now = peak = 0
    for _, d in sorted(events, key=lambda e: (e[0], e[1])):  # an end before a start at the same instant
        now += d
        peak = max(peak, now)
    return peak


class SlottedWarehouse:
    """A warehouse whose every statement (queries, samples, the catalog, cost estimates) takes a slot.
    Everything else is the wrapped adapter's."""

    def __init__(self, inner, cfg: WarehouseConfig):
        self._inner = inner
        self._cfg = cfg

    @property
    def inner(self):
        return self._inner

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def query(self, sql: str, *, row_cap: int, timeout_s: float):
        with slot(self._cfg), traced("query"):
            return self._inner.query(sql, row_cap=row_cap, timeout_s=timeout_s)

    def sample_rows(self, table: TableInfo, n: int = 3) -> list[dict]:
        with slot(self._cfg), traced("sample_rows"):
            return self._inner.sample_rows(table, n)

    def list_tables(self) -> list[TableInfo]:
        with slot(self._cfg), traced("list_tables"):
            return self._inner.list_tables()

    def explain_cost(self, sql: str):
        with slot(self._cfg), traced("explain_cost"):
            return self._inner.explain_cost(sql)

    def __repr__(self) -> str:
        return f"SlottedWarehouse({self._inner!r})"
