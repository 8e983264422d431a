"""A run's session: everything one phase needs, built lazily from the run id.

Each phase takes a run id and rebuilds what it needs from the store, so any phase can run in another
thread, process or machine, and a retried phase picks up where the last attempt left off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..analysis.step_index import StepIndex
from ..explore.executor import Executor
from ..llm import build_llm
from ..llm.base import LLM
from ..models import DiscoveryRun, DomainPack, Project, TableInfo
from ..packs import pack_for_project
from ..schema.catalog import join_hints
from ..schema.discovery import discover_schema
from ..schema.index import SchemaIndex, project_schema_index
from ..schema.provider import SchemaProvider
from ..settings import Settings, load_settings
from ..store import Store, open_store
from ..vectors.embedder import get_embedder, get_schema_embedder
from ..vectors.index import deferred_index, step_vectors
from ..warehouse import build_guard, open_warehouse, sampler_for


@dataclass
class RunSession:
    """Everything one run needs, built lazily from ids."""

    run_id: str
    settings: Settings = field(default_factory=load_settings)

    @cached_property
    def store(self) -> Store:
        return open_store(self.settings)

    @cached_property
    def run(self) -> DiscoveryRun:
        return self.store.get_run(self.run_id)

    def refresh(self) -> DiscoveryRun:
        self.__dict__.pop("run", None)
        return self.run

    @cached_property
    def project(self) -> Project:
        return self.store.get_project(self.run.project_id)

    @cached_property
    def pack(self) -> DomainPack:
        p = pack_for_project(self.project)
        if self.run.areas:
            p = p.model_copy(update={"areas": [a for a in p.areas if a.id in set(self.run.areas)]})
        return p

    @cached_property
    def warehouse(self):
        return open_warehouse(self.project.warehouse)

    @cached_property
    def tables(self) -> list[TableInfo]:
        """The run's tables, with the project's descriptions (the schema phase's, read from the cache)."""
        return discover_schema(self.store, self.project, lambda: self.warehouse, key=self.run.schema_key,
                               warn=False)  # the schema phase warned

    @cached_property
    def column_names(self) -> set[str]:
        """Every column name of the run's tables (a scan lead's headline names them as they are)."""
        return {c.name for t in self.tables for c in t.columns}

    @cached_property
    def llm(self) -> LLM | None:
        if self.run.analyst == "statistical":
            return None
        return build_llm(self.project.llm)

    @cached_property
    def executor(self) -> Executor:
        """The run's executor. In a statistical run every statement is the product's own (``generated_executor``)."""
        if self.run.analyst == "statistical":
            return self.generated_executor
        guard = build_guard(self.warehouse, self.project.warehouse, self.tables)
        return Executor(self.warehouse, guard, self.project.warehouse, self.llm)

    @cached_property
    def generated_executor(self) -> Executor:
        """The executor of the SQL the product writes itself (the statistical planner's probes, its detectors' and
        counts' queries, the scan, adoption): under a tenant filter the guard writes the predicate into it, as it
        does for sample rows. A model's own statement is refused without the predicate instead, with the reason,
        unless the project injects it (``inject_tenant_filter``); either way no statement reads another tenant."""
        cfg = self.project.warehouse
        if cfg.tenant_filter is not None and not cfg.inject_tenant_filter:
            cfg = cfg.model_copy(update={"inject_tenant_filter": True})
        return Executor(self.warehouse, build_guard(self.warehouse, cfg, self.tables), self.project.warehouse,
                        self.llm)

    @cached_property
    def index(self):
        """Opened on first use, in whichever thread first reads or writes vectors (``DeferredIndex``)."""
        return deferred_index(self.settings)

    @cached_property
    def embedder(self):
        return get_embedder(self.settings.embedding_model)

    @cached_property
    def step_index(self) -> StepIndex:
        return StepIndex(step_vectors(self.settings), self.embedder, self.run_id)

    @cached_property
    def schema_index(self) -> SchemaIndex:
        return project_schema_index(self.project, self.index, get_schema_embedder(self.settings.embedding_model))

    def provider(self) -> SchemaProvider:
        return SchemaProvider(
            self.tables,
            sampler=sampler_for(self.warehouse, self.project.warehouse, self.tables),
            searcher=self.schema_index.search,
            pii=self.project.warehouse.pii_columns,
            joins=join_hints(self.tables),
        )

    def bump(self, counters: dict[str, int]) -> None:
        self.store.bump(self.run_id, counters)

    def close(self) -> None:
        wh = self.__dict__.get("warehouse")
        if wh is not None:
            wh.close()
        # forget what holds the connection: a failed phase's traceback keeps this session alive (Prefect
        # keeps the exception in the task's state), and with it the engine's connection until exit
        for name in ("executor", "provider", "warehouse"):
            self.__dict__.pop(name, None)
