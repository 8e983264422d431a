"""The cold estimate (no history) against real-model runs: the recorded 30-step transcripts' answers, counted
the way the estimate and the replay LLM count them (characters / CHARS_PER_TOKEN). The output side needs no
pipeline: what the model wrote is in the transcript. (Before: defaults sized on the terse scripted LLM were
off by 65-80% on every phase's output; bench/estimate_real.py measures the input side too.)"""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from pathlib import Path

import pytest

from assay.estimate import Shape, estimate
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
# cannot know that, and misses its exploration output by 0.27 (bench/README.md, "estimate, session 7"); told
# where it stopped, the same defaults meet 0.25 (the second test).
# Round 6 (session 8) is held out too; its gaming run wrote 21% less analysis than the defaults (0.271 over:
# its contract asks for the most material findings first, fewer when fewer are material): not fitted away.
R6_GAMING = pytest.mark.xfail(strict=True, reason="round 6 gaming: the model wrote 21% less analysis than estimated (error 0.271)")
# Round 7 (session 8; session 10 measured it): its gaming run kept 2.0 insights per area (one area none) where the
# other rounds kept 2.2-3.0, checked each with 3.4 calls (3.9-4.8) of shorter answers (420 chars, 480-665): its
# verification wrote 2.2x less than the defaults, whatever they are fitted on (bench/README.md, session 10)
R7_GAMING = pytest.mark.xfail(strict=True, reason="round 7 gaming: verification output 2.2x below the estimate")


def steps_taken(name: str) -> int:
    """The exploration steps the model took before done (its tool calls other than done)."""
    n = 0
    for req in sorted((TRANSCRIPTS / name).glob("*.request.json")):
        if json.loads(req.read_text())["_skeleton"]["phase"].startswith("tools:"):
            answer = json.loads(req.with_name(req.name.replace("request", "response")).read_text())
            n += sum(1 for c in answer.get("tool_calls") or [] if c.get("name") != "done")
    return n


def output_errors(name: str, shape: Shape | None = None) -> dict[str, float]:
    got = recorded(name)
    got.pop("table descriptions", None)  # not in this estimate: it is sized from the project's tables
    p = Project(id="p", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))
    est = estimate(p, system_chars=14_000, catalog_chars=1_500, area_prompt_chars=[6_000] * 5,
                   recommend_prompt_chars=6_000, max_steps=30, analyst="llm", shape=shape)
    errors = {ph.phase: abs(ph.output_tokens - got[ph.phase]["output"]) / got[ph.phase]["output"]
              for ph in est.phases}
    assert set(errors) == set(got)
    return errors


@pytest.mark.parametrize("name", [
    "demo-ecommerce-30-steps-r4", "demo-gaming-30-steps-r4", "demo-ecommerce-30-steps-leads",
    pytest.param("demo-gaming-30-steps-leads", marks=pytest.mark.xfail(strict=True, reason="stopped early: 23 of 30 steps")),
    "demo-ecommerce-30-steps-r6", pytest.param("demo-gaming-30-steps-r6", marks=R6_GAMING),
    "demo-ecommerce-30-steps-r7", pytest.param("demo-gaming-30-steps-r7", marks=R7_GAMING),
])
def test_cold_output_estimate_is_within_a_quarter_of_a_real_model_per_phase(name):
    errors = output_errors(name)
    assert max(errors.values()) <= 0.25, {k: round(v, 3) for k, v in errors.items()}


@pytest.mark.parametrize("name", [
    "demo-ecommerce-30-steps-r4", "demo-gaming-30-steps-r4", "demo-ecommerce-30-steps-leads",
    "demo-gaming-30-steps-leads", "demo-ecommerce-30-steps-r6", pytest.param("demo-gaming-30-steps-r6", marks=R6_GAMING),
    "demo-ecommerce-30-steps-r7", pytest.param("demo-gaming-30-steps-r7", marks=R7_GAMING),
])
def test_told_where_the_model_stopped_the_estimate_is_within_a_quarter_per_phase(name):
    """What "≤ 25% cold, per phase" can mean when a model stops early: the same default sizes, told only the steps
    the model took (its stop, which nothing before the run knows). Round 5 gaming (23 of 30 steps) then meets it:
    its miss was the stop, not the shape of its calls."""
    taken = steps_taken(name)
    assert 20 <= taken <= 30
    errors = output_errors(name, dataclasses.replace(Shape(), steps_used_share=taken / 30))
    assert max(errors.values()) <= 0.25, {k: round(v, 3) for k, v in errors.items()}
