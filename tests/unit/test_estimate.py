"""The cost estimate: the simulated conversation, calibration from a recorded run, prices."""

from __future__ import annotations

import math

import pytest

from assay import limits
import dataclasses

from assay.estimate import (STEP_LABEL_CHARS, SUMMARY_HEADER_CHARS, PhaseEstimate, Shape, calibrate, cost, estimate,
                            exploration_calls, exploration_estimate, price_for, steps_used, turn_size)
from assay.models import AreaLog, ExplorationStep, LLMConfig, Project, StepAction, Telemetry, TokenUsage


def test_exploration_calls_follow_the_bounded_conversation():
    shape = Shape(turn_chars=1000, summary_line_chars=100, intro_chars=50, explore_output_chars=400)
    calls = exploration_calls(10_000, 14, shape)
    assert len(calls) == 14
    assert calls[0] == (10_050, 0.0, 400)  # prompt + intro, nothing cached yet
    # one raw turn more (with its progress line); the previous request, whole, is the cached prefix
    assert calls[1][0] == 11_050 and calls[1][1] == 10_050
    c, keep = limits.COMPACT_EVERY_TURNS, limits.MIN_RAW_TURNS
    k = c + keep + 1  # the first request after a compaction: c turns folded into c summary lines
    total, cached, _ = calls[k - 1]
    assert total == 10_000 + SUMMARY_HEADER_CHARS + c * 100 + 50 + keep * 1000
    assert cached == 10_000  # the summary block changed: only the prompt is served from cache
    # bounded: a long run's largest request stays far below the naive full history
    long = exploration_calls(10_000, 200, shape)
    assert max(t for t, _, _ in long) < 10_000 + 200 * 100 + (c + keep + 1) * 1000


def test_a_turn_holds_what_the_model_wrote_the_result_it_was_shown_and_the_progress_line():
    """Issue 20 item 11: the loop appends, per turn, the model's own call (its note and each step's action), each
    result as shown and the progress line; the next request repeats it all as its cached prefix. One question per
    turn: a request grows by one step's action, one result, one note and one progress line."""
    shape = Shape(explore_output_chars=1_000, explore_note_chars=500, result_chars=1_200, status_chars=300,
                  intro_chars=30, steps_used_share=1.0, schema_calls=0, done_output_chars=0, steps_per_call=1.0)
    assert turn_size(shape) == 1_000 + 1_200 + STEP_LABEL_CHARS
    one = exploration_estimate(8_000, 5, shape)
    grow = 1_000 + 500 + 1_200 + STEP_LABEL_CHARS + 300
    inputs = [8_030 + i * grow for i in range(5)]
    assert one.calls == 5
    assert one.input_tokens == sum(round(i / limits.CHARS_PER_TOKEN) for i in inputs)
    assert one.cached_tokens == sum(round(i / limits.CHARS_PER_TOKEN) for i in [0] + inputs[:-1])
    assert one.output_tokens == 5 * round(1_500 / limits.CHARS_PER_TOKEN)  # the note and the action, per call
    # three steps to a call: a third of the requests, each turn three actions and results, one note and progress line
    three = exploration_estimate(8_000, 6, dataclasses.replace(shape, steps_per_call=3.0))
    assert three.calls == 2
    assert three.input_tokens == round(8_030 / 4) + round((8_030 + 3 * (2_210) + 800) / 4)
    assert three.output_tokens == 2 * round((3 * 1_000 + 500) / 4)


def test_exploration_requests_are_the_steps_and_schema_actions_one_per_turn_then_done():
    """Issue 20 item 11: a model that asks one question per turn makes as many exploration requests as the steps
    it uses and its free schema actions (each a turn of its own), and one more for done; one that batches
    (steps_per_call) makes fewer. The default is a batching model's (19 of the 23 recorded runs put 3.1-4.8 steps
    in a call, every run of rounds 14-16): the median of the rounds that chose the sizes, not one per turn."""
    d = Shape()
    assert 3.0 <= d.steps_per_call <= 4.0 and d.schema_calls >= 1
    one = dataclasses.replace(d, steps_per_call=1.0)
    for steps, schema in ((30, 1), (30, 3), (12, 0)):
        shape = dataclasses.replace(one, schema_calls=schema)
        est = exploration_estimate(10_000, steps, shape)
        assert est.calls == steps_used(steps, shape) + schema + 1
    batched = exploration_estimate(10_000, 30, dataclasses.replace(d, steps_per_call=3.0))
    assert batched.calls == math.ceil((steps_used(30, d) + d.schema_calls) / 3) + 1
    assert batched.input_tokens < exploration_estimate(10_000, 30, one).input_tokens / 1.5  # fewer, larger requests


def test_calibration_recovers_the_recorded_turn_size():
    shape = Shape(turn_chars=1500, summary_line_chars=120, intro_chars=40)
    calls = exploration_calls(5_000, 30, shape)
    steps = [ExplorationStep(run_id="r", step=i + 1, turn=i + 1, action=StepAction.query,
                             usage=TokenUsage(input_tokens=int(t) // 4, cached_tokens=int(c) // 4, output_tokens=80,
                                              input_chars=int(t))) for i, (t, c, _) in enumerate(calls)]
    logs = [AreaLog(area="a", ok=True, usage=TokenUsage(input_tokens=9000, cached_tokens=0, output_tokens=500))]
    tel = Telemetry(input_tokens=sum(s.usage.input_tokens for s in steps) + 9000 + 3000,
                    cached_tokens=sum(s.usage.cached_tokens for s in steps),
                    output_tokens=30 * 80 + 500 + 700, llm_calls=30 + 2 + 1)
    got = calibrate(steps, logs, tel)
    assert got.turn_chars == pytest.approx(1500)
    assert got.summary_line_chars == pytest.approx(120, abs=1)
    assert got.explore_output_chars == pytest.approx(320)
    assert got.area_usage == (2.0, 9000, 0, 500) and got.recommend_usage == (1.0, 3000, 0, 700)
    assert calibrate(steps[:3], logs, tel) is None
    # a run too short to compact shows no folded request: a folded line is the step's own summary (not the
    # real-model default, which a terse model's 100-step run would overestimate)
    short = [s.model_copy(update={"summary": "x" * 99}) for s in steps[:8]]
    assert calibrate(short, logs, tel).summary_line_chars == pytest.approx(100)
    # a done step holds the model's closing summary (its whole text), which never folds into a line
    done = short[-1].model_copy(update={"step": 9, "turn": 9, "action": StepAction.done, "summary": "y" * 900})
    assert calibrate([*short, done], logs, tel).summary_line_chars == pytest.approx(100)


def test_prices_and_cost():
    assert price_for("claude-sonnet-4-5-20250929")["input"] == 3.0
    assert price_for("my-local-model") is None
    assert price_for("x", {"input": 1.0, "output": 2.0})["cache_read"] == pytest.approx(0.1)
    p = PhaseEstimate("x", input_tokens=2_000_000, cached_tokens=1_000_000, output_tokens=100_000)
    assert cost(p, {"input": 3.0, "output": 15.0, "cache_read": 0.3}) == pytest.approx(3.0 + 0.3 + 1.5)


def test_costs_are_in_cents_as_the_total_is():
    """A new user read "$0.4150" above a total of "$1.36": every cost is in cents; one below a cent keeps 4 places."""
    from assay.estimate import render_estimate

    p = Project(id="p", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))
    est = estimate(p, system_chars=5000, catalog_chars=800, area_prompt_chars=[3000, 3000], recommend_prompt_chars=2000,
                   max_steps=20, analyst="llm")
    rows = [line for line in render_estimate(est).splitlines() if line.startswith("| ") and "$" in line]
    assert len(rows) == len(est.phases) + 1, rows
    for line in rows:
        money = line.rstrip(" |").rsplit("| ", 1)[1]
        whole, cents = money.lstrip("$").replace(",", "").split(".")
        assert len(cents) == 2 or (whole == "0" and cents.startswith("00") and len(cents) == 4), line


def test_statistical_analyst_costs_no_tokens_and_unknown_models_say_so():
    p = Project(id="p", llm=LLMConfig(provider="openai", model="my-local-model"))
    est = estimate(p, system_chars=5000, catalog_chars=800, area_prompt_chars=[3000, 3000], recommend_prompt_chars=2000,
                   max_steps=20, analyst="statistical")
    assert est.total.input_tokens == 0 and est.total.cost_usd == 0.0
    est = estimate(p, system_chars=5000, catalog_chars=800, area_prompt_chars=[3000, 3000], recommend_prompt_chars=2000,
                   max_steps=20, analyst="llm")
    assert est.total.cost_usd is None and any("llm.prices" in n for n in est.notes)
    assert [ph.phase for ph in est.phases] == ["exploration", "analysis", "verification", "recommendations"]
    # a real model asks one question per turn (its schema actions too) and ends with done before the budget runs out
    d = Shape()
    used = round(20 * d.steps_used_share)
    assert est.phases[0].calls == math.ceil((used + d.schema_calls) / d.steps_per_call) + 1 and est.phases[1].calls == 2


def test_a_short_verification_prompt_is_not_cached_a_long_one_is():
    p = Project(id="p", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))
    # the verification prompt (about 3,300 characters) with a catalog of 400: under 1,024 tokens
    small = estimate(p, system_chars=5000, catalog_chars=400, area_prompt_chars=[3000], recommend_prompt_chars=2000,
                     max_steps=20, analyst="llm")
    big = estimate(p, system_chars=5000, catalog_chars=20_000, area_prompt_chars=[3000], recommend_prompt_chars=2000,
                   max_steps=20, analyst="llm")
    assert small.phases[2].cached_tokens == 0  # below the provider's minimum cacheable prefix
    assert big.phases[2].cached_tokens > 0 and big.phases[2].calls == small.phases[2].calls


def test_a_cold_estimate_states_where_it_assumes_the_model_stops_and_a_sooner_stop_costs_less():
    """Issue 20 item 11: a real model may call done early (round 5 gaming: 23 of 30 steps); the cold estimate says
    what it assumed, and the exploration it predicts shrinks with the steps taken (never grows)."""
    import dataclasses

    p = Project(id="p", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))
    kw = dict(system_chars=14_000, catalog_chars=1_500, area_prompt_chars=[6_000] * 5, recommend_prompt_chars=6_000,
              max_steps=30, analyst="llm")
    cold = estimate(p, **kw)
    assert any("assumes the model takes 27 of its 30 exploration steps, about 4.0 questions per turn (8 requests)"
               in n for n in cold.notes), cold.notes
    # and how far one run strays from the average it aims at (real-model runs, session 15)
    assert any("spent 0.6x to 1.5x their average on a phase: read each figure as the middle of such a range" in n
               for n in cold.notes), cold.notes
    # and what a model that asks one question at a time would spend: the same steps, a request each
    one = estimate(p, shape=dataclasses.replace(Shape(), steps_per_call=1.0), **kw).phases[0]
    ratio = one.input_tokens / cold.phases[0].input_tokens
    assert ratio > 1.5 and any(f"one question per turn spends more ({one.calls} requests, {ratio:.1f}x the input "
                                f"tokens)" in n for n in cold.notes), cold.notes
    explore = []
    for share in (0.5, 0.7, 0.8, 0.9, 1.0):
        est = estimate(p, shape=dataclasses.replace(Shape(), steps_used_share=share), **kw)
        explore.append(next(ph for ph in est.phases if ph.phase == "exploration"))
    # calls carry several steps: a few steps more may fit the same number of calls, never fewer tokens
    assert all(a.input_tokens <= b.input_tokens and a.output_tokens <= b.output_tokens
               for a, b in zip(explore, explore[1:]))
    assert explore[0].input_tokens < explore[-1].input_tokens / 1.5 and explore[0].calls < explore[-1].calls
    calibrated = estimate(p, shape=Shape(source="calibrated from the project's latest LLM run"), **kw)
    assert not any("cold estimate" in n for n in calibrated.notes)


def test_the_analysis_reads_a_share_of_the_steps_taken_and_the_recommendations_the_insights_that_reach_them():
    """Issue 20 item 11, structure: an area's analysis reads the steps the picker keeps for it, a share of the steps
    the model took (at most ANALYSIS_AREA_TOP_K), so its input grows with the exploration; the recommendations
    carry the insights left after merging, a share of every area's insights."""
    import dataclasses

    p = Project(id="p", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))
    kw = dict(system_chars=14_000, catalog_chars=1_500, area_prompt_chars=[6_000] * 5, recommend_prompt_chars=6_000,
              analyst="llm")
    base = Shape(picked_share=0.4, steps_used_share=1.0, recommend_insight_share=0.6)

    def phase(est, name):
        return next(ph for ph in est.phases if ph.phase == name)

    short, long_ = (estimate(p, max_steps=n, shape=base, **kw) for n in (20, 40))
    per_step = base.digest_chars / limits.CHARS_PER_TOKEN * 5  # five areas
    grew = phase(long_, "analysis").input_tokens - phase(short, "analysis").input_tokens
    assert grew == pytest.approx(per_step * 0.4 * 20, rel=0.02)  # 8 more steps read per area
    capped = estimate(p, max_steps=200, shape=base, **kw)  # 80 steps: the picker's top k bounds an area's read
    assert phase(capped, "analysis").input_tokens == pytest.approx(
        5 * (6_000 + limits.ANALYSIS_AREA_TOP_K * base.digest_chars) / limits.CHARS_PER_TOKEN, rel=0.01)
    fewer = estimate(p, max_steps=30, shape=dataclasses.replace(base, recommend_insight_share=0.3), **kw)
    more = estimate(p, max_steps=30, shape=base, **kw)
    n_insights = base.insights_per_area * 5
    diff = phase(more, "recommendations").input_tokens - phase(fewer, "recommendations").input_tokens
    assert diff == pytest.approx(n_insights * 0.3 * base.insight_json_chars / limits.CHARS_PER_TOKEN, rel=0.01)
    assert phase(more, "verification").calls == phase(fewer, "verification").calls  # verified before merging


def test_verification_follows_the_claims_and_the_analysis_writes_them():
    """Issue 20 item 11: every claim is re-derived blind in one call, so the verification's calls are the insights
    times their claims; the analysis answer carries each insight's text and its claims; the analysis prompt carries
    the leads' headlines and numbers (not their SQL) when the scan runs."""
    p = Project(id="p", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))
    kw = dict(system_chars=14_000, catalog_chars=1_500, area_prompt_chars=[6_000] * 5, recommend_prompt_chars=6_000,
              max_steps=30, analyst="llm")

    def phase(est, name):
        return next(ph for ph in est.phases if ph.phase == name)

    base = Shape(insights_per_area=2.0, claims_per_insight=3.0, insight_text_chars=1_000, claim_chars=500)
    more = dataclasses.replace(base, claims_per_insight=6.0)
    a, b = estimate(p, shape=base, **kw), estimate(p, shape=more, **kw)
    assert phase(a, "verification").calls == 5 * 2 * 3 and phase(b, "verification").calls == 5 * 2 * 6
    assert phase(a, "analysis").output_tokens == 5 * round(2 * (1_000 + 3 * 500) / limits.CHARS_PER_TOKEN)
    assert phase(b, "analysis").output_tokens - phase(a, "analysis").output_tokens == pytest.approx(
        5 * 2 * 3 * 500 / limits.CHARS_PER_TOKEN, abs=5)
    # an explicit per-area size or calls per insight still wins (a calibrated or told shape)
    fixed = dataclasses.replace(base, analysis_output_chars=8_000, verify_calls_per_insight=4.0)
    assert phase(estimate(p, shape=fixed, **kw), "verification").calls == 40
    assert phase(estimate(p, shape=fixed, **kw), "analysis").output_tokens == 5 * 2_000
    scanned = estimate(p, shape=base, leads_probes=40, **kw)
    grew = phase(scanned, "analysis").input_tokens - phase(a, "analysis").input_tokens
    assert grew == pytest.approx(5 * base.leads_chars * base.analysis_leads_share / limits.CHARS_PER_TOKEN, abs=5)
    # the explorer's closing summary is in every area's prompt when it stops with done, not when its budget ends it
    from assay.analysis.discipline import explorer_summary_section
    from assay.estimate import summary_section_chars

    assert summary_section_chars(base) == base.done_output_chars + len(explorer_summary_section("x")) - 1
    def analysis_in(shape):
        return phase(estimate(p, shape=shape, **kw), "analysis").input_tokens

    longer = dataclasses.replace(base, done_output_chars=base.done_output_chars + 4_000)
    assert analysis_in(longer) - analysis_in(base) == pytest.approx(5 * 4_000 / limits.CHARS_PER_TOKEN, abs=5)
    spent = dataclasses.replace(base, steps_used_share=1.0)  # the budget ended the exploration: no done, no summary
    assert analysis_in(dataclasses.replace(spent, done_output_chars=10_000)) == analysis_in(spent)
