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


# Rounds 14, 15 and 16 chose the defaults' sizes (bench/estimate_priors.py --rounds r14,r15,r16; session 14); rounds
# 17 (gaming) and 18 (recorded after the packs stopped saying "ask one precise question at a time") are held out, and
# rounds 9-11 ran under that older sentence (4 of their 6 models asked one question per turn). Every model of rounds
# 14-18 put 3.4-4.8 steps in one call; the exploration's tokens go as one over the steps per call, so the default is
# the value whose relative error is the same at both ends of that range (4.0), not the median. Older rounds (2, 4-8)
# stay in bench/estimate_real.py by name.
def _xfail(reason: str):
    return pytest.mark.xfail(strict=True, reason=reason)


ONE_PER_TURN = "asked one question per turn ({} calls, the estimate's 8): the notes beside its calls, one per call"
COLD_MISSES = {
    "demo-ecommerce-30-steps-r9": _xfail(ONE_PER_TURN.format(29) + ": 0.39 under on its exploration output; 50 "
                                         "verification calls of 560 chars (the defaults 43 of 471): 0.27 under"),
    "demo-gaming-30-steps-r9": _xfail("14 insights, 57 verification calls (one corrective round) of 585 chars: 0.39 "
                                      "under on its verification output, 0.27 on its analysis output"),
    "demo-ecommerce-30-steps-r10": _xfail(ONE_PER_TURN.format(25) + ": 0.31 under on its exploration output"),
    "demo-ecommerce-30-steps-r16": _xfail("stopped at 23 queries and wrote less in every phase (2.7 claims per "
                                          "insight, 425 chars per verification answer): 0.26-0.49 over"),
    "demo-gaming-30-steps-r17": _xfail("held out: its recommendations were answered twice (a priority of 6 refused; "
                                       "the contract now says 1 to 5, not a rank): 0.57 under on that phase"),
    "demo-ecommerce-30-steps-r18": _xfail("held out: 12 insights, 57 verification calls (the defaults 43) and longer "
                                          "notes beside its calls: 0.41 under on its verification output, 0.25 on "
                                          "its exploration output"),
    "demo-gaming-30-steps-r19": _xfail("held out: five steps a call and longer notes beside them (11,899 tokens of "
                                       "exploration output, the estimate's 8,193): 0.31 under on that phase"),
}
TOLD_MISSES = {k: COLD_MISSES[k] for k in ("demo-ecommerce-30-steps-r9", "demo-gaming-30-steps-r9",
                                            "demo-ecommerce-30-steps-r16", "demo-gaming-30-steps-r17",
                                            "demo-ecommerce-30-steps-r18", "demo-gaming-30-steps-r19")}
RUNS = ([f"demo-{d}-30-steps-{r}" for r in ("r9", "r10", "r11", "r14", "r15", "r16", "r18", "r19")
         for d in ("ecommerce", "gaming")]
        + ["demo-gaming-30-steps-r17"])
# the runs of today's prompts (the packs' batching sentence gone): what a cold estimate aims at is their average
CURRENT = {"ecommerce": ["r14", "r15", "r16", "r18", "r19"], "gaming": ["r14", "r15", "r16", "r17", "r18", "r19"]}


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


@pytest.mark.parametrize("name", [pytest.param(n, marks=COLD_MISSES.get(n, ())) for n in RUNS])
def test_cold_output_estimate_is_within_a_quarter_of_a_real_model_per_phase(name):
    errors = output_errors(name)
    assert max(errors.values()) <= 0.25, {k: round(v, 3) for k, v in errors.items()}


@pytest.mark.parametrize("name", [pytest.param(n, marks=TOLD_MISSES.get(n, ())) for n in RUNS])
def test_told_where_the_model_stopped_and_how_it_batched_the_estimate_is_within_a_quarter_per_phase(name):
    """What "≤ 25% cold, per phase" can mean when a model stops early or puts several steps in one call: the same
    default sizes, told only those (nothing before the run knows them). Told, the runs that asked one question per
    turn meet it on their exploration; the misses left are the claims and verification answers a model writes
    (every claim is a verification call), round 16 ecommerce's shorter answers and round 17's answer written twice."""
    errors = output_errors(name, told(name))
    assert max(errors.values()) <= 0.25, {k: round(v, 3) for k, v in errors.items()}


@pytest.mark.parametrize("name", RUNS)
def test_exploration_requests_are_the_steps_and_schema_actions_then_done(name):
    """Issue 20 item 11: the explorer's requests are its turns, one per question (a query or a schema action) when
    it asks one at a time, else its steps over the steps per call, and the closing done: the estimate told the
    model's stop and batching makes exactly the requests the real model made."""
    calls = exploration_calls(name)
    # a model that spends the whole budget is stopped by the loop without a done call (round 17 gaming: 30 queries
    # and a lookup in 9 calls); the estimate's closing call stands for the summary such a model never wrote
    made = len(calls) + (0 if any("done" in t for t in calls) else 1)
    assert [ph.calls for ph in _estimate(told(name)).phases if ph.phase == "exploration"] == [made]
    if all(len(t) == 1 for t in calls):  # one question per turn: steps + schema actions + done
        one = dataclasses.replace(told(name, calls=False), steps_per_call=1.0)
        assert _estimate(one).phases[0].calls == made


@pytest.mark.parametrize("demo", sorted(CURRENT))
def test_cold_output_estimate_is_within_a_quarter_of_the_average_real_run_per_phase(demo):
    """Issue 20 item 11, read against what an estimate can know: single runs of the same prompts spend 0.6x to 1.9x
    their average on a phase (bench/estimate_real.py: estimate_real_run_spread_<demo>), so no estimate made before a
    run is within a quarter of every one; it is within a quarter of their average on every phase (the input side is
    bench/estimate_real.py's: 0.159 ecommerce, 0.235 gaming, session 16)."""
    est = {ph.phase: ph.output_tokens for ph in _estimate().phases}
    runs = [recorded(f"demo-{demo}-30-steps-{r}") for r in CURRENT[demo]]
    errors = {}
    for phase, predicted in est.items():
        mean = sum(r[phase]["output"] for r in runs) / len(runs)
        errors[phase] = abs(predicted - mean) / mean
    assert max(errors.values()) <= 0.25, {k: round(v, 3) for k, v in errors.items()}
