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


# The rounds recorded under today's prompt regime: rounds 9 and 10 (session 11) chose the defaults' sizes
# (bench/estimate_priors.py --rounds r9,r10), round 11 is held out. Older rounds (2, 4-8) said the step budget
# otherwise and their models put 3-4 steps in one call; their fixtures stay for bench/estimate_real.py.
R10_ECOMMERCE = pytest.mark.xfail(strict=True, reason="round 10 ecommerce wrote 2.7 claims per insight (35 for 13 "
                                  "insights) where the defaults assume 3.8: the estimate 0.38 over its verification output")
R11_GAMING = pytest.mark.xfail(strict=True, reason="round 11 gaming put 1.9 steps in a call (16 calls, not 27): "
                               "the estimate, which assumes one question per turn, 0.44 over its exploration output")
# told its calls, round 11 gaming still wrote less per step than rounds 9-10 (SQL of 690 chars, 880-1,210 in the
# others; a note of 60 chars per step, 140-330 in the others): the estimate stays 0.36 over its exploration output
R11_GAMING_TOLD = pytest.mark.xfail(strict=True, reason="round 11 gaming wrote shorter queries and notes per step: "
                                    "the estimate told its stop and calls 0.36 over its exploration output")


def exploration_calls(name: str) -> list[list[str]]:
    """The tools of each recorded exploration call (the closing done's included)."""
    out = []
    for req in sorted((TRANSCRIPTS / name).glob("*.request.json")):
        if json.loads(req.read_text())["_skeleton"]["phase"].startswith("tools:"):
            answer = json.loads(req.with_name(req.name.replace("request", "response")).read_text())
            out.append([c.get("name") for c in answer.get("tool_calls") or []])
    return out


def told(name: str, calls: bool = True) -> Shape:
    """The default sizes told what no cold estimate knows: where the model stopped (the queries it ran beside its
    schema actions) and, with ``calls``, how many steps it put in one call."""
    turns = [t for t in exploration_calls(name) if "done" not in t]
    schema = sum(1 for t in turns for n in t if n in ("lookup_schema", "search_tables"))
    steps = sum(len(t) for t in turns)
    shape = dataclasses.replace(Shape(), steps_used_share=(steps - schema) / 30, schema_calls=float(schema))
    return dataclasses.replace(shape, steps_per_call=steps / len(turns)) if calls else shape


def _estimate(shape: Shape | None = None):
    p = Project(id="p", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))
    return estimate(p, system_chars=14_000, catalog_chars=1_500, area_prompt_chars=[6_000] * 5,
                    recommend_prompt_chars=6_000, max_steps=30, analyst="llm", shape=shape)


def output_errors(name: str, shape: Shape | None = None) -> dict[str, float]:
    got = recorded(name)
    got.pop("table descriptions", None)  # not in this estimate: it is sized from the project's tables
    est = _estimate(shape)
    errors = {ph.phase: abs(ph.output_tokens - got[ph.phase]["output"]) / got[ph.phase]["output"]
              for ph in est.phases}
    assert set(errors) == set(got)
    return errors


@pytest.mark.parametrize("name", [
    "demo-ecommerce-30-steps-r9", "demo-gaming-30-steps-r9",
    pytest.param("demo-ecommerce-30-steps-r10", marks=R10_ECOMMERCE), "demo-gaming-30-steps-r10",
    "demo-ecommerce-30-steps-r11", pytest.param("demo-gaming-30-steps-r11", marks=R11_GAMING),
])
def test_cold_output_estimate_is_within_a_quarter_of_a_real_model_per_phase(name):
    errors = output_errors(name)
    assert max(errors.values()) <= 0.25, {k: round(v, 3) for k, v in errors.items()}


@pytest.mark.parametrize("name", [
    "demo-ecommerce-30-steps-r9", "demo-gaming-30-steps-r9",
    pytest.param("demo-ecommerce-30-steps-r10", marks=R10_ECOMMERCE), "demo-gaming-30-steps-r10",
    "demo-ecommerce-30-steps-r11", pytest.param("demo-gaming-30-steps-r11", marks=R11_GAMING_TOLD),
])
def test_told_where_the_model_stopped_and_how_it_batched_the_estimate_is_within_a_quarter_per_phase(name):
    """What "≤ 25% cold, per phase" can mean when a model stops early or puts several steps in one call: the same
    default sizes, told only those (nothing before the run knows them). Round 9 gaming (3.1 steps per call) meets
    it cold and told; round 11 gaming's miss is half its calls and half the size of what it wrote."""
    errors = output_errors(name, told(name))
    assert max(errors.values()) <= 0.25, {k: round(v, 3) for k, v in errors.items()}


@pytest.mark.parametrize("name", [f"demo-{d}-30-steps-{r}" for r in ("r9", "r10", "r11")
                                  for d in ("ecommerce", "gaming")])
def test_exploration_requests_are_the_steps_and_schema_actions_then_done(name):
    """Issue 20 item 11: the explorer's requests are its turns, one per question (a query or a schema action) when
    it asks one at a time, else its steps over the steps per call, and the closing done: the estimate told the
    model's stop and batching makes exactly the requests the real model made."""
    calls = exploration_calls(name)
    assert [ph.calls for ph in _estimate(told(name)).phases if ph.phase == "exploration"] == [len(calls)]
    if all(len(t) == 1 for t in calls):  # one question per turn: steps + schema actions + done
        assert _estimate(told(name, calls=False)).phases[0].calls == len(calls)
