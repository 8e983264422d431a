"""`assay doctor PROJECT`: is everything a run needs reachable? One line per part, on one screen.

Each check is bounded in time, catches everything, and says in one line what it found or what
to fix: the warehouse (connect, the health check, the schema listing and the project's schemas),
the LLM (the provider's own reachability call ``ping(timeout_s)`` when it has one, else a
one-token completion), the result store (tinymongo file or MongoDB) and the vector index (Qdrant
local folder or server). Nothing is written anywhere; no secret is printed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .models import Project
from .settings import Settings

OK, FAIL, SKIP = "ok", "fail", "skip"


@dataclass
class Check:
    part: str
    status: str  # ok | fail | skip
    detail: str
    seconds: float = 0.0


def _timed(part: str, fn: Callable[[], tuple[str, str]]) -> Check:
    t0 = time.perf_counter()
    try:
        status, detail = fn()
    except Exception as exc:  # every failure is a line on the screen, never a traceback
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        status, detail = FAIL, f"{type(exc).__name__}: {msg}" if not _assay_error(exc) else msg
    return Check(part, status, detail[:300], time.perf_counter() - t0)


def _assay_error(exc: BaseException) -> bool:
    from .errors import AssayError

    return isinstance(exc, AssayError)


def check_warehouse(project: Project) -> tuple[str, str]:
    from .config import check_schema_found
    from .warehouse import holds_column, open_warehouse, tenant_row_counts

    cfg = project.warehouse
    wh = open_warehouse(cfg)  # connects and runs the adapter's health check
    try:
        tables = wh.list_tables()
        check_schema_found(cfg, tables)
        tenant = ""
        if cfg.tenant_filter is not None:  # a value the column cannot hold, or no row has, fails here as in a run
            rows = sum(t.row_count for t in tenant_row_counts(wh, cfg, tables)
                       if holds_column(t, cfg.tenant_filter.column))
            tenant = f" · tenant {cfg.tenant_filter.value!r}: {rows:,} rows"
        where = getattr(wh, "where", None) or cfg.settings.get("path") or cfg.settings.get("host") or ""
        schemas = ", ".join(sorted({t.schema_name for t in tables}))
        role = getattr(wh, "role_problem", None)
        problem = role() if callable(role) else None  # a superuser session: "ready" would be wrong (a new user)
        if problem:
            return FAIL, f"{cfg.kind} {where}".strip() + f": {problem}"
        return OK, f"{cfg.kind} {where}".strip() + f" · {len(tables)} tables in {schemas}{tenant}"
    finally:
        wh.close()


def check_llm(project: Project, timeout_s: float = 30.0) -> tuple[str, str]:
    from .llm import build_llm
    from .llm.base import LLMRequest, Message, SystemBlock
    from .llm.resolve import resolve_llm

    from .errors import MissingKey
    from .run.analyst import analyst_choice

    try:
        analyst_choice(project)  # what a run would refuse (analyst: llm, or a named provider, without its key)
    except MissingKey as e:
        return FAIL, str(e)
    why = resolve_llm(project.llm)
    if why.cfg is None:
        return SKIP, f"no LLM: the statistical analyst runs ({getattr(why, 'reason', '') or 'none configured'})"
    llm = build_llm(project.llm)
    if llm is None:
        return SKIP, "no LLM: the statistical analyst runs"
    label = f"{llm.name} {llm.model}".strip()
    ping = getattr(llm, "ping", None)
    if callable(ping):  # the provider's own cheapest proof (see /work/wt/notes/WH-DOCTOR.md)
        return OK, str(ping(timeout_s) or label)
    req = LLMRequest(purpose="doctor", system=[SystemBlock("Reply with OK.")],
                     messages=[Message(role="user", content="OK?")], max_tokens=1)
    r = llm.complete(req)
    return OK, f"{label} answered ({r.usage.input_tokens} input tokens)"


def check_store(settings: Settings) -> tuple[str, str]:
    from .store import open_store

    store = open_store(settings)
    n = len(store.list_projects())
    where = "MongoDB (MONGODB_URI)" if settings.mongodb_uri else f"tinymongo {settings.store_path}"
    return OK, f"{where} · {n} projects"


def check_vectors(settings: Settings) -> tuple[str, str]:
    from .vectors import open_index

    idx = open_index(settings)
    names = idx.collections()
    from .vectors.index import index_key

    kind, _ = index_key(settings)
    where = {"server": f"Qdrant server {settings.qdrant_url}", "local": f"Qdrant local {settings.qdrant_path}",
             "store": "vectors in the store (ASSAY_VECTOR_INDEX=store; shared by every process)"}[kind]
    return OK, f"{where} · {len(names)} collections"


def run_checks(project: Project, settings: Settings, *, llm_timeout_s: float = 30.0) -> list[Check]:
    return [
        _timed("warehouse", lambda: check_warehouse(project)),
        _timed("llm", lambda: check_llm(project, llm_timeout_s)),
        _timed("store", lambda: check_store(settings)),
        _timed("vector index", lambda: check_vectors(settings)),
    ]
