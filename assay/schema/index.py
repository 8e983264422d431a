"""The project's schema index: one vector per table, re-embedded only on change."""

from __future__ import annotations

import math
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..models import Project, TableInfo
from ..vectors.embedder import Embedder
from ..vectors.index import VectorIndex, schema_collection
from .catalog import family, is_archive_like
from .discovery import name_text, table_hash, table_text


@dataclass
class IndexStats:
    embedded: int
    removed: int
    unchanged: int


ARCHIVE_PENALTY = 0.1  # an archive copy ranks below a live table of similar score
# configuration and lookup tables rarely hold what an analyst searches for; at 0.05, a module's
# hundred `*_cfg_*` tables, which share its words, still filled the top ten of full-text vectors
# (development recall 0.901 -> 0.934 at 0.1; no change beyond)
CONFIG_PENALTY = 0.1
_CONFIG = re.compile(r"(^|_)(cfg|config|param|params|lkp|lookup|map|mapping|tanim|kod|schluessel|setting|settings)(_|$)",
                     re.IGNORECASE)
CANDIDATES_PER_RESULT = 20  # 8 (50 at least) missed live tables behind their copies: recall 0.85 -> 0.92
MIN_CANDIDATES = 200
SIZE_PRIOR = 0.05  # among near-equal scores, a table with real data beats a small lookup table
# A table's vector mixes the embedding of its full text (name, columns, types, glossary readings)
# with that of its name and the name's reading alone. The full text alone under-weights the name,
# the strongest signal in an ERP schema; the name alone misses what only the columns say.
# recall@10 on the 91 development queries of bench/schema_scale.py (with families collapsed):
# full text 0.945, name alone 0.967, mixed with name weight 0.3 0.967, 0.4 0.989, 0.5 0.978.
NAME_WEIGHT = 0.4

_pending: dict[str, Future] = {}
_pending_lock = threading.Lock()
_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="schema-index")


def _size_bucket(rows: float) -> float:
    """Row counts that the size prior cannot tell apart (a tenth of a decade) are not re-written."""
    return round(math.log10(max(float(rows), 0) + 1), 1)


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
        """Bring the collection in line with ``tables``; only changed tables are embedded.

        Vectors of another embedding model (``ASSAY_EMBEDDING_MODEL`` changed) are not comparable,
        and may not even have the same size: the collection is then rebuilt. The model is loaded
        only when something is to be embedded.
        """
        current = self.index.payloads(self.collection) if self.index.exists(self.collection) else None
        if current and any(p.get("model") != self.embedder.name for p in current.values()):
            self.index.drop(self.collection)
            current = None
        if current is None:
            self.index.ensure(self.collection, self.embedder.dim)
            current = {}
        want = {t.fqn: t for t in tables}
        hashes = {t.fqn: table_hash(t, self.glossary) for t in tables}
        changed = [t for t in tables if current.get(t.fqn, {}).get("hash") != hashes[t.fqn]]
        removed = [k for k in current if k not in want]
        # row counts and joins feed the rerank, not the vector: when they move, only the payload does
        moved = {}
        for t in tables:
            p = current.get(t.fqn)
            if p is None or p.get("hash") != hashes[t.fqn]:
                continue
            rows, n_joins = int(t.row_count), len((joins or {}).get(t.fqn, []))
            if _size_bucket(p.get("rows", 0)) != _size_bucket(rows) or p.get("joins") != n_joins:
                moved[t.fqn] = {"rows": rows, "joins": n_joins}
        self.index.set_payloads(self.collection, moved)
        if changed:
            vecs = self.table_vectors(changed)
            items = []
            for t, v in zip(changed, vecs):
                items.append((t.fqn, v.tolist(), {
                    "hash": hashes[t.fqn], "model": self.embedder.name, "fqn": t.fqn, "rows": int(t.row_count),
                    "joins": len((joins or {}).get(t.fqn, [])),
                }))
            for i in range(0, len(items), 256):
                self.index.upsert(self.collection, items[i:i + 256])
        self.index.delete(self.collection, removed)
        return IndexStats(embedded=len(changed), removed=len(removed), unchanged=len(tables) - len(changed))

    def table_vectors(self, tables: list[TableInfo]) -> np.ndarray:
        """One unit vector per table: the full text's and the name's embeddings, mixed."""
        full = self.embedder.embed([table_text(t, glossary=self.glossary) for t in tables])
        name = self.embedder.embed([name_text(t, self.glossary) for t in tables])
        mixed = (1 - NAME_WEIGHT) * full + NAME_WEIGHT * name
        return mixed / np.linalg.norm(mixed, axis=1, keepdims=True)

    def search(self, query: str, top_k: int) -> list[tuple[str, float, list[str]]]:
        """Cosine search, then a rerank that favours larger, more-joined tables on near-ties; the
        score returned is the reranked one (cosine plus the priors below).

        Each result stands for its family: archive copies and numbered siblings of a table
        (``orders_bkp3``, ``orders_202301``, ``hr_cfg_lkp_182``) that also matched are listed
        under it (``similar``, best first) instead of taking places of their own.
        """
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
            ranked.append((h.key, h.score + prior))
        ranked.sort(key=lambda r: (-r[1], r[0]))
        groups: dict[str, tuple[str, float, list[str]]] = {}
        for key, score in ranked:  # the score shown is the one ranked by: results read in order
            fam = family(key)
            if fam in groups:
                groups[fam][2].append(key)
            elif len(groups) < top_k:
                groups[fam] = (key, round(score, 4), [])
        return list(groups.values())


def project_schema_index(project: Project, index=None, embedder=None, settings=None) -> SchemaIndex:
    """The project's schema index, read with the project's glossary, as every run reads it."""
    if index is None or embedder is None:
        from ..settings import load_settings
        from ..vectors import get_embedder, open_index

        settings = settings or load_settings()
        index = index if index is not None else open_index(settings)
        embedder = embedder if embedder is not None else get_embedder(settings.embedding_model)
    return SchemaIndex(index, embedder, project.id, glossary=project.warehouse.settings.get("glossary"))
