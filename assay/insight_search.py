"""Search over a project's discovered insights and recommendations.

`assay ask` and the MCP server answer from what earlier discoveries found before (or instead of) querying
the warehouse. The texts are the stored results of the project's latest runs; they are embedded with the
process's embedder when searched (a project holds tens to a few hundred of them, well under a second), so
nothing depends on a run's vector collection, which the flow hook drops when the run ends.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass

import numpy as np

from .models import DiscoveryResult
from .store import Store

DEFAULT_RUNS = 3     # the latest runs searched; older findings are superseded by newer ones
DEFAULT_TOP_K = 5
MAX_TOP_K = 20
MIN_SCORE = 0.2      # below this cosine similarity a hit is noise for this embedder


@dataclass
class InsightHit:
    kind: str                 # "insight" | "recommendation"
    id: str                   # the id within its run: I3, R1
    run_id: str
    run_date: str             # ISO date of the run that found it
    area: str
    title: str
    text: str
    verdict: str              # confirmed | adjusted | rejected | ... | "unverified" | "" (recommendations)
    severity: str = ""
    affected_count: int | None = None
    score: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)

    def cite(self) -> str:
        return f"{self.id} of run {self.run_id[:8]} ({self.run_date})"


def _date(ts: dt.datetime) -> str:
    return ts.date().isoformat()


def documents(results: list[DiscoveryResult]) -> list[InsightHit]:
    """Every insight and recommendation of ``results`` (newest run first); a finding that a later run
    repeats (same title) is kept once, from the newest run."""
    out: list[InsightHit] = []
    seen: set[tuple[str, str]] = set()
    for r in results:
        day = _date(r.created_at)
        for i in r.insights:
            if i.duplicate_of:
                continue
            key = ("insight", i.name.strip().lower())
            if key in seen:
                continue
            seen.add(key)
            v = i.validation.status.value if i.validation else "unverified"
            out.append(InsightHit("insight", i.id, r.run_id, day, i.area, i.name, i.description, v,
                                  severity=i.severity.value, affected_count=i.affected_count))
        for rec in r.recommendations:
            key = ("recommendation", rec.title.strip().lower())
            if key in seen:
                continue
            seen.add(key)
            out.append(InsightHit("recommendation", rec.id, r.run_id, day, "", rec.title, rec.description, "",
                                  severity=f"priority {rec.priority}"))
    return out


def search_insights(store: Store, project_id: str, query: str, *, top_k: int = DEFAULT_TOP_K,
                    runs: int = DEFAULT_RUNS, embedder=None, min_score: float = MIN_SCORE) -> list[InsightHit]:
    """The project's insights and recommendations closest in meaning to ``query``, best first."""
    query = (query or "").strip()
    if not query:
        raise ValueError("search_insights needs a question or a description of the finding")
    top_k = max(1, min(int(top_k), MAX_TOP_K))
    docs = documents(store.recent_results(project_id, limit=runs))
    if not docs:
        return []
    if embedder is None:
        from .vectors.embedder import get_embedder

        embedder = get_embedder()
    texts = [f"{d.title}. {d.text} {d.area}".strip() for d in docs]
    vecs = np.asarray(embedder.embed(texts + [query]), dtype=np.float32)
    scores = vecs[:-1] @ vecs[-1]
    order = np.argsort(-scores, kind="stable")[:top_k]
    hits = []
    for j in order:
        if float(scores[j]) < min_score:
            break
        d = docs[int(j)]
        d.score = round(float(scores[j]), 4)
        hits.append(d)
    return hits


def has_findings(store: Store, project_id: str) -> bool:
    return bool(store.recent_results(project_id, limit=1))
