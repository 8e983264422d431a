"""The per-warehouse query limit: a Prefect global concurrency limit that every worker shares.

Its name comes from the warehouse's connection identity (``assay.warehouse.slots.limit_name``), its size
from the project (``warehouse.max_concurrent_queries``, default 2). It is created (or set to the project's
size) the first time a process needs it; an operator sees it, and who holds its slots, under Concurrency
in the Prefect UI. ``phase_slots`` is what the phase tasks run the core under: every warehouse statement
takes one slot for as long as it runs.

Why not ``prefect.concurrency.sync.concurrency``: it is the same server API, but each use starts a lease
renewal thread with its own client and joins it on exit, behind one acquisition queue per limit. Here it
cost 0.8-1.7 s per statement (0.02-0.2 s with the lease below; ``bench/warehouse_slots.py``), more than
most exploration queries take. A statement cannot outlive its timeout, so one lease that outlasts the
timeout needs no renewal: a slot costs two requests, and a worker killed while it holds one gives it back
when the lease runs out.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

import httpx
from prefect.client.orchestration import get_client
from prefect.exceptions import ObjectAlreadyExists
from prefect.settings import PREFECT_API_URL

from assay.models import WarehouseConfig
from assay.warehouse.slots import limit_name, limit_size, use_slots

log = logging.getLogger("assay")

MIN_LEASE_S = 60.0  # the server's floor
LEASE_MARGIN_S = 30.0  # beyond the statement timeout: the engine's own cancel takes a moment
FIRST_WAIT_S = 0.05  # a query waiting for a slot polls from this, doubling
MAX_WAIT_STEP_S = 2.0  # ... up to this: a freed slot is taken within it

_ensured: dict[tuple[str, str], int] = {}
_lock = threading.Lock()
_clients: dict[str, object] = {}
_client_lock = threading.Lock()


def _api() -> str:
    return str(PREFECT_API_URL.value() or "")


def _client():
    """One API client per process and server, shared by threads (a slot costs two requests; a new
    client costs more)."""
    api = _api()
    with _client_lock:
        c = _clients.get(api)
        if c is None:
            c = _clients[api] = get_client(sync_client=True)
            c.__enter__()
        return c


def ensure_limit(name: str, size: int) -> None:
    """Create the limit, or set its size, once per process, server and size."""
    key = (_api(), name)
    with _lock:
        if _ensured.get(key) == size:
            return
        client = _client()
        try:
            client.upsert_global_concurrency_limit_by_name(name, size)
        except ObjectAlreadyExists:  # another worker created it between our read and our create
            client.upsert_global_concurrency_limit_by_name(name, size)
        _ensured[key] = size
        log.info("warehouse query limit %s: %d at once", name, size)


def _holder():
    """The task run that holds the slot (shown in the UI), when there is one."""
    from prefect.client.schemas.objects import ConcurrencyLeaseHolder
    from prefect.context import FlowRunContext, TaskRunContext

    t = TaskRunContext.get()
    if t is not None:
        return ConcurrencyLeaseHolder(type="task_run", id=t.task_run.id)
    f = FlowRunContext.get()
    if f is not None and f.flow_run is not None:
        return ConcurrencyLeaseHolder(type="flow_run", id=f.flow_run.id)
    return None


def acquire(name: str, lease_s: float) -> UUID | None:
    """Wait for a slot of ``name``; the lease id, or None when the limit does not exist (deleted by hand)."""
    client = _client()
    holder = _holder()
    attempt = 0
    while True:
        try:
            resp = client.increment_concurrency_slots_with_lease(
                names=[name], slots=1, mode="concurrency", lease_duration=lease_s, holder=holder)
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code != 423:
                raise
            # the server's Retry-After starts from a 2 s guess of how long a slot is held: poll from 50 ms up
            server = float(exc.response.headers.get("Retry-After") or MAX_WAIT_STEP_S)
            time.sleep(min(server, FIRST_WAIT_S * 2 ** attempt, MAX_WAIT_STEP_S) * random.uniform(0.8, 1.2))
            attempt += 1
            continue
        data = resp.json()
        if not data.get("limits"):
            return None
        return UUID(data["lease_id"])


RELEASE_RETRY_S = (0.2, 1.0)  # a busy server (SQLite "database is locked") refuses a release now and then


def release(lease_id: UUID) -> None:
    for wait in (*RELEASE_RETRY_S, None):
        try:
            _client().release_concurrency_slots_with_lease(lease_id)
            return
        except Exception as exc:  # noqa: BLE001 - the lease runs out by itself; a failed release never fails the query
            if wait is not None:
                time.sleep(wait)
                continue
            # the slot stays taken until the server's repossessor revokes the expired lease (a server started
            # with that service disabled never gives it back: bench/README.md, scale-out load figure)
            log.warning("could not give back warehouse slot %s (it frees itself when its lease ends): %s",
                        lease_id, exc)


@contextmanager
def warehouse_slot(cfg: WarehouseConfig) -> Iterator[None]:
    name = limit_name(cfg)
    ensure_limit(name, limit_size(cfg))
    lease = acquire(name, max(MIN_LEASE_S, float(cfg.statement_timeout_s) + LEASE_MARGIN_S))
    if lease is None:
        with _lock:
            _ensured.pop((_api(), name), None)  # gone: created again by the next statement
        log.warning("warehouse query limit %s does not exist: this statement ran without a slot", name)
    try:
        yield
    finally:
        if lease is not None:
            release(lease)


def phase_slots():
    """The context the phase tasks run the core in: warehouse statements take the warehouse's slot."""
    return use_slots(warehouse_slot)
