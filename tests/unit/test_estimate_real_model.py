"""The cold estimate (no history) against real-model runs: the recorded 30-step transcripts' answers, counted
the way the estimate and the replay LLM count them (characters / CHARS_PER_TOKEN). The output side needs no
pipeline: what the model wrote is in the transcript. (Before: defaults sized on the terse scripted LLM were
off by 65-80% on every phase's output; bench/estimate_real.py measures the input side too.)"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from assay.estimate import estimate
from assay.llm.base import estimate_tokens
from assay.models import LLMConfig, Project

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
PHASE = {"analyze": "analysis", "recommend": "recommendations", "explore-json": "verification",
         "verify": "verification", "fix": "verification", "text": "table descriptions"}


def recorded(name: str) -> dict[str, dict[str, int]]:
    got: dict[str, dict[str, int]] = defaultdict(lambda: {"calls": 0, "output": 0})
    for req in sorted((TRANSCRIPTS / name).glob("*.request.json")):
        phase = json.loads(req.read_text())["_skeleton"]["phase"]
        answer = json.loads(req.with_name(req.name.replace("request", "response")).read_text())
        chars = len(answer.get("text") or "") + sum(len(json.dumps(c.get("arguments") or {}))
                                                    for c in answer.get("tool_calls") or [])
        ph = got["exploration" if phase.startswith("tools:") else PHASE[phase]]
        ph["calls"] += 1
        ph["output"] += estimate_tokens(chars)
    return got


# the runs under the prompts the product sends today (round 2's analysis prompt had no cap on the findings of an
# area and its models wrote shorter analyses and fewer claims). The defaults are fitted on round 4; round 5 is held
# out. Its gaming run stopped at 24 of 30 steps in 6 calls (the others used 27-29 steps in 7-9): a cold estimate
# cannot know that, and misses its exploration output by 0.27 (bench/README.md, "estimate, session 7").
@pytest.mark.parametrize("name", [
    "demo-ecommerce-30-steps-r4", "demo-gaming-30-steps-r4", "demo-ecommerce-30-steps-leads",
    pytest.param("demo-gaming-30-steps-leads", marks=pytest.mark.xfail(strict=True, reason="stopped early: 24 of 30 steps")),
])
def test_cold_output_estimate_is_within_a_quarter_of_a_real_model_per_phase(name):
    got = recorded(name)
    got.pop("table descriptions", None)  # not in this estimate: it is sized from the project's tables
    p = Project(id="p", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))
    est = estimate(p, system_chars=14_000, catalog_chars=1_500, area_prompt_chars=[6_000] * 5,
                   recommend_prompt_chars=6_000, max_steps=30, analyst="llm")
    errors = {ph.phase: abs(ph.output_tokens - got[ph.phase]["output"]) / got[ph.phase]["output"]
              for ph in est.phases}
    assert set(errors) == set(got)
    assert max(errors.values()) <= 0.25, {k: round(v, 3) for k, v in errors.items()}
