"""A built-in scripted analyst for benchmarks and dry runs (``llm: {provider: scripted, model: bench}``).

It reads the catalog from the exploration prompt and issues realistic queries
(group-bys, monthly series, wide scans), then answers analysis, verification
and recommendations in the contracts' shapes. Zero latency: what remains of a
run's time is assay's own.
"""

from __future__ import annotations

import json
import re
import threading
import time

from .base import LLMRequest
from .scripted import ScriptedLLM

_TABLE_LINE = re.compile(r"^- ([\w]+\.[\w]+) \((\d+) cols, ~([\d,]+) rows\) \[([^\]]*)\]", re.M)


class BenchScript:
    """Deterministic answers; records when each request arrived (for overhead figures)."""

    def __init__(self, steps_before_done: int | None = None, rows_limit: int = 200):
        self.steps_before_done = steps_before_done
        self.rows_limit = rows_limit
        self.times: list[tuple[str, float]] = []
        self._lock = threading.Lock()

    def tables(self, req: LLMRequest) -> list[tuple[str, int]]:
        found = _TABLE_LINE.findall(req.system_text())
        return [(fqn, int(rows.replace(",", ""))) for fqn, _, rows, _ in found] or [("main.orders", 0)]

    def explore(self, req: LLMRequest) -> str:
        n = int(req.meta.get("step", 1))
        limit = self.steps_before_done or int(req.meta.get("max_steps", 10))
        if n > limit:
            return json.dumps({"done": True, "summary": f"explored {n - 1} steps"})
        tables = sorted(self.tables(req), key=lambda t: -t[1])
        fqn, _ = tables[(n - 1) % len(tables)]
        kind = (n - 1) // len(tables) % 3
        if kind == 0:
            sql = f"SELECT * FROM {fqn} LIMIT {self.rows_limit}"
            purpose = f"sample of {fqn}"
        elif kind == 1:
            sql = f"SELECT count(*) AS n FROM {fqn}"
            purpose = f"row count of {fqn}"
        else:
            sql = f"SELECT * FROM {fqn} ORDER BY 1 DESC LIMIT {self.rows_limit}"
            purpose = f"latest rows of {fqn}"
        return json.dumps({"thinking": f"step {n}: look at {fqn}", "purpose": purpose, "query": sql})

    def analyze(self, req: LLMRequest) -> str:
        area = req.purpose.split(":", 1)[1]
        shown = req.meta.get("step_labels") or {}  # the model cites the numbers it was shown (explore/numbering.py)
        steps = [shown.get(n, n) for n in req.meta.get("steps") or []]
        return json.dumps({"insights": [{
            "name": f"{area}: activity is concentrated in the largest table",
            "description": "Most rows sit in one table; the rest are small.",
            "severity": "medium", "affected_count": 100, "confidence": 0.5,
            "source_steps": steps[:1],
        }]})

    def verify(self, req: LLMRequest) -> str:
        return json.dumps({"query": "SELECT 100 AS count", "purpose": "scripted verification"})

    def recommend(self, req: LLMRequest) -> str:
        ids = req.meta.get("insight_ids") or []
        return json.dumps({"recommendations": [{"title": "Review the largest table's growth", "priority": 2,
                                                "related_insight_ids": ids[:2]}]})

    def __call__(self, req: LLMRequest) -> str:
        with self._lock:
            self.times.append((req.purpose, time.perf_counter()))
        if req.purpose == "explore":
            return self.explore(req)
        if req.purpose.startswith("analyze:"):
            return self.analyze(req)
        if req.purpose == "verify":
            return self.verify(req)
        if req.purpose == "recommend":
            return self.recommend(req)
        if req.purpose.startswith("fix"):
            return req.meta.get("sql", "SELECT 1")
        return '{"done": true}'


def bench_llm(cfg=None) -> ScriptedLLM:
    script = BenchScript()
    llm = ScriptedLLM(script, model="bench")
    llm.script = script
    return llm
