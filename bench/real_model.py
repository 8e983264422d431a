"""A discovery of a demo warehouse by a real model, and the figures the LLM-analyst issues ask for.

The model is reached through any Anthropic-compatible endpoint: the model bridge
(``../shared/tools/llm-bridge.py DIR``, answered by a person or a helper model), a proxy, or the real
API. Run:

    ANTHROPIC_API_KEY=any ANTHROPIC_BASE_URL=http://127.0.0.1:8765 \\
        .venv/bin/python bench/real_model.py --which ecommerce --steps 30 --home /tmp/rm-ecom

Prints one ``name: value`` line per figure:

- recall, precision, critical_wrong: the unit-aware demo scorer (``assay.evaluate.score_demo``)
- insights, duplicate_findings: insights after merging, and pairs left that still share segment+metric
- context_notes: what the analysis reported that is context (a non-difference, a fact of the data's shape)
- verdict_<status>, ungrounded: verification outcomes
- steps, query_steps, schema_steps, schema_step_share: how the step budget was spent (schema actions
  keep their own budget and are not steps of the budget; their share of all actions is reported)
- refused, refused_information_schema: guard refusals, and those over information_schema
- relookups: lookup_schema calls that asked again for a table an earlier lookup delivered
- llm_requests: requests the model answered

``--replay NAME`` replays a recorded transcript (``tests/fixtures/transcripts/NAME``) instead of asking a model:
the recorded answers, today's code. Replay on the warehouse the transcript was recorded on (scale 1 for the
30-step rounds) to score today's rules on a real model's answers without a new run.

``--done FILE`` is written when the run ends (whatever the outcome), so a helper answering through the
bridge knows when to stop.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--which", choices=["ecommerce", "gaming"], default="ecommerce")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--home", default=None, help="ASSAY_HOME for this run (default: a new temp dir)")
    ap.add_argument("--model", default="claude-sonnet-4-5")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one model answer may take (bridge: long)")
    ap.add_argument("--replay", default=None, help="a transcript under tests/fixtures/transcripts to replay")
    ap.add_argument("--done", default=None, help="a file written when the run ends")
    ap.add_argument("--no-adopt", action="store_true",
                    help="analysis.adopt_scan_findings off: the scan's uncovered findings are only listed")
    ap.add_argument("--json", default=None, help="also write the figures and the run id to this file")
    args = ap.parse_args()

    os.environ["ASSAY_HOME"] = args.home or tempfile.mkdtemp(prefix="assay-rm-")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not args.replay and not os.environ.get("ANTHROPIC_API_KEY"):
        raise SystemExit("set ANTHROPIC_API_KEY (any value for the bridge) and ANTHROPIC_BASE_URL")

    from assay.demo import generate
    from assay.evaluate import score_demo
    from assay.findings import finding_key
    from assay.models import LLMConfig, Project, WarehouseConfig
    from assay.run.lifecycle import new_run_id, run_discovery_inline
    from assay.settings import load_settings
    from assay.store import open_store

    figures: dict[str, float] = {}
    run_id = new_run_id()
    import subprocess
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    load = [os.getloadavg()[0]]
    try:
        settings = load_settings()
        db, truth_path = generate(args.which, settings.demo_dir, scale=args.scale)
        truth = json.loads(Path(truth_path).read_text())
        llm = LLMConfig(provider="replay", model=args.replay) if args.replay else \
            LLMConfig(provider="anthropic", model=args.model, api_key_env="ANTHROPIC_API_KEY", timeout_s=args.timeout)
        project = Project(id=f"rm-{args.which}", pack=truth["pack"], category=truth["category"], analyst="llm",
                          max_steps=args.steps,
                          warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}), llm=llm,
                          analysis={"adopt_scan_findings": not args.no_adopt})
        store = open_store(settings)
        store.save_project(project)
        if args.replay:
            from assay.llm import replay

            replay.reset(args.replay)
        t0 = time.perf_counter()
        result = run_discovery_inline(project.id, run_id, settings=settings)
        figures["run_s"] = time.perf_counter() - t0

        s = score_demo(result.insights, truth["patterns"])
        figures["patterns"] = s.patterns
        figures["recall"] = len(s.found) / max(s.patterns, 1)
        figures["precision"] = s.matching_insights / max(s.insights, 1)
        figures["critical_wrong"] = s.critical_wrong
        figures["insights"] = len(result.insights)
        figures["context_notes"] = len(result.context_notes)  # non-differences and data-shape facts, not scored
        keys = Counter(k for k in (finding_key(i) for i in result.insights) if k is not None)
        figures["duplicate_findings"] = sum(n - 1 for n in keys.values() if n > 1)
        verdicts = Counter(i.validation.status.value if i.validation else "none" for i in result.insights)
        for v, n in sorted(verdicts.items()):
            figures[f"verdict_{v}"] = n
        figures["ungrounded"] = sum(1 for i in result.insights if i.ungrounded)
        tel = store.get_run(run_id).telemetry
        figures["scan_adopted"] = sum(1 for i in result.insights if i.origin)  # after merging (run/adopt.py)
        figures["scan_adopted_rejected"] = sum(1 for i in result.insights if i.origin and i.validation
                                               and i.validation.status.value == "rejected")
        figures["scan_adoption_queries"] = tel.scan_adoption_queries
        figures["scan_adoption_s"] = tel.scan_adoption_ms / 1000
        figures["uncovered_leads"] = len(result.uncovered_leads)

        # the exploration's steps: not the probes of adopted scan findings (stored as steps of kind scan)
        steps = [st for st in store.steps(run_id) if st.action.value != "scan"]
        actions = Counter(st.action.value for st in steps)
        schema = actions.get("lookup_schema", 0) + actions.get("search_tables", 0)
        figures["steps"] = len(steps)
        figures["query_steps"] = actions.get("query", 0)
        figures["schema_steps"] = schema
        figures["schema_step_share"] = schema / max(len(steps), 1)
        refused = [st for st in steps if st.refused]
        figures["refused"] = len(refused)
        figures["refused_information_schema"] = sum(1 for st in refused if "information_schema" in (st.query or "").lower())
        delivered: set[str] = set()
        relookups = 0
        for st in steps:
            if st.action.value != "lookup_schema":
                continue
            asked = [t.lower() for t in (st.tables or [])]
            relookups += sum(1 for t in asked if t in delivered)
            delivered.update(asked)
        figures["relookups"] = relookups
        figures["llm_requests"] = store.get_run(run_id).telemetry.llm_calls
        figures["charged_steps"] = sum(1 for st in steps if st.charged)
        print(f"# run {run_id} of {project.id}: {result.run_type.value}; found {s.found}; missed {s.missed}",
              file=sys.stderr)
    finally:
        if args.done:
            Path(args.done).write_text("done\n")
    for k, v in figures.items():
        print(f"{k}: {v:.3f}" if isinstance(v, float) and not float(v).is_integer() else f"{k}: {int(v)}")
    load.append(os.getloadavg()[0])
    print(f"# commit {commit}; load average (1 min) at start / end: {load[0]:.1f} / {load[-1]:.1f}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps({"run_id": run_id, "home": os.environ["ASSAY_HOME"], "commit": commit,
                                               "load": load, "figures": figures}, indent=1))


if __name__ == "__main__":
    main()
