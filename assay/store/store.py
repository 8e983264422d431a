"""The result store: projects, runs, steps, discoveries, feedback, caches.

Everything goes through the pymongo API, so the embedded default (tinymongo
on a SQLite file under ``ASSAY_HOME``) and a real MongoDB (``MONGODB_URI``)
run the same code. Documents are stored in pydantic's JSON mode (ISO
timestamps), so both backends hold the same bytes.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Iterable

from pymongo.errors import BulkWriteError, DuplicateKeyError

from ..errors import ConfigError, NotFound, WarehouseUnreachable
from ..models import (
    AreaLog,
    DiscoveryResult,
    DiscoveryRun,
    ExplorationStep,
    Feedback,
    Insight,
    Project,
    TableInfo,
    utcnow,
)
from ..settings import Settings


_DASHED_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f-]*")


def _doc(model, **extra) -> dict:
    d = model.model_dump(mode="json", by_alias=True)
    d.update(extra)
    return d


def _strip(d: dict | None) -> dict | None:
    if d is None:
        return None
    d = dict(d)
    d.pop("_id", None)
    return d


INDEXES = {
    "steps": ["run_id"], "runs": ["project_id", "status"], "areas": ["run_id"], "results": ["project_id"],
    "feedback": ["project_id"], "schemas": ["project_id"],
}


class Store:
    def __init__(self, db: Any, *, backend: str = "tinymongo"):
        self.db = db
        self.backend = backend
        for col, fields in INDEXES.items():  # idempotent; lookups by run or project stay O(log n)
            for f in fields:
                self.db[col].create_index(f)
        # tinymongo's SQLite backend serialises writes itself; this lock keeps
        # read-modify-write helpers (area results) atomic inside one process.
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ projects

    def save_project(self, project: Project) -> None:
        self.db.projects.replace_one({"_id": project.id}, _doc(project, _id=project.id), upsert=True)

    def get_project(self, project_id: str) -> Project:
        d = self.db.projects.find_one({"_id": project_id})
        if d is None:
            known = ", ".join(p.id for p in self.list_projects()) or "none yet; use `assay project apply -f FILE`"
            raise NotFound(f"no project {project_id!r} (known: {known})")
        return Project.model_validate(_strip(d))

    def list_projects(self) -> list[Project]:
        return [Project.model_validate(_strip(d)) for d in self.db.projects.find({}).sort("_id", 1)]

    # ------------------------------------------------------------------ runs

    def create_run(self, run: DiscoveryRun) -> None:
        self.db.runs.replace_one({"_id": run.id}, _doc(run, _id=run.id), upsert=True)

    def get_run(self, run_id: str) -> DiscoveryRun:
        if _DASHED_ID.fullmatch(run_id):  # a Prefect flow run id as the UI shows it: the run's id with dashes
            run_id = run_id.replace("-", "")
        d = self.db.runs.find_one({"_id": run_id})
        if d is None:
            d = self._by_prefix(self.db.runs, run_id)
        return DiscoveryRun.model_validate(_strip(d))

    def _by_prefix(self, col, prefix: str) -> dict:
        # runs are addressed by a unique prefix in the CLI, as git does
        matches = [d for d in col.find({}, {"_id": 1}) if str(d["_id"]).startswith(prefix)]
        if len(matches) == 1:
            return col.find_one({"_id": matches[0]["_id"]})
        if not matches:
            raise NotFound(f"no run {prefix!r}; `assay runs` lists them")
        ids = sorted(str(d["_id"]) for d in matches)
        shown = ", ".join(i[:max(len(prefix) + 4, 8)] for i in ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise NotFound(f"run prefix {prefix!r} is ambiguous ({len(matches)} runs: {shown})")

    def resolve_run_id(self, prefix: str) -> str:
        return self.get_run(prefix).id

    def update_run(self, run_id: str, **fields: Any) -> None:
        clean = {}
        for k, v in fields.items():
            if hasattr(v, "model_dump"):
                v = v.model_dump(mode="json")
            elif hasattr(v, "value"):
                v = v.value
            elif hasattr(v, "isoformat"):
                v = v.isoformat()
            clean[k] = v
        self.db.runs.update_one({"_id": run_id}, {"$set": clean})

    def bump(self, run_id: str, counters: dict[str, int]) -> None:
        """Atomically add to telemetry counters (``$inc``)."""
        inc = {}
        for k, v in counters.items():
            if not v:
                continue
            inc[k if k.startswith("telemetry.") else f"telemetry.{k}"] = v
        if inc:
            self.db.runs.update_one({"_id": run_id}, {"$inc": inc})

    def list_runs(self, project_id: str | None = None, limit: int = 20) -> list[DiscoveryRun]:
        q = {"project_id": project_id} if project_id else {}
        docs = self.db.runs.find(q).sort("started_at", -1).limit(limit)
        return [DiscoveryRun.model_validate(_strip(d)) for d in docs]

    def finished_runs(self) -> dict[str, str]:
        """Ended runs and when they ended (ISO time), for the orphan sweep."""
        docs = self.db.runs.find({"status": {"$nin": ["pending", "running"]}}, {"_id": 1, "finished_at": 1})
        return {d["_id"]: d["finished_at"] for d in docs if d.get("finished_at")}

    def crashed_run_ids(self) -> set[str]:
        return {d["_id"] for d in self.db.runs.find({"status": "crashed"}, {"_id": 1})}

    def active_run_ids(self) -> set[str]:
        return {d["_id"] for d in self.db.runs.find({"status": {"$in": ["pending", "running"]}}, {"_id": 1})}

    # ------------------------------------------------------------------ steps

    def add_step(self, step: ExplorationStep) -> None:
        """Write a completed step once (one insert). Re-adding the same step is a no-op."""
        key = f"{step.run_id}:{step.step:05d}"
        try:
            # insert_many: tinymongo's insert_one re-reads the whole collection to check _id
            # uniqueness (O(n) per write); insert_many lets SQLite enforce it (constant time)
            self.db.steps.insert_many([_doc(step, _id=key)])
        except (DuplicateKeyError, BulkWriteError):
            if self.db.steps.find_one({"_id": key}, {"_id": 1}) is None:
                raise

    def record_step(self, run_id: str, step: int, counters: dict[str, int]) -> None:
        """Progress and telemetry of one step in a single update."""
        update: dict = {"$set": {"steps_done": step}}
        inc = {(k if k.startswith("telemetry.") else f"telemetry.{k}"): v for k, v in counters.items() if v}
        if inc:
            update["$inc"] = inc
        self.db.runs.update_one({"_id": run_id}, update)

    def steps(self, run_id: str) -> list[ExplorationStep]:
        docs = self.db.steps.find({"run_id": run_id}).sort("step", 1)
        return [ExplorationStep.model_validate(_strip(d)) for d in docs]

    def step_count(self, run_id: str) -> int:
        return self.db.steps.count_documents({"run_id": run_id})

    def delete_run(self, run_id: str) -> None:
        """A run and everything it wrote: steps, areas, candidates, recommendations, result, feedback."""
        with self._lock:
            for col in ("steps", "areas", "area_runs", "candidates_errors", "feedback"):
                self.db[col].delete_many({"run_id": run_id})
            for col in ("candidates", "scans", "recommendations", "results", "runs"):
                self.db[col].delete_many({"_id": run_id})

    def delete_project(self, project_id: str) -> None:
        """A project and everything stored for it: its runs (``delete_run``), feedback and cached schema."""
        for run in self.list_runs(project_id, limit=10**9):
            self.delete_run(run.id)
        with self._lock:
            self.db.feedback.delete_many({"project_id": project_id})
            self.drop_schema_cache(project_id)
            self.db.projects.delete_many({"_id": project_id})

    # ------------------------------------------------------------------ per-area results

    def save_area(self, run_id: str, area: str, insights: list[Insight], log: AreaLog) -> bool:
        """One document per run and area, written whole: an area analysed twice (a retry, a duplicate
        submission, a worker that died after writing) holds its insights once. A success replaces what
        was there; a failure is written only where no success is stored, so a failed attempt never
        erases insights an earlier attempt saved. Returns whether it was written."""
        key = f"{run_id}:{area}"
        doc = {
            "_id": key,
            "run_id": run_id,
            "area": area,
            "ok": log.ok,
            "insights": [i.model_dump(mode="json") for i in insights],
            "log": log.model_dump(mode="json"),
            "updated_at": utcnow().isoformat(),
        }
        if log.ok:
            self.db.areas.replace_one({"_id": key}, doc, upsert=True)
            return True
        fields = {k: v for k, v in doc.items() if k != "_id"}
        for _ in range(2):
            if self.db.areas.update_one({"_id": key, "ok": False}, {"$set": fields}).matched_count:
                return True
            try:
                self.db.areas.insert_one(doc)
                return True
            except DuplicateKeyError:  # there is a document: a success (kept), or a failure written meanwhile
                if self.area_done(run_id, area) is not None:
                    return False
        return False

    def beat_area(self, run_id: str, area: str, **fields: Any) -> None:
        """Where an area running as its own flow run lives (host, pid, flow run) and its last heartbeat."""
        doc = {"run_id": run_id, "area": area,
               **{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in fields.items()}}
        self.db.area_runs.update_one({"_id": f"{run_id}:{area}"}, {"$set": doc}, upsert=True)

    def area_beat(self, run_id: str, area: str) -> dict | None:
        return _strip(self.db.area_runs.find_one({"_id": f"{run_id}:{area}"}))

    def area_done(self, run_id: str, area: str) -> AreaLog | None:
        """The log of the area's stored success, or None (never analysed, or failed)."""
        d = self.db.areas.find_one({"_id": f"{run_id}:{area}"})
        return AreaLog.model_validate(d["log"]) if d is not None and d.get("ok") else None

    def area_results(self, run_id: str) -> dict[str, tuple[list[Insight], AreaLog]]:
        out = {}
        for d in self.db.areas.find({"run_id": run_id}).sort("area", 1):
            out[d["area"]] = (
                [Insight.model_validate(i) for i in d["insights"]],
                AreaLog.model_validate(d["log"]),
            )
        return out

    # ------------------------------------------------------------------ discoveries

    def save_result(self, result: DiscoveryResult) -> None:
        self.db.results.replace_one(
            {"_id": result.run_id}, _doc(result, _id=result.run_id), upsert=True
        )

    def get_result(self, run_id: str) -> DiscoveryResult:
        d = self.db.results.find_one({"_id": run_id})
        if d is None:
            raise NotFound(f"run {run_id} has no saved discovery (yet)")
        return DiscoveryResult.model_validate(_strip(d))

    def has_result(self, run_id: str) -> bool:
        return self.db.results.find_one({"_id": run_id}, {"_id": 1}) is not None

    # ------------------------------------------------------------------ recommendations

    def put_recommendations(self, run_id: str, doc: dict) -> None:
        """``doc``: recommendations (JSON), log, note (why there are none)."""
        self.db.recommendations.replace_one({"_id": run_id}, {"_id": run_id, **doc}, upsert=True)

    def get_recommendations(self, run_id: str) -> dict:
        return _strip(self.db.recommendations.find_one({"_id": run_id})) or {}

    # ------------------------------------------------------------------ statistical candidates

    def get_candidates(self, run_id: str, areas: list[str] | None = None) -> list[dict] | None:
        """The run's cached candidates; None when absent or assigned among other areas than ``areas``."""
        d = self.db.candidates.find_one({"_id": run_id})
        if d is None or (areas is not None and sorted(d.get("areas") or []) != sorted(areas)):
            return None
        return d["items"]

    def put_candidates(self, run_id: str, items: list[dict], areas: list[str] | None = None) -> None:
        self.db.candidates.replace_one({"_id": run_id}, {"_id": run_id, "items": items, "areas": areas or []},
                                       upsert=True)

    # ------------------------------------------------------------------ the LLM run's statistical scan

    def put_scan(self, run_id: str, steps: list[ExplorationStep]) -> None:
        """The probe steps of the statistical scan an LLM run ran before exploring (explore/leads.py), numbered
        as the scan ran them: what adopting its findings (run/adopt.py) rebuilds them from, without re-scanning."""
        self.db.scans.replace_one({"_id": run_id}, {"_id": run_id, "steps": [_doc(s) for s in steps]},
                                  upsert=True)

    def scan_steps(self, run_id: str) -> list[ExplorationStep] | None:
        """The stored scan's probe steps; None when the run stored no scan (off, failed, or an older run)."""
        d = self.db.scans.find_one({"_id": run_id})
        return None if d is None else [ExplorationStep.model_validate(s) for s in d["steps"]]

    def log_candidate_error(self, run_id: str, step: int, error: str) -> None:
        self.db.candidates_errors.insert_one({"run_id": run_id, "step": step, "error": error})

    def recent_results(self, project_id: str, limit: int = 5, exclude: str | None = None) -> list[DiscoveryResult]:
        docs = self.db.results.find({"project_id": project_id}).sort("created_at", -1).limit(limit + 1)
        out = [DiscoveryResult.model_validate(_strip(d)) for d in docs if d["_id"] != exclude]
        return out[:limit]

    # ------------------------------------------------------------------ feedback

    def add_feedback(self, fb: Feedback) -> None:
        key = f"{fb.run_id}:{fb.insight_id}"
        self.db.feedback.replace_one({"_id": key}, _doc(fb, _id=key), upsert=True)

    def feedback(self, project_id: str) -> list[Feedback]:
        docs = self.db.feedback.find({"project_id": project_id}).sort("created_at", 1)
        return [Feedback.model_validate(_strip(d)) for d in docs]

    # ------------------------------------------------------------------ caches

    def get_schema(self, key: str) -> list[TableInfo] | None:
        d = self.db.schemas.find_one({"_id": key})
        if d is None:
            return None
        return [TableInfo.model_validate(t) for t in d["tables"]]

    def put_schema(self, key: str, project_id: str, tables: Iterable[TableInfo]) -> bool:
        """Cache a discovered schema; False when the cache already holds exactly these tables (a re-discovery
        of an unchanged warehouse: rewriting 2,000 tables cost 8.6 s of a 12.5 s unchanged re-index)."""
        import hashlib
        import json

        dumped = [t.model_dump(mode="json", by_alias=True) for t in tables]
        fingerprint = hashlib.sha256(json.dumps(dumped, sort_keys=True, default=str).encode()).hexdigest()
        old = self.db.schemas.find_one({"_id": key}, {"fingerprint": 1, "project_id": 1})
        if old is not None and old.get("fingerprint") == fingerprint and old.get("project_id") == project_id:
            return False
        doc = {"_id": key, "project_id": project_id, "tables": dumped, "fingerprint": fingerprint,
               "updated_at": utcnow().isoformat()}
        self.db.schemas.replace_one({"_id": key}, doc, upsert=True)
        return True

    def get_table_notes(self, hashes: list[str]) -> dict[str, str]:
        """LLM-written table descriptions by content hash (assay.schema.describe)."""
        out: dict[str, str] = {}
        for i in range(0, len(hashes), 500):
            for d in self.db.table_notes.find({"_id": {"$in": hashes[i:i + 500]}}):
                out[d["_id"]] = d["text"]
        return out

    def put_table_notes(self, notes: dict[str, str], *, model: str = "") -> None:
        now = utcnow().isoformat()
        for h, text in notes.items():
            self.db.table_notes.replace_one({"_id": h}, {"_id": h, "text": text, "model": model, "created_at": now},
                                            upsert=True)

    def drop_schema_cache(self, project_id: str) -> int:
        return self.db.schemas.delete_many({"project_id": project_id}).deleted_count

    def close(self) -> None:
        client = getattr(self, "client", None)
        if client is not None and hasattr(client, "close"):
            client.close()


_STORES: dict[str, Store] = {}
_STORES_LOCK = threading.Lock()


def open_store(settings: Settings, *, db_name: str = "assay") -> Store:
    """The process-wide store for these settings (MongoDB if MONGODB_URI is set)."""
    key = settings.mongodb_uri or str(settings.store_path)
    with _STORES_LOCK:
        if key in _STORES:
            return _STORES[key]
        if settings.mongodb_uri:
            import pymongo
            from pymongo.errors import PyMongoError

            client = pymongo.MongoClient(settings.mongodb_uri, serverSelectionTimeoutMS=5000, tz_aware=False)
            try:
                client.admin.command("ping")
            except PyMongoError as exc:
                raise WarehouseUnreachable(f"MongoDB at MONGODB_URI is unreachable: {exc.__class__.__name__}") from None
            dbn = client.get_default_database(default=db_name).name
            store = Store(client[dbn], backend="mongodb")
        else:
            import tinymongo

            settings.store_path.mkdir(parents=True, exist_ok=True)
            try:
                client = tinymongo.TinyMongoClient(str(settings.store_path), backend="sqlite")
            except Exception as exc:  # pragma: no cover - disk problems
                raise ConfigError(f"cannot open the store at {settings.store_path}: {exc}") from None
            store = Store(client[db_name], backend="tinymongo")
        store.client = client
        _STORES[key] = store
        return store


def close_store(settings: Settings) -> None:
    """Close and forget the process-wide store of these settings (a temporary one, whose folder goes next)."""
    with _STORES_LOCK:
        store = _STORES.pop(settings.mongodb_uri or str(settings.store_path), None)
    if store is not None:
        store.close()
