"""The project's schema index: one vector per table, re-embedded only on change."""

from __future__ import annotations

import math
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from ..models import TableInfo
from ..vectors.embedder import Embedder
from ..vectors.index import VectorIndex, schema_collection
from .catalog import is_archive_like
from .discovery import table_hash, table_text


@dataclass
class IndexStats:
    embedded: int
    removed: int
    unchanged: int


ARCHIVE_PENALTY = 0.1  # an archive copy ranks below a live table of similar score
CONFIG_PENALTY = 0.05  # configuration and lookup tables rarely hold what an analyst searches for
_CONFIG = re.compile(r"(^|_)(cfg|config|param|params|lkp|lookup|map|mapping|tanim|kod|schluessel|setting|settings)(_|$)",
                     re.IGNORECASE)
CANDIDATES_PER_RESULT = 20  # 8 (50 at least) missed live tables behind their copies: recall 0.85 -> 0.92
MIN_CANDIDATES = 200
SIZE_PRIOR = 0.05  # among near-equal scores, a table with real data beats a small lookup table

_pending: dict[str, Future] = {}
_pending_lock = threading.Lock()
_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="schema-index")


class SchemaIndex:
    def __init__(self, index: VectorIndex, embedder: Embedder, project_id: str,
                 glossary: dict[str, str] | None = None):
        self.index = index
        self.embedder = embedder
        self.collection = schema_collection(project_id)
        self.glossary = glossary

    def sync_in_background(self, tables: list[TableInfo], joins: dict[str, list[str]] | None = None) -> Future:
        """Start ``sync``; ``search`` waits for it. The embedding model loads meanwhile, off the start-up path."""
        with _pending_lock:
            fut = _pool.submit(self.sync, tables, joins)
            _pending[self.collection] = fut
        return fut

    def wait(self, timeout: float | None = None) -> IndexStats | None:
        with _pending_lock:
            fut = _pending.get(self.collection)
        return fut.result(timeout) if fut is not None else None

    def sync(self, tables: list[TableInfo], joins: dict[str, list[str]] | None = None) -> IndexStats:
        """Bring the collection in line with ``tables``; only changed tables are embedded."""
        self.index.ensure(self.collection, self.embedder.dim)
        current = self.index.payloads(self.collection)
        want = {t.fqn: t for t in tables}
        hashes = {t.fqn: table_hash(t, self.glossary) for t in tables}
        changed = [t for t in tables if current.get(t.fqn, {}).get("hash") != hashes[t.fqn]]
        removed = [k for k in current if k not in want]
        if changed:
            vecs = self.embedder.embed([table_text(t, glossary=self.glossary) for t in changed])
            items = []
            for t, v in zip(changed, vecs):
                items.append((t.fqn, v.tolist(), {
                    "hash": hashes[t.fqn], "fqn": t.fqn, "rows": int(t.row_count),
                    "joins": len((joins or {}).get(t.fqn, [])),
                }))
            for i in range(0, len(items), 256):
                self.index.upsert(self.collection, items[i:i + 256])
        self.index.delete(self.collection, removed)
        return IndexStats(embedded=len(changed), removed=len(removed), unchanged=len(tables) - len(changed))

    def search(self, query: str, top_k: int) -> list[tuple[str, float]]:
        """Cosine search, then a rerank that favours larger, more-joined tables on near-ties."""
        self.wait()
        if not self.index.exists(self.collection):
            return []
        v = self.embedder.embed_one(query)
        # archive copies (_bkp, _tmp, dated) and configuration tables repeat the words of the tables
        # they serve: by raw cosine they can fill a short candidate list and push the live table out
        # before the rerank sees it. Draw CANDIDATES_PER_RESULT per result (at least MIN_CANDIDATES),
        # then rank copies after live tables, as the catalog does.
        hits = self.index.search(self.collection, v.tolist(), top_k=max(top_k * CANDIDATES_PER_RESULT,
                                                                         MIN_CANDIDATES))
        ranked = []
        for h in hits:
            rows = float(h.payload.get("rows", 0))
            joins = float(h.payload.get("joins", 0))
            prior = SIZE_PRIOR * min(1.0, math.log10(rows + 1) / 7) + 0.01 * min(joins, 4) / 4
            name = h.key.split(".")[-1]
            if is_archive_like(name):
                prior -= ARCHIVE_PENALTY
            elif _CONFIG.search(name):
                prior -= CONFIG_PENALTY
            ranked.append((h.key, h.score + prior, h.score))
        ranked.sort(key=lambda r: (-r[1], r[0]))
        return [(k, round(raw, 4)) for k, _, raw in ranked[:top_k]]
