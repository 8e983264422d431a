"""Fit the cold estimate's sizes (``assay.estimate.Shape``) on the real-model rounds, leave one round out
(issue #20 item 11).

Reads what ``bench/estimate_real.py --recorded FILE`` wrote (each replayed transcript's tokens per call and what
its run did: the steps it took, the steps each area's analysis read, the insights each area kept and those that
reached the recommendations) and the sizes of the project's rendered prompts. For every round R, the sizes are
fitted on the other rounds only (each size the mean over their transcripts of the value that transcript implies),
and R's transcripts are estimated cold with them: the held-out error per phase and token kind is what a new
round can expect. A last fit on every round gives the candidate defaults.

Prints `name: value` lines:
  estimate_fit_heldout_max_<round>           worst held-out error of the round's transcripts (every phase and kind,
                                             table descriptions aside: they are sized from the tables, not fitted)
  estimate_fit_heldout_max_output_<round>    the same, output tokens only (what tests/unit/test_estimate_real_model.py
                                             checks without a replay)
  estimate_fit_heldout_<transcript>_<phase>_<kind>   every figure behind them
  estimate_fit_all_<size>                    the sizes fitted on every round
and `#` lines: each fold's fitted sizes, each transcript's implied sizes.

Sessions 12-13: today's defaults are chosen by ``bench/estimate_priors.py`` (sizes measured on rounds 9, 10, 14 and
15, the mechanisms of today's prompts; rounds 11 and 16 held out); this leave-one-round-out fit is kept for comparison.

Usage: .venv/bin/python bench/estimate_fit.py --recorded /tmp/replays.json [--rounds r4,r5,r7] [--current]
       [--only picked_share,digest_chars,...]
(--current: the held-out errors of today's defaults as well, for comparison.)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.estimate_real import KINDS, ROUND  # noqa: E402

FITTED = ("turn_chars", "summary_line_chars", "explore_output_chars", "steps_per_call", "steps_used_share", "schema_calls",
          "done_output_chars", "leads_chars", "digest_chars", "picked_share", "analysis_output_chars",
          "insights_per_area", "verify_calls_per_insight", "verify_extra_chars", "verify_output_chars",
          "recommend_insight_share", "insight_json_chars", "recommend_output_chars")


def _project():
    from assay.models import LLMConfig, Project

    return Project(id="fit", llm=LLMConfig(provider="anthropic", model="claude-sonnet-4-5"))


def predict(inputs: dict, shape) -> dict[str, dict[str, int]]:
    from assay.estimate import estimate

    est = estimate(_project(), shape=shape, **{**inputs, "analyst": "llm"})
    return {p.phase: {"input": p.input_tokens, "cached": p.cached_tokens, "output": p.output_tokens,
                      "calls": p.calls} for p in est.phases}


def implied(name: str, got: dict, detail: dict) -> dict[str, float]:
    """The sizes this one transcript implies (characters, as the estimate counts them)."""
    from assay import limits
    from assay.estimate import Shape, exploration_estimate, len_verify_prompt, turn_size

    cpt = limits.CHARS_PER_TOKEN
    inputs = detail["inputs"]
    default = Shape()
    calls = detail["calls"]
    ex = [c for c in calls if c[0] == "exploration"]
    steps = max(detail["steps_taken"], 1)
    queries = detail.get("query_steps", steps)
    out: dict[str, float] = {
        "steps_per_call": steps / max(len(ex) - 1, 1),
        "steps_used_share": queries / inputs["max_steps"],
        "schema_calls": float(steps - queries),
        # per step, the model's note (once per call, ``explore_note_chars``) taken out
        "explore_output_chars": max(0.0, sum(c[3] for c in ex[:-1]) * cpt
                                    - (len(ex) - 1) * default.explore_note_chars) / steps,
        "done_output_chars": ex[-1][3] * cpt,
    }
    system = inputs["system_chars"]
    if inputs.get("leads_probes"):
        out["leads_chars"] = max(0.0, ex[0][1] * cpt - system - default.intro_chars)
        system += out["leads_chars"]
    ratio = default.summary_line_chars / turn_size(default)
    want = got["exploration"]["input"]

    def ex_input(turn: float) -> int:
        s = dataclasses.replace(default, turn_chars=turn, summary_line_chars=turn * ratio,
                                steps_per_call=out["steps_per_call"], steps_used_share=out["steps_used_share"])
        return exploration_estimate(int(system), inputs["max_steps"], s).input_tokens

    lo, hi = 1.0, 50_000.0
    for _ in range(60):  # the exploration's input grows with the size of a turn: bisect for the recorded one
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ex_input(mid) < want else (lo, mid)
    out["turn_chars"] = (lo + hi) / 2
    out["summary_line_chars"] = out["turn_chars"] * ratio
    areas = [a for a in detail["areas"] if a["ok"]]
    n_areas = max(len(areas), 1)
    picked = sum(a["picked"] for a in areas)
    an = got.get("analysis", {"input": 0, "output": 0, "calls": 0})
    base = sum(inputs["area_prompt_chars"])
    out["digest_chars"] = max(0.0, an["input"] * cpt - base) / max(picked, 1)
    out["picked_share"] = picked / n_areas / steps
    out["analysis_output_chars"] = an["output"] * cpt / n_areas
    kept = sum(a["insights"] for a in areas)
    out["insights_per_area"] = kept / n_areas
    ve = got.get("verification", {"input": 0, "output": 0, "calls": 0})
    out["verify_calls_per_insight"] = ve["calls"] / max(kept, 1)
    stable = len_verify_prompt(inputs["catalog_chars"])
    out["verify_extra_chars"] = max(0.0, (ve["input"] * cpt - ve["calls"] * stable) / max(ve["calls"], 1))
    out["verify_output_chars"] = ve["output"] * cpt / max(ve["calls"], 1)
    rec = got.get("recommendations", {"input": 0, "output": 0})
    n_rec = detail.get("recommend_insights") or detail.get("insights") or kept
    out["recommend_insight_share"] = n_rec / max(kept, 1)
    out["insight_json_chars"] = max(0.0, rec["input"] * cpt - inputs["recommend_prompt_chars"]) / max(n_rec, 1)
    out["recommend_output_chars"] = rec["output"] * cpt
    return out


def fit(rows: list[dict[str, float]], only: tuple[str, ...] = FITTED):
    from assay.estimate import Shape

    values = {}
    for k in only:
        got = [r[k] for r in rows if k in r]
        if got:
            values[k] = statistics.fmean(got)
    return dataclasses.replace(Shape(), **values, source="defaults")


def errors(got: dict, pred: dict) -> dict[str, float]:
    out = {}
    for phase, p in pred.items():
        if phase == "table descriptions" or phase not in got:
            continue
        for kind in KINDS:
            g = got[phase][kind]
            if g == 0 and p[kind] == 0:
                continue
            out[f"{phase}_{kind}"] = (p[kind] - g) / max(g, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--recorded", required=True)
    ap.add_argument("--rounds", default="r4,r5,r7")
    ap.add_argument("--current", action="store_true")
    ap.add_argument("--only", help="fit only these sizes (comma-separated); the others keep today's defaults")
    args = ap.parse_args()
    saved = json.loads(Path(args.recorded).read_text())
    details = saved.get("_detail", {})
    rounds = args.rounds.split(",")
    only = tuple(args.only.split(",")) if args.only else FITTED
    names = [n for n in details if ROUND.get(n) in rounds and n in saved]
    missing = sorted({r for r in rounds} - {ROUND[n] for n in names})
    if missing:
        print(f"# no recorded details for {', '.join(missing)}: run bench/estimate_real.py --recorded first")
    rows = {n: implied(n, saved[n], details[n]) for n in names}
    for n, r in rows.items():
        print(f"# implied {n}: " + ", ".join(f"{k} {v:,.2f}" for k, v in r.items()), flush=True)
    from assay.estimate import Shape

    worst: dict[str, float] = {}
    for held in rounds:
        test = [n for n in names if ROUND[n] == held]
        train = [rows[n] for n in names if ROUND[n] != held]
        if not test or not train:
            continue
        shape = fit(train, only)
        print(f"# fold {held}: fitted on {len(train)} transcripts: " +
              ", ".join(f"{k} {getattr(shape, k):,.2f}" for k in FITTED), flush=True)
        for n in test:
            e = errors(saved[n], predict(details[n]["inputs"], shape))
            for k, v in sorted(e.items()):
                print(f"estimate_fit_heldout_{n}_{k}: {v:+.3f}")
            worst[n] = max(e.items(), key=lambda kv: abs(kv[1]))
            out_only = {k: v for k, v in e.items() if k.endswith("_output")}
            worst[n + "#output"] = max(out_only.items(), key=lambda kv: abs(kv[1]))
            if args.current:
                c = errors(saved[n], predict(details[n]["inputs"], Shape()))
                worst[n + "#current"] = max(c.items(), key=lambda kv: abs(kv[1]))
    for held in rounds:
        for suffix, label in (("", "heldout_max"), ("#output", "heldout_max_output"), ("#current", "current_max")):
            per = {n: worst[n + suffix] for n in names if ROUND[n] == held and n + suffix in worst}
            if per:
                n, (k, v) = max(per.items(), key=lambda kv: abs(kv[1][1]))
                print(f"estimate_fit_{label}_{held}: {abs(v):.3f}  # {n} {k} {v:+.3f}")
    everything = fit(list(rows.values()), only)
    for k in FITTED:
        print(f"estimate_fit_all_{k}: {getattr(everything, k):.3f}")


if __name__ == "__main__":
    main()
