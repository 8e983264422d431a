"""The schema provider behind ``lookup_schema`` and ``search_tables``.

Lookups are answered from the cached schema (sample rows are read once per
table, lazily, and masked where PII rules say so); searches go to the
project's schema index. One provider per run: it remembers what the run has
already fetched.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

from ..digest import cell
from ..limits import MAX_LOOKUP_TABLES_PER_CALL, SAMPLE_ROWS
from ..models import TableInfo
from ..pii import MASK, pii_columns

MAX_SIMILAR_LISTED = 3  # names of folded copies shown per search result; the rest are counted


class Cancelled(Exception):
    pass


@dataclass
class LookupResult:
    tables: list[dict] = field(default_factory=list)        # newly fetched detail
    already_fetched: list[str] = field(default_factory=list)  # answered free
    not_found: list[dict] = field(default_factory=list)      # {"ref", "reason", "candidates"}
    truncated: list[str] = field(default_factory=list)       # refs over the per-call cap

    @property
    def charged(self) -> bool:
        """A call that only re-asks for fetched tables is not charged."""
        return bool(self.tables or self.not_found)

    def as_dict(self) -> dict:
        d: dict = {"tables": self.tables}
        if self.already_fetched:
            d["already_fetched"] = self.already_fetched
        if self.not_found:
            d["not_found"] = self.not_found
        if self.truncated:
            d["truncated"] = {"over_per_call_limit": self.truncated, "limit": MAX_LOOKUP_TABLES_PER_CALL}
        return d


class SchemaProvider:
    def __init__(
        self,
        tables: list[TableInfo],
        *,
        sampler: Callable[[TableInfo, int], list[dict]] | None = None,
        searcher: Callable[[str, int], list[tuple]] | None = None,
        pii: list[str] | None = None,
        joins: dict[str, list[str]] | None = None,
        cancel: threading.Event | None = None,
    ):
        self.tables = tables
        self.by_fqn = {t.fqn.lower(): t for t in tables}
        self.by_name: dict[str, list[TableInfo]] = {}
        for t in tables:
            self.by_name.setdefault(t.name.lower(), []).append(t)
        self.sampler = sampler
        self.searcher = searcher
        self.pii = pii or []
        self.joins = joins or {}
        self.cancel = cancel or threading.Event()
        self.fetched: set[str] = set()
        self._samples: dict[str, list[dict]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ resolution

    def resolve(self, ref: str) -> tuple[TableInfo | None, str, list[str]]:
        """(table, reason, candidates): fully qualified, or bare when unambiguous."""
        r = str(ref).strip().strip('"`[]').replace('"', "").replace("`", "").lower()
        if not r:
            return None, "empty reference", []
        parts = r.split(".")
        if len(parts) >= 2:
            key = ".".join(parts[-2:])
            t = self.by_fqn.get(key)
            if t is not None:
                return t, "", []
            cands = [x.fqn for x in self.by_name.get(parts[-1], [])]
            return None, "no such table", cands
        cands = self.by_name.get(parts[0], [])
        if len(cands) == 1:
            return cands[0], "", []
        if len(cands) > 1:
            return None, "ambiguous bare name; qualify it with its schema", sorted(c.fqn for c in cands)
        near = sorted(t.fqn for t in self.tables if parts[0] in t.name.lower())[:5]
        return None, "no such table", near

    # ------------------------------------------------------------------ lookup

    def _sample(self, t: TableInfo) -> list[dict]:
        if self.sampler is None:
            return []
        with self._lock:
            if t.fqn in self._samples:
                return self._samples[t.fqn]
        try:
            rows = self.sampler(t, SAMPLE_ROWS)
        except Exception:
            rows = []
        masked = pii_columns(t.column_names(), self.pii)
        rows = [{k: (MASK if k in masked and v is not None else cell(v)) for k, v in r.items()} for r in rows]
        with self._lock:
            self._samples[t.fqn] = rows
        return rows

    def detail(self, t: TableInfo) -> dict:
        out: dict = {"table": t.fqn, "rows": t.row_count}
        if t.description:
            out["description"] = t.description
        out["columns"] = [{"name": c.name, "type": c.type, "nullable": c.nullable,
                           **({"description": c.description} if c.description else {})} for c in t.columns]
        out["joins"] = self.joins.get(t.fqn, [])
        out["sample_rows"] = self._sample(t)
        return out

    def mark_fetched(self, fqns: list[str]) -> None:
        with self._lock:
            self.fetched.update(fqns)

    def lookup(self, refs: list[str], *, mark: bool = True) -> LookupResult:
        """Detail of the tables asked for. With ``mark=False`` the caller marks the tables it delivered
        whole (``mark_fetched``): a table cut from the answer must not be reported as fetched later."""
        out = LookupResult()
        uniq: list[str] = []
        for r in refs:
            if isinstance(r, str) and r not in uniq:
                uniq.append(r)
        if len(uniq) > MAX_LOOKUP_TABLES_PER_CALL:
            out.truncated = uniq[MAX_LOOKUP_TABLES_PER_CALL:]
            uniq = uniq[:MAX_LOOKUP_TABLES_PER_CALL]
        for ref in uniq:
            if self.cancel.is_set():
                raise Cancelled("lookup cancelled")
            t, reason, cands = self.resolve(ref)
            if t is None:
                nf = {"ref": ref, "reason": reason}
                if cands:
                    nf["candidates"] = cands
                out.not_found.append(nf)
                continue
            with self._lock:
                seen = t.fqn in self.fetched
                if mark:
                    self.fetched.add(t.fqn)
            if seen:
                out.already_fetched.append(t.fqn)
            else:
                out.tables.append(self.detail(t))
        return out

    # ------------------------------------------------------------------ search

    def search(self, query: str, top_k: int) -> list[dict]:
        if self.cancel.is_set():
            raise Cancelled("search cancelled")
        if self.searcher is None:
            raise RuntimeError("no schema index is available for search_tables")
        hits = self.searcher(query, top_k)
        out = []
        for fqn, score, *rest in hits:
            t = self.by_fqn.get(fqn.lower())
            if t is None:
                continue
            hit = {"table": t.fqn, "score": score, "rows": t.row_count}
            if t.description:
                hit["description"] = t.description
            hit["columns"] = [c.name for c in t.columns[:12]] + (["..."] if len(t.columns) > 12 else [])
            similar = rest[0] if rest else []
            if similar:  # copies and numbered siblings the search folded into this result
                hit["similar"] = similar[:MAX_SIMILAR_LISTED]
                if len(similar) > MAX_SIMILAR_LISTED:
                    hit["more_similar"] = len(similar) - MAX_SIMILAR_LISTED
            out.append(hit)
        return out
