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
from .models import ExplorationStep, Project

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
SUMMARY_HEADER_CHARS = 70
# a provider caches a prompt prefix only from this size on (Anthropic: 1,024 tokens for Sonnet and Opus; OpenAI:
# 1,024): a shorter repeated system prompt is billed as fresh input every time
CACHE_MIN_TOKENS = 1_024


@dataclass
class Shape:
    """Sizes (characters) of the parts of the calls a discovery makes.

    The defaults describe a real model at work (measured on the recorded real-model runs of
    tests/fixtures/transcripts, see bench/README.md "estimate against a real model": fitted on the round-4
    runs, the prompts the product sends today; rounds 2 and 5 held out; the analysis's and recommendations'
    sizes, ``picked_share``, ``digest_chars``, ``recommend_insight_share`` and ``insight_json_chars``, on the
    replayable rounds 4, 5 and 7 in session 10, left out one round at a time by bench/estimate_fit.py): per exploration
    *step*, a call carrying ``steps_per_call`` steps (models ask for two or three queries at once), a model
    that ends with ``done`` before the budget runs out, and insights whose claims are re-derived one call
    each. A project's own finished LLM run replaces them (``calibrate``)."""

    turn_chars: float = 1_800        # one step in the conversation: the action, its projected result, the status
    summary_line_chars: float = 600  # one folded step in the summary block (its figures and the model's note)
    explore_output_chars: float = 755  # one step's action with the model's reasoning (in a batched call)
    steps_per_call: float = 3.9      # steps one exploration call asks for (round 4: 4.1 and 3.6; round 2: 1.9, 3.0)
    steps_used_share: float = 0.95   # share of the step budget used before the model calls done (round 4: 0.97)
    done_output_chars: float = 4_500  # the closing done call: the explorer's summary of what it found
    intro_chars: float = 60
    leads_chars: float = 3_500       # the leads section of the exploration prompt (2.6k, 4.8k on the demos)
    status_chars: float = 60
    digest_chars: float = 3_075      # one step in an analysis prompt (segment-by-time results are long)
    # the steps one area's analysis reads, as a share of the steps taken (the picker keeps an area's relevant
    # steps, at most ANALYSIS_AREA_TOP_K): the analysis input grows with the exploration, not with a constant
    picked_share: float = 0.466  # rounds 4, 5, 7: 0.37-0.55 (bench/estimate_fit.py)
    analysis_output_chars: float = 9_100  # one area's insights (at most MAX_INSIGHTS_PER_AREA) with their claims
    insights_per_area: float = 2.8
    verify_calls_per_insight: float = 4.1  # one blind re-derivation per claim, and the count check
    verify_extra_chars: float = 1_300  # evidence and the claim, beside the prompt and the catalog
    verify_output_chars: float = 545
    recommend_output_chars: float = 9_500
    insight_json_chars: float = 4_800  # a verified insight as the recommendations prompt carries it
    # the share of the areas' insights that reach the recommendations (one segment's findings merged into one,
    # non-differences moved to the context notes): its input grows with these, not with every area's insights
    recommend_insight_share: float = 0.806  # rounds 4, 5, 7: 0.73-0.93
    source: str = "defaults"
    # calibrated from a previous run: measured usage of one area (analysis and verification) and of
    # the recommendations call, as (calls, input, cached, output) tokens
    area_usage: tuple[float, float, float, float] | None = None
    recommend_usage: tuple[float, float, float, float] | None = None


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
    """(input, cached, output) characters of each exploration request, as the explorer builds them."""
    c, keep = limits.COMPACT_EVERY_TURNS, limits.MIN_RAW_TURNS
    out: list[tuple[float, float, float]] = []
    prev_total, prev_folded = None, 0
    for k in range(1, steps + 1):
        done_turns = k - 1
        folded = max(0, (done_turns - keep) // c * c)
        summary = (SUMMARY_HEADER_CHARS + folded * shape.summary_line_chars) if folded else 0.0
        total = system_chars + summary + shape.intro_chars + (done_turns - folded) * shape.turn_chars \
            + shape.status_chars
        if prev_total is None:
            cached = 0.0
        elif folded != prev_folded:
            cached = float(system_chars)  # the summary block changed: only the prompt itself is a hit
        else:
            cached = prev_total - shape.status_chars  # the previous request, up to its status line
        out.append((total, cached, shape.explore_output_chars))
        prev_total, prev_folded = total, folded
    return out


def steps_used(max_steps: int, shape: Shape) -> int:
    return max(1, min(max_steps, int(round(max_steps * shape.steps_used_share))))


def exploration_estimate(system_chars: int, max_steps: int, shape: Shape) -> "PhaseEstimate":
    """The exploration's calls: the steps it uses, ``steps_per_call`` to a call, then the closing ``done``."""
    k = max(shape.steps_per_call, 1.0)
    n_calls = max(1, math.ceil(steps_used(max_steps, shape) / k))
    per_call = replace(shape, turn_chars=shape.turn_chars * k, summary_line_chars=shape.summary_line_chars * k,
                       explore_output_chars=shape.explore_output_chars * k)
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
    shape = Shape(source="calibrated from the project's latest LLM run", steps_per_call=1.0, steps_used_share=1.0,
                  done_output_chars=0.0)
    if growth:
        shape.turn_chars = max(1.0, statistics.fmean(growth))
    first = usage[0].input_chars  # the prompt, the intro and the first status line
    lines = [(total - first - SUMMARY_HEADER_CHARS - keep * shape.turn_chars) / folded for total, folded in after]
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
        est.notes.append(f"cold estimate (no finished LLM run of this project yet): it assumes the model takes "
                         f"{steps_used(max_steps, shape)} of its {max_steps} exploration steps; a model that "
                         f"calls done sooner spends less on the exploration (its input grows with every call); "
                         f"after the first run the project's own sizes replace these")
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
    for base in area_prompt_chars:
        an.calls += 1
        an.input_tokens += tokens(base + min(picked * shape.digest_chars, budget_chars))
        an.output_tokens += tokens(shape.analysis_output_chars)
    n_insights = shape.insights_per_area * len(area_prompt_chars)
    n_verify = int(round(n_insights * shape.verify_calls_per_insight))
    stable = len_verify_prompt(catalog_chars)
    vprompt = stable + shape.verify_extra_chars
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


def render_estimate(est: Estimate) -> str:
    """Markdown (the CLI prints it; the flow stores it as an artifact)."""
    def money(x):
        return "n/a" if x is None else f"${x:,.4f}" if x < 1 else f"${x:,.2f}"

    lines = [f"# Cost estimate · {est.project}", "",
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
