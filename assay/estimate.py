"""Cost estimate of a discovery before it runs (`assay estimate`, the flow's ``estimate_only``).

The exploration is simulated call by call with the conversation shape the
explorer really builds: the rendered system prompt (with the project's own
catalog), one raw turn per step appended until ``COMPACT_EVERY_TURNS`` turns
fold into one-line summaries in a cached block, and the prompt cache serving
every request's repeat of the previous one. Analysis, verification and
recommendations are sized from their rendered prompts. Per-turn sizes come
from the project's latest LLM run when there is one (calibrated), else from
defaults. Prices are USD per million tokens per model, overridable in the
project (``llm.prices``). Warehouse cost comes from the engine's EXPLAIN where
it can tell (PostgreSQL plan cost, Snowflake bytes), one profile scan per table.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import asdict, dataclass, field, replace

from . import limits
from .llm.base import CACHE_MIN_TOKENS
from .models import ExplorationStep, Project, StepAction

# USD per million tokens: input, output, cache read (list prices; override per project in llm.prices)
# The same models on Bedrock (``us.anthropic.claude-...-v1:0``), Vertex (``claude-...@20250929``) and Azure
# (the model behind the deployment) are priced by their model name: see ``price_model``.
PRICES: dict[str, dict[str, float]] = {
    "claude-opus-4-5": {"input": 5.0, "output": 25.0, "cache_read": 0.5},
    "claude-opus-4": {"input": 15.0, "output": 75.0, "cache_read": 1.5},
    "claude-sonnet-4": {"input": 3.0, "output": 15.0, "cache_read": 0.3},
    "claude-3-7-sonnet": {"input": 3.0, "output": 15.0, "cache_read": 0.3},
    "claude-3-5-sonnet": {"input": 3.0, "output": 15.0, "cache_read": 0.3},
    "claude-haiku-4": {"input": 1.0, "output": 5.0, "cache_read": 0.1},
    "claude-3-haiku": {"input": 0.25, "output": 1.25, "cache_read": 0.03},
    "claude-3-5-haiku": {"input": 0.8, "output": 4.0, "cache_read": 0.08},
    "gpt-5-nano": {"input": 0.05, "output": 0.4, "cache_read": 0.005},
    "gpt-5-mini": {"input": 0.25, "output": 2.0, "cache_read": 0.025},
    "gpt-5": {"input": 1.25, "output": 10.0, "cache_read": 0.125},
    "gpt-4.1-nano": {"input": 0.1, "output": 0.4, "cache_read": 0.025},
    "gpt-4.1-mini": {"input": 0.4, "output": 1.6, "cache_read": 0.1},
    "gpt-4.1": {"input": 2.0, "output": 8.0, "cache_read": 0.5},
    "gpt-4o-mini": {"input": 0.15, "output": 0.6, "cache_read": 0.075},
    "gpt-4o": {"input": 2.5, "output": 10.0, "cache_read": 1.25},
    "o4-mini": {"input": 1.1, "output": 4.4, "cache_read": 0.275},
    "o3-mini": {"input": 1.1, "output": 4.4, "cache_read": 0.55},
    "o3": {"input": 2.0, "output": 8.0, "cache_read": 0.5},
}
SUMMARY_HEADER_CHARS = 125  # the folded steps' block header (explore/loop.py) and its separator


@dataclass
class Shape:
    """Sizes (characters) of the parts of the calls a discovery makes.

    The defaults describe a real model at work under today's prompts, as mechanisms with sizes measured on the
    real-model rounds 14, 15 and 16 (bench/README.md, "cold estimate ... session 14"; rounds 17 and 18 held
    out): the explorer puts a few independent questions in one turn (the tools say "several in one turn when they
    are independent"; every run of rounds 14-18 did, 3.4-4.8 steps a call; in rounds 9-11, whose packs also said
    "ask one precise question at a time", 4 of 6 asked one at a time), so each call appends the model's calls, the
    results it was shown and the progress line to a conversation whose earlier requests are the cached prefix; an
    area's analysis reads a share of the steps (those relevant to it) and writes a few insights with their claims;
    each claim is re-derived in one verification call. A project's own finished LLM run replaces them (``calibrate``)."""

    # one step's raw turn in the conversation; None: the model's call (``explore_output_chars``), the result it
    # was shown (``result_chars``) and the step label, as the loop appends them (``turn_size``)
    turn_chars: float | None = None
    summary_line_chars: float = 645  # one folded step (at most limits.SUMMARY_LINE_CHARS; r9, r10: 611-665)
    explore_output_chars: float = 763  # one step's action as the model writes it: its SQL, purpose, thinking
    explore_note_chars: float = 825  # the model's text beside its tool calls, once per call
    result_chars: float = 1_300      # one result as the model is shown it (at most TOOL_RESULT_BUDGET_CHARS)
    # steps (queries and schema actions) in one call, r14-r16: 3.4-4.8 (r14 3.6 / 4.8, r15 3.75 / 4.5, r16 3.4 /
    # 3.75). The exploration's tokens go as one over it, so the default is where the relative error is the same at
    # both ends of that range (2 / (1/3.4 + 1/4.8) = 4.0, about ±17 %), not the median; a model that asks one
    # question per turn makes ~3.5x the requests (the cold note says so)
    steps_per_call: float = 4.0
    schema_calls: float = 1.0        # free schema actions (r14-r16: 0 or 1 lookup, 5 of 6 runs one)
    steps_used_share: float = 0.911  # share of the step budget used before done (r14-r16: 23-29 of 30)
    done_output_chars: float = 5_640  # the closing done call: the explorer's summary of what it found
    intro_chars: float = 30
    leads_chars: float = 4_830       # the leads section of the exploration prompt (8 leads: 4,781, 4,870 on the demos)
    status_chars: float = 390        # the progress line the loop appends after each turn (steps used, areas left)
    digest_chars: float = 4_260      # one step in an analysis prompt: its SQL, purpose and digest (r14-r16: 3.5-4.9k)
    # the steps one area's analysis reads, as a share of the steps taken (the picker keeps an area's relevant
    # steps, at most ANALYSIS_AREA_TOP_K; a step the explorer's summary cites only when it is relevant to the area
    # or the goal): the analysis input grows with the exploration, not with a constant
    picked_share: float = 0.51  # r14-r16: 0.42-0.60 (with every cited step lifted, as recorded: 0.83-1.0)
    analysis_leads_share: float = 0.51  # the analysis reads each lead's headline and numbers, not its SQL
    # one area's answer; None: its insights, each a text and its claims (``analysis_output``)
    analysis_output_chars: float | None = None
    insights_per_area: float = 2.7   # r14-r16: 2.4-3.0
    insight_text_chars: float = 534  # one insight's fields beside its claims
    claim_chars: float = 695         # one claim in the analysis answer
    claims_per_insight: float = 3.22  # r14-r16: 2.7-4.2 (the contract: one claim per number)
    verify_calls_per_insight: float | None = None  # None: one blind re-derivation per claim
    verify_extra_chars: float = 1_450  # evidence and the claim, beside the prompt and the catalog
    verify_output_chars: float = 471  # r14-r16: 417-586 per call
    recommend_output_chars: float = 9_520  # r14-r16: 7.6-10.5k
    insight_json_chars: float = 3_930  # a verified insight (with its claims and verdicts) in the recommendations
    # the share of the areas' insights that reach the recommendations (one segment's findings merged into one,
    # non-differences moved to the context notes): its input grows with these, not with every area's insights
    recommend_insight_share: float = 0.89  # r14-r16: 0.85-0.93
    source: str = "defaults"
    # calibrated from a previous run: measured usage of one area (analysis and verification) and of
    # the recommendations call, as (calls, input, cached, output) tokens
    area_usage: tuple[float, float, float, float] | None = None
    recommend_usage: tuple[float, float, float, float] | None = None


STEP_LABEL_CHARS = 10  # "[step N]\n" before each tool result


def turn_size(shape: Shape) -> float:
    """One step's raw turn: what the model wrote for it and the result it was shown (the progress line and the
    model's note come once per call)."""
    if shape.turn_chars is not None:
        return shape.turn_chars
    return shape.explore_output_chars + shape.result_chars + STEP_LABEL_CHARS


def analysis_output(shape: Shape) -> float:
    """One area's answer: its insights, each with its claims."""
    if shape.analysis_output_chars is not None:
        return shape.analysis_output_chars
    return shape.insights_per_area * (shape.insight_text_chars + shape.claims_per_insight * shape.claim_chars)


def summary_section_chars(shape: Shape) -> float:
    """The analysis prompt's section holding the explorer's closing summary (the done call's text, labelled)."""
    from .analysis.discipline import explorer_summary_section

    return shape.done_output_chars + len(explorer_summary_section("x")) - 1


def verify_calls_per_insight(shape: Shape) -> float:
    """Every claim is re-derived blind, one call each (the affected count is a claim of its own)."""
    if shape.verify_calls_per_insight is not None:
        return shape.verify_calls_per_insight
    return shape.claims_per_insight


@dataclass
class PhaseEstimate:
    phase: str
    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


@dataclass
class Estimate:
    project: str
    model: str
    analyst: str
    max_steps: int
    phases: list[PhaseEstimate] = field(default_factory=list)
    prices: dict[str, float] | None = None
    shape_source: str = "defaults"
    warehouse: dict | None = None
    notes: list[str] = field(default_factory=list)
    leads_queries: int = 0  # warehouse queries of the statistical leads scan (at most)
    lead: str = ""  # the first line: which analyst the project runs when the estimate prices another one

    @property
    def total(self) -> PhaseEstimate:
        t = PhaseEstimate("total")
        for p in self.phases:
            t.calls += p.calls
            t.input_tokens += p.input_tokens
            t.cached_tokens += p.cached_tokens
            t.output_tokens += p.output_tokens
        t.cost_usd = 0.0 if self.analyst == "statistical" else cost(t, self.prices)
        return t

    def as_dict(self) -> dict:
        d = asdict(self)
        d["total"] = asdict(self.total)
        return d


# how far one real-model run strays from the average of runs of the same prompts, per phase and token kind (nine
# 30-step runs through the developers' bridge, rounds 14-18, bench/README.md "Lead, session 15"): the cold estimate
# aims at the average; a single run lands anywhere in this range (a refused answer asked again: more)
RUN_SPREAD = (0.6, 1.5)


def tokens(chars: float) -> int:
    return int(round(chars / limits.CHARS_PER_TOKEN))


def price_for(model: str, override: dict[str, float] | None = None) -> dict[str, float] | None:
    if override:
        return {"cache_read": override.get("input", 0.0) * 0.1, **override}
    model = price_model(model)
    for prefix in sorted(PRICES, key=len, reverse=True):
        if model.startswith(prefix):
            return PRICES[prefix]
    return None


def price_model(model: str) -> str:
    """The model name inside a provider's id: Bedrock's ``[us.|eu.|apac.|global.]anthropic.NAME-v1:0``
    and ARNs of inference profiles, Vertex's ``NAME@DATE``, Azure's ``azure/NAME``."""
    m = model.strip().lower()
    if m.startswith("arn:"):
        m = m.rsplit("/", 1)[-1]
    m = m.split("/")[-1]
    m = re.sub(r"^(?:[a-z]{2,6}\.)?anthropic\.", "", m)
    return m.split("@")[0]


def cost(p: PhaseEstimate, prices: dict[str, float] | None) -> float | None:
    if prices is None:
        return None
    fresh = max(p.input_tokens - p.cached_tokens, 0)
    return (fresh * prices["input"] + p.cached_tokens * prices.get("cache_read", prices["input"])
            + p.output_tokens * prices["output"]) / 1e6


# ---------------------------------------------------------------------------- the conversation


def exploration_calls(system_chars: int, steps: int, shape: Shape) -> list[tuple[float, float, float]]:
    """(input, cached, output) characters of each exploration request, as the explorer builds them: the prompt,
    the folded steps' summary, the intro and the raw turns (each with its progress line). Between compactions a
    request extends the previous one, which is its cached prefix; after one only the prompt is."""
    c, keep = limits.COMPACT_EVERY_TURNS, limits.MIN_RAW_TURNS
    turn = turn_size(shape)
    out: list[tuple[float, float, float]] = []
    prev_total, prev_folded = None, 0
    for k in range(1, steps + 1):
        done_turns = k - 1
        folded = max(0, (done_turns - keep) // c * c)
        summary = (SUMMARY_HEADER_CHARS + folded * shape.summary_line_chars) if folded else 0.0
        total = system_chars + summary + shape.intro_chars + (done_turns - folded) * turn
        if prev_total is None:
            cached = 0.0
        elif folded != prev_folded:
            cached = float(system_chars)  # the summary block changed: only the prompt itself is a hit
        else:
            cached = prev_total  # the previous request, whole
        out.append((total, cached, shape.explore_output_chars))
        prev_total, prev_folded = total, folded
    return out


def steps_used(max_steps: int, shape: Shape) -> int:
    return max(1, min(max_steps, int(round(max_steps * shape.steps_used_share))))


def exploration_estimate(system_chars: int, max_steps: int, shape: Shape) -> "PhaseEstimate":
    """The exploration's calls: the steps it uses and its free schema actions, ``steps_per_call`` to a call (one
    per turn: as many requests as steps and schema actions), then the closing ``done``. A call's turn holds its
    steps, the model's note and the progress line."""
    k = max(shape.steps_per_call, 1.0)
    turns = steps_used(max_steps, shape) + max(int(round(shape.schema_calls)), 0)
    n_calls = max(1, math.ceil(turns / k))
    per_call = replace(shape, turn_chars=turn_size(shape) * k + shape.explore_note_chars + shape.status_chars,
                       summary_line_chars=shape.summary_line_chars * k,
                       explore_output_chars=shape.explore_output_chars * k + shape.explore_note_chars)
    calls = exploration_calls(system_chars, n_calls, per_call)
    if shape.done_output_chars:
        calls += [(t, c, shape.done_output_chars)
                  for t, c, _ in exploration_calls(system_chars, n_calls + 1, per_call)[-1:]]
    return PhaseEstimate("exploration", calls=len(calls), input_tokens=sum(tokens(i) for i, _, _ in calls),
                         cached_tokens=sum(tokens(c) for _, c, _ in calls),
                         output_tokens=sum(tokens(o) for _, _, o in calls))


def calibrate(steps: list[ExplorationStep], area_logs: list, telemetry) -> Shape | None:
    """Sizes measured on a finished LLM run of the project (None when it has too few steps).

    Exploration: the mean growth of a request per raw turn (between compactions) and the summary
    line size (from the request right after a compaction); the other phases: their recorded usage
    per area and for the recommendations call."""
    ordered = sorted((s for s in steps if s.usage and s.usage.input_chars), key=lambda s: s.step)
    usage = [s.usage for s in ordered]
    if len(usage) < 4:
        return None
    c, keep = limits.COMPACT_EVERY_TURNS, limits.MIN_RAW_TURNS
    growth, after = [], []
    for k in range(1, len(usage)):
        folded_now = max(0, (k - keep) // c * c)
        folded_before = max(0, (k - 1 - keep) // c * c)
        if folded_now == folded_before:
            growth.append(usage[k].input_chars - usage[k - 1].input_chars)
        else:
            after.append((usage[k].input_chars, folded_now))
    # measured per recorded step, each as its own call: no batching, the budget as the run used it
    # (the growth per turn holds the progress line and the model's note: none is added beside it)
    shape = Shape(source="calibrated from the project's latest LLM run", steps_per_call=1.0, steps_used_share=1.0,
                  done_output_chars=0.0, schema_calls=0.0, explore_note_chars=0.0, status_chars=0.0,
                  turn_chars=turn_size(Shape()))
    if growth:
        shape.turn_chars = max(1.0, statistics.fmean(growth))
    first = usage[0].input_chars  # the prompt and the intro
    lines = [(total - first - SUMMARY_HEADER_CHARS - keep * shape.turn_chars) / folded for total, folded in after]
    if not lines:  # a run too short to compact: the line a step folds into is its own summary
        lines = [len(s.summary) + 1 for s in ordered if s.summary and s.action != StepAction.done]  # done: never folded
    if lines:
        shape.summary_line_chars = min(max(40.0, statistics.fmean(lines)), float(limits.SUMMARY_LINE_CHARS))
    shape.explore_output_chars = statistics.fmean(u.output_tokens for u in usage) * limits.CHARS_PER_TOKEN
    explore = [sum(getattr(u, f) for u in usage) for f in ("input_tokens", "cached_tokens", "output_tokens")]
    ok = [a for a in area_logs if a.ok]
    if ok and telemetry is not None:
        area_tot = [sum(getattr(a.usage, f) for a in ok) for f in ("input_tokens", "cached_tokens", "output_tokens")]
        rest = [getattr(telemetry, f) - e - a for f, e, a in
                zip(("input_tokens", "cached_tokens", "output_tokens"), explore, area_tot)]
        calls_rest = max(telemetry.llm_calls - len(usage), 0)
        rec_calls = 1 if rest[0] > 0 else 0
        shape.area_usage = ((calls_rest - rec_calls) / len(ok), *(t / len(ok) for t in area_tot))
        if rec_calls:
            shape.recommend_usage = (1.0, *(max(0.0, x) for x in rest))
    return shape


def estimate(project: Project, *, system_chars: int, catalog_chars: int, area_prompt_chars: list[int],
             recommend_prompt_chars: int, max_steps: int, analyst: str, shape: Shape | None = None,
             warehouse: dict | None = None, leads_probes: int = 0) -> Estimate:
    """The estimate from the rendered prompts' sizes and the conversation shape. ``leads_probes``: the
    statistical leads scan's query budget (an LLM run only): queries on the warehouse, no LLM call, and a
    longer exploration prompt."""
    shape = shape or Shape()
    model = project.llm.model or project.llm.provider
    prices = price_for(model, project.llm.prices)
    est = Estimate(project=project.id, model=model, analyst=analyst, max_steps=max_steps, prices=prices,
                   shape_source=shape.source, warehouse=warehouse)
    if analyst == "statistical":
        est.notes.append("the statistical analyst calls no LLM: token cost 0; the warehouse does the work")
        est.phases = [PhaseEstimate(p, cost_usd=0.0) for p in ("exploration", "analysis", "verification",
                                                                "recommendations")]
        return est
    if leads_probes:
        system_chars += int(shape.leads_chars)
        est.leads_queries = leads_probes
        est.notes.append(f"statistical leads (analysis.leads_probes): up to {leads_probes} probe queries on the "
                         f"warehouse before the exploration, no LLM call; ~{tokens(shape.leads_chars):,} tokens "
                         f"more in each exploration request")
    ex = exploration_estimate(system_chars, max_steps, shape)
    if shape.source == "defaults":  # cold: where the model stops is the one thing it cannot know
        if shape.steps_per_call <= 1:
            per_turn, other = "one question per turn", "asks several questions in one turn spends less"
        else:  # what a model that asks one question at a time spends: the same conversation, re-sent per question
            one = exploration_estimate(system_chars, max_steps, replace(shape, steps_per_call=1.0))
            per_turn = f"about {shape.steps_per_call:.1f} questions per turn ({ex.calls} requests)"
            other = (f"asks one question per turn spends more ({one.calls} requests, "
                     f"{one.input_tokens / max(ex.input_tokens, 1):.1f}x the input tokens)")
        est.notes.append(f"cold estimate (no finished LLM run of this project yet): it assumes the model takes "
                         f"{steps_used(max_steps, shape)} of its {max_steps} exploration steps, {per_turn}; on the "
                         f"exploration a model that {other}, one that calls done sooner less (its input grows "
                         f"with every call); one that writes fewer claims spends less on the verification. Runs "
                         f"of one model on the same prompts spent {RUN_SPREAD[0]}x to {RUN_SPREAD[1]}x their "
                         f"average on a phase: read each figure as the middle of such a range. After the first LLM run "
                         f"the project's own sizes replace these")
    picked = min(limits.ANALYSIS_AREA_TOP_K, max(1, round(steps_used(max_steps, shape) * shape.picked_share)))
    budget_chars = project.llm.analysis_budget_tokens * limits.CHARS_PER_TOKEN
    if shape.area_usage:
        calls, i, c, o = shape.area_usage
        n = len(area_prompt_chars)
        areas = PhaseEstimate("analysis and verification", calls=int(round(calls * n)), input_tokens=int(i * n),
                              cached_tokens=int(c * n), output_tokens=int(o * n))
        rc = shape.recommend_usage or (1, 0, 0, 0)
        rec = PhaseEstimate("recommendations", calls=int(rc[0]), input_tokens=int(rc[1]), cached_tokens=int(rc[2]),
                            output_tokens=int(rc[3]))
        est.phases = [ex, areas, rec]
        for p in est.phases:
            p.cost_usd = cost(p, prices)
        return est
    an = PhaseEstimate("analysis")
    # the analysis prompt carries the leads' headlines and numbers (not their SQL)
    leads_an = shape.leads_chars * shape.analysis_leads_share if leads_probes else 0.0
    # and the explorer's closing summary, when it stops with done before its budget (what the estimate assumes)
    summary_an = summary_section_chars(shape) if steps_used(max_steps, shape) < max_steps else 0.0
    for base in area_prompt_chars:
        an.calls += 1
        an.input_tokens += tokens(base + leads_an + summary_an + min(picked * shape.digest_chars, budget_chars))
        an.output_tokens += tokens(analysis_output(shape))
    n_insights = shape.insights_per_area * len(area_prompt_chars)
    n_verify = int(round(n_insights * verify_calls_per_insight(shape)))
    vprompt = len_verify_prompt(catalog_chars) + shape.verify_extra_chars
    stable = len_verify_cached(catalog_chars)  # the instructions and the catalog, before each claim's sources
    hits = max(n_verify - 1, 0) if tokens(stable) >= CACHE_MIN_TOKENS else 0
    ve = PhaseEstimate("verification", calls=n_verify, input_tokens=tokens(n_verify * vprompt),
                       cached_tokens=tokens(hits * stable), output_tokens=tokens(n_verify * shape.verify_output_chars))
    re_ = PhaseEstimate("recommendations", calls=1,
                        input_tokens=tokens(recommend_prompt_chars
                                            + n_insights * shape.recommend_insight_share * shape.insight_json_chars),
                        output_tokens=tokens(shape.recommend_output_chars))
    est.phases = [ex, an, ve, re_]
    for p in est.phases:
        p.cost_usd = cost(p, prices)
    if prices is None:
        est.notes.append(f"no price known for model {model!r}: set llm.prices (USD per million tokens: "
                         f"input, output, cache_read)")
    return est


def len_verify_prompt(catalog_chars: int) -> int:
    from .validate.verify import CLAIM_PROMPT, VERIFY_PROMPT

    # most calls re-derive one claim (CLAIM_PROMPT); one per insight checks its count (VERIFY_PROMPT)
    return max(len(CLAIM_PROMPT), len(VERIFY_PROMPT)) + catalog_chars


def len_verify_cached(catalog_chars: int) -> int:
    """The verification prompt's block that every claim shares (``verify.verification_system``): what a provider
    can serve from its prompt cache."""
    from .validate.verify import CLAIM_PROMPT, SOURCES

    return CLAIM_PROMPT.index("\n\n" + SOURCES) - len("{catalog}") + catalog_chars


def render_estimate(est: Estimate) -> str:
    """Markdown (the CLI prints it; the flow stores it as an artifact)."""
    def money(x):  # cents, as the total (a new user read "$0.4150" above "$1.36"); below a cent, to 4 places
        return "n/a" if x is None else f"${x:.4f}" if 0 < x < 0.01 else f"${x:,.2f}"

    lines = [f"# Cost estimate · {est.project}", ""] + ([est.lead, ""] if est.lead else []) + [
             f"model **{est.model}** · analyst **{est.analyst}** · {est.max_steps} exploration steps · "
             f"sizes: {est.shape_source}", "",
             "| phase | calls | input tokens | of which cached | output tokens | cost |",
             "|---|---:|---:|---:|---:|---:|"]
    for p in est.phases + [est.total]:
        name = f"**{p.phase}**" if p.phase == "total" else p.phase
        lines.append(f"| {name} | {p.calls:,} | {p.input_tokens:,} | {p.cached_tokens:,} | {p.output_tokens:,} | "
                     f"{money(p.cost_usd)} |")
    if est.prices:
        lines += ["", f"prices (USD per million tokens): input {est.prices['input']}, cached input "
                      f"{est.prices.get('cache_read')}, output {est.prices['output']}"]
    w = est.warehouse
    if w:
        if w.get("unit"):
            lines += ["", f"warehouse ({w['engine']}): {w['total']:,.0f} {w['unit']} for one profile scan of each of "
                          f"{w['tables']} tables"]
        else:
            lines += ["", f"warehouse ({w['engine']}): {w.get('note', 'the engine cannot tell')}"]
    lines += [f"- {n}" for n in est.notes]
    return "\n".join(lines) + "\n"
