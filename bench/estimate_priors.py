"""The cold estimate's sizes as the real-model rounds measure them (issue #20 item 11).

The cold estimate (``assay.estimate.Shape``) is a model of mechanisms (one question per turn, the conversation the
loop builds, a share of the steps per area, one verification call per claim); its sizes are priors measured on
chosen rounds and checked on the others. This prints, for the rounds given, each size as the transcripts measure it
(pooled over the transcripts: a ratio of sums, so a long run weighs as much as its calls), beside today's default
and the spread over the transcripts. Choose on some rounds (``--rounds r9,r10,r14,r15``), then check the held-out ones
with ``bench/estimate_real.py``.

Reads what ``bench/estimate_real.py --recorded FILE`` wrote (each replay's tokens per call, the steps each area read,
the insights) and the transcripts themselves (what the model wrote, call by call).

Prints `estimate_prior_<size>: value  # default D; per transcript a-b` lines.

Usage: .venv/bin/python bench/estimate_priors.py --recorded /tmp/replays.json [--rounds r9,r10,r14,r15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.estimate_real import ROUND, TRANSCRIPT_DIR  # noqa: E402


def written(name: str) -> list[tuple[list[str], int]]:
    """The exploration calls of a transcript: the tools each called and the characters the model wrote."""
    out = []
    for req in sorted((TRANSCRIPT_DIR / name).glob("*.request.json")):
        if not json.loads(req.read_text())["_skeleton"]["phase"].startswith("tools:"):
            continue
        answer = json.loads(req.with_name(req.name.replace("request", "response")).read_text())
        calls = answer.get("tool_calls") or []
        chars = len(answer.get("text") or "") + sum(len(json.dumps(c.get("arguments") or {})) + len(c.get("name") or "")
                                                    for c in calls)
        out.append(([c.get("name") for c in calls], chars))
    return out


def measured(name: str, got: dict, detail: dict) -> dict[str, float]:
    """Per transcript: the sums the pooled sizes are made of."""
    from assay import limits
    from assay.estimate import SUMMARY_HEADER_CHARS, len_verify_prompt

    cpt = limits.CHARS_PER_TOKEN
    inputs = detail["inputs"]
    calls = written(name)
    tools = [c for c in calls if "done" not in c[0]]
    done = [c for c in calls if "done" in c[0]]
    steps = sum(len(n) for n, _ in tools)
    schema = sum(1 for n, _ in tools for t in n if t in ("lookup_schema", "search_tables"))
    # the replayed exploration requests, the loop's own (the SQL fixer's are one-off requests with nothing cached)
    ex = [c for i, c in enumerate(c for c in detail["calls"] if c[0] == "exploration") if i == 0 or c[2] > 0]
    growth, beside, after = [], [], []
    for (a, b), (_, out_chars) in zip(zip(ex, ex[1:]), calls):
        if b[2] >= a[1] - 5:  # no compaction between them: b repeats a and adds one turn
            growth.append((b[1] - a[1]) * cpt)
            beside.append((b[1] - a[1]) * cpt - out_chars)
        else:
            after.append(b[1] * cpt)
    one_per_turn = len(tools) == steps
    turn = statistics.fmean(growth) if growth else 0.0
    keep, c = limits.MIN_RAW_TURNS, limits.COMPACT_EVERY_TURNS
    lines = [(t - ex[0][1] * cpt - SUMMARY_HEADER_CHARS - keep * turn) / (c * (i + 1))
             for i, t in enumerate(after)] if one_per_turn else []
    areas = [a for a in detail["areas"] if a["ok"]]
    an = got["analysis"]
    ve = got["verification"]
    rec = got["recommendations"]
    insights = sum(a["insights"] for a in areas)
    system = inputs["system_chars"]
    return {
        "max_steps": inputs["max_steps"], "query_steps": detail["query_steps"], "schema": schema,
        "steps": steps, "tool_calls": len(tools), "tool_output": sum(ch for _, ch in tools),
        "done_output": sum(ch for _, ch in done), "leads": ex[0][1] * cpt - system - 30,
        "beside_output": statistics.fmean(beside) if one_per_turn and beside else None,
        "summary_line": statistics.fmean(lines) if lines else None,
        "areas": len(areas), "picked": sum(a["picked"] for a in areas),
        "results_chars": sum(a["results_chars"] for a in areas),
        "analysis_output": an["output"] * cpt, "insights": insights, "claims": ve["calls"],
        "verify_extra": ve["input"] * cpt - ve["calls"] * len_verify_prompt(inputs["catalog_chars"]),
        "verify_output": ve["output"] * cpt,
        "rec_insights": detail.get("recommend_insights") or insights,
        "rec_extra": rec["input"] * cpt - inputs["recommend_prompt_chars"], "rec_output": rec["output"] * cpt,
    }


def least_squares(rows: list[tuple[float, float, float]]) -> tuple[float, float]:
    """(a, b) of y = a x1 + b x2 over (x1, x2, y) rows, no intercept."""
    s11 = sum(x1 * x1 for x1, _, _ in rows)
    s22 = sum(x2 * x2 for _, x2, _ in rows)
    s12 = sum(x1 * x2 for x1, x2, _ in rows)
    s1y = sum(x1 * y for x1, _, y in rows)
    s2y = sum(x2 * y for _, x2, y in rows)
    det = s11 * s22 - s12 * s12
    if abs(det) < 1e-9:
        return float("nan"), float("nan")
    return (s1y * s22 - s2y * s12) / det, (s2y * s11 - s1y * s12) / det


def priors(rows: dict[str, dict[str, float]]) -> dict[str, tuple[float, list[float]]]:
    """Each size pooled over the transcripts, with its value per transcript."""
    R = list(rows.values())

    def pooled(num, den):
        return sum(num(r) for r in R) / max(sum(den(r) for r in R), 1e-9), [num(r) / max(den(r), 1e-9) for r in R]

    note, action = least_squares([(r["tool_calls"], r["steps"], r["tool_output"]) for r in R])
    text, claim = least_squares([(r["insights"], r["claims"], r["analysis_output"]) for r in R])
    beside = [r["beside_output"] for r in R if r["beside_output"] is not None]
    lines = [r["summary_line"] for r in R if r["summary_line"] is not None]
    per_call = [r["steps"] / r["tool_calls"] for r in R]
    return {
        "steps_used_share": pooled(lambda r: r["query_steps"], lambda r: r["max_steps"]),
        "schema_calls": (statistics.fmean(r["schema"] for r in R), [r["schema"] for r in R]),
        "steps_per_call": (statistics.median(per_call), per_call),
        "explore_note_chars": (note, []),
        "explore_output_chars": (action, []),
        "turn_beside_output_chars": (statistics.fmean(beside) if beside else float("nan"), beside),
        "summary_line_chars": (statistics.fmean(lines) if lines else float("nan"), lines),
        "done_output_chars": pooled(lambda r: r["done_output"], lambda r: 1),
        "leads_chars": pooled(lambda r: r["leads"], lambda r: 1),
        "picked_share": pooled(lambda r: r["picked"], lambda r: r["areas"] * r["query_steps"]),
        "digest_chars": pooled(lambda r: r["results_chars"], lambda r: r["picked"]),
        "insights_per_area": pooled(lambda r: r["insights"], lambda r: r["areas"]),
        "insight_text_chars": (text, []),
        "claim_chars": (claim, []),
        "claims_per_insight": pooled(lambda r: r["claims"], lambda r: r["insights"]),
        "verify_extra_chars": pooled(lambda r: r["verify_extra"], lambda r: r["claims"]),
        "verify_output_chars": pooled(lambda r: r["verify_output"], lambda r: r["claims"]),
        "recommend_insight_share": pooled(lambda r: r["rec_insights"], lambda r: r["insights"]),
        "insight_json_chars": pooled(lambda r: r["rec_extra"], lambda r: r["rec_insights"]),
        "recommend_output_chars": pooled(lambda r: r["rec_output"], lambda r: 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--recorded", required=True)
    ap.add_argument("--rounds", default="r9,r10,r14,r15")  # what chose today's defaults (session 13)
    args = ap.parse_args()
    from assay.estimate import Shape

    saved = json.loads(Path(args.recorded).read_text())
    details = saved.get("_detail", {})
    rounds = args.rounds.split(",")
    names = [n for n in details if ROUND.get(n) in rounds and n in saved]
    print(f"# rounds {', '.join(rounds)}: {', '.join(names)}")
    rows = {n: measured(n, saved[n], details[n]) for n in names}
    default = Shape()
    for size, (value, per) in priors(rows).items():
        d = getattr(default, size, None)
        spread = f"; per transcript {min(per):,.3g}-{max(per):,.3g}" if per else ""
        print(f"estimate_prior_{size}: {value:,.3f}  # default {d if d is not None else '-'}{spread}")


if __name__ == "__main__":
    main()
