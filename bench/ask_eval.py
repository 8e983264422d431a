"""The `assay ask` evaluation: 30 questions on the demo warehouses, half answerable from insights, half by SQL.

    PYTHONPATH=. .venv/bin/python bench/ask_eval.py WORK_DIR [--llm env | --llm replay:NAME] [--only ID,ID]
        [--json OUT.json] [--done-file BRIDGE_DIR/DONE]
    PYTHONPATH=. .venv/bin/python bench/ask_eval.py --rescore OUT.json   # today's checker on saved answers

WORK_DIR gets its own ASSAY_HOME and the two demo warehouses at the scale of bench/data/ask_eval.json (0.2,
the test suite's). Each warehouse is registered as a project and discovered by the statistical analyst
(deterministic: no LLM, so the insights the questions are about are the same on every machine). Before
asking, every expectation is checked against its source: an insights question's against the text of the
insight it names (or, when a detector change renumbered the run's insights, of any insight that says it), a SQL question's against the rows of the SQL it was derived with; a drifted expectation
stops the run. Then each question goes to `assay ask` with the chosen LLM:

- ``--llm env`` (default): the analyst the environment resolves (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL,
  e.g. the model bridge);
- ``--llm replay:NAME``: a recorded transcript (tests/fixtures/transcripts/NAME or a bridge folder), played
  in order; every recorded answer must be asked for.

An answer is correct when it contains every expected item (`check`): each entity (one of its spellings)
and each number, matched at the precision the answer writes it. Prints one line per question and
`name: value` figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "bench" / "data" / "ask_eval.json"

# ------------------------------------------------------------------------------------------------ checker

_NUM = re.compile(r"(?<![\w.])([-−]?\d[\d,]*(?:\.\d+)?|[-−]?\.\d+)\s*(%|percent\b|pp\b|[kK]\b|[mM]\b|million\b|thousand\b)?")


def numbers(text: str) -> list[tuple[float, float]]:
    """Every number written in ``text`` as (value, half a unit of its last written digit, significant
    digits), in the number's own scale: "55.9%" is (0.559, 0.0005, 3), "740k" is (740000, 500, 3)."""
    out = []
    for m in _NUM.finditer(text):
        raw, unit = m.group(1).replace(",", "").replace("−", "-"), (m.group(2) or "").lower()
        if "," in m.group(1) and not re.fullmatch(r"[-−]?\d{1,3}(,\d{3})+(\.\d+)?", m.group(1)):
            continue  # "1,2,3": a list, not a number
        try:
            v = float(raw)
        except ValueError:
            continue
        decimals = len(raw.split(".")[1]) if "." in raw else 0
        half = 0.5 * 10 ** -decimals
        digits = len(raw.lstrip("-").replace(".", "").lstrip("0"))
        scale = {"%": 0.01, "percent": 0.01, "k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6}.get(unit, 1.0)
        out.append((v * scale, half * scale, digits))
    return out


def _matches_number(text: str, want: float, rate: bool) -> bool:
    wrote = str(want)
    want_half = 0.5 * 10 ** -(len(wrote.split(".")[1]) if "." in wrote and not wrote.endswith(".0") else 0)
    small_int = want == int(want) and abs(want) < 10
    for v, half, digits in numbers(text):
        if digits < 2 and not small_int:
            continue  # one significant digit ("2%", "0.6") is too rough to stand for anything but a small count
        cands = [v]
        if rate and half < 0.05 and abs(v) > 1.0 and abs(v) <= 100:
            cands.append(v / 100)  # "55.9" next to the word percent, or a rate written as a percentage figure
            half_alt = half / 100
        for i, c in enumerate(cands):
            h = half if i == 0 else half_alt
            if math.isclose(c, want, rel_tol=0, abs_tol=max(h, want_half) + 1e-12):
                return True
    return False


def _matches_text(text: str, alternatives: list[str]) -> bool:
    """One of the spellings as a whole word; a code in capitals (IT, US) only in capitals (not the word "it")."""
    for a in alternatives:
        exact = a.isupper()
        hay, needle = (text, a) if exact else (text.lower(), a.lower())
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(needle)}(?![A-Za-z0-9_])", hay):
            return True
    return False


def describe(item: dict) -> str:
    if "text" in item:
        return "/".join(item["text"])
    return f"{item['number']:g}" + (" (rate)" if item.get("rate") else "")


def check(answer: str, expect: list[dict]) -> list[str]:
    """The expected items ``answer`` lacks (empty: correct)."""
    missing = []
    for item in expect:
        ok = (_matches_text(answer, item["text"]) if "text" in item
              else _matches_number(answer, float(item["number"]), bool(item.get("rate"))))
        if not ok:
            missing.append(describe(item))
    return missing


# ------------------------------------------------------------------------------------------------ setup


def load(path: Path = DATA) -> dict:
    data = json.loads(path.read_text())
    qs = data["questions"]
    ids = [q["id"] for q in qs]
    if len(set(ids)) != len(ids):
        raise SystemExit(f"error: duplicate question ids in {path}")
    return data


def setup(work: Path, scale: float) -> dict:
    """Generate both demos, register and discover them (statistical analyst, no LLM): {warehouse: (project,
    result)}."""
    from assay.demo import generate
    from assay.models import LLMConfig, Project, WarehouseConfig
    from assay.run.lifecycle import new_run_id, run_discovery_inline
    from assay.settings import load_settings
    from assay.store import open_store

    settings = load_settings()
    store = open_store(settings)
    out = {}
    for n in ("ecommerce", "gaming"):
        db, truth_path = generate(n, work / "demo", scale=scale)
        truth = json.loads(truth_path.read_text())
        p = Project(id=f"ask-eval-{n}", pack=truth["pack"], category=truth["category"], analyst="statistical",
                    max_steps=60, llm=LLMConfig(provider="none"),
                    warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db), "llm_descriptions": False},
                                              pii_columns=["email", "full_name"]))
        store.save_project(p)
        result = run_discovery_inline(p.id, new_run_id(), settings=settings)
        out[n] = (p, result)
    return out


def check_expectations(questions: list[dict], runs: dict) -> list[str]:
    """Each expectation against its source; the problems found (empty: every one holds)."""
    import duckdb

    problems = []
    for q in questions:
        if q.get("source_gone"):  # the finding it asked about is no longer reported (why: its "source_gone")
            continue
        p, result = runs[q["warehouse"]]
        if q["kind"] == "insights":
            # the named insight first, then any other: an insight's id is its rank in its area, and a
            # detector change that adds or drops an insight renumbers the rest without changing what they say
            named = [i for i in result.insights if i.id == q["insight"]]
            misses = [check(f"{i.name}. {i.description}", q["expect"])
                      for i in named + [i for i in result.insights if i.id != q["insight"]]]
            miss = min(misses, key=len) if misses else [describe(e) for e in q["expect"]]
        else:
            con = duckdb.connect(p.warehouse.settings["path"], read_only=True)
            try:
                rows = con.execute(q["sql"]).fetchall()
            finally:
                con.close()
            miss = check(" ; ".join(" ".join(str(v) for v in r) for r in rows), q["expect"])
        if miss:
            problems.append(f"{q['id']}: its source does not say {', '.join(miss)}")
    return problems


def build(llm_spec: str):
    from assay.llm import build_llm
    from assay.models import LLMConfig

    if llm_spec.startswith("replay:"):
        from assay.llm import replay

        cfg = LLMConfig(provider="replay", model=llm_spec.split(":", 1)[1])
        replay.reset(cfg.model)
        return replay.replay_llm(cfg)
    if llm_spec != "env":
        raise SystemExit(f"error: --llm {llm_spec!r}: expected env or replay:NAME")
    llm = build_llm(LLMConfig())
    if llm is None:
        raise SystemExit("error: --llm env: no LLM in the environment (set ANTHROPIC_API_KEY or OPENAI_BASE_URL)")
    return llm


class Counting:
    """Counts the requests an LLM serves (any LLM: the bridge's, a replay)."""

    def __init__(self, inner):
        self.inner, self.n = inner, 0

    def complete(self, request):
        self.n += 1
        return self.inner.complete(request)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def ask_all(questions: list[dict], runs: dict, llm, on_answer=None) -> list[dict]:
    from assay.ask import ask
    from assay.settings import load_settings
    from assay.store import open_store

    store = open_store(load_settings())
    rows = []
    llm = llm if isinstance(llm, Counting) else Counting(llm)
    for q in questions:
        p, _ = runs[q["warehouse"]]
        t = time.time()
        calls_before = llm.n
        try:
            ans = ask(store, p, q["question"], llm=llm)
            text, sources, finished = ans.answer, ans.sources, ans.finished
            queries = [s.query for s in ans.queries]
            cited = [h.id for h in ans.cited_insights()]
            searched = sum(1 for s in ans.steps if s.action.value == "search_insights")
            err = ""
        except Exception as e:  # a crash is a wrong answer, reported with its reason
            text, sources, finished, queries, cited, searched = "", "nothing", "error", [], [], 0
            err = f"{type(e).__name__}: {e}"
            if type(e).__name__ == "TranscriptMismatch":
                raise
        missing = check(text, q["expect"]) if text else [describe(i) for i in q["expect"]]
        row = {"id": q["id"], "kind": q["kind"], "warehouse": q["warehouse"], "question": q["question"],
               "answer": text, "correct": not missing, "missing": missing, "sources": sources,
               "finished": finished, "queries": queries, "cited_insights": cited, "searches": searched,
               "llm_calls": llm.n - calls_before, "seconds": round(time.time() - t, 1),
               "error": err}
        rows.append(row)
        if on_answer:
            on_answer(row)
    return rows


def summary(rows: list[dict]) -> dict:
    def frac(rs):
        return f"{sum(r['correct'] for r in rs)}/{len(rs)}"

    ins = [r for r in rows if r["kind"] == "insights"]
    sql = [r for r in rows if r["kind"] == "sql"]
    return {
        "correct": frac(rows), "correct_fraction": round(sum(r["correct"] for r in rows) / max(len(rows), 1), 3),
        "correct_insights_questions": frac(ins), "correct_sql_questions": frac(sql),
        "insights_questions_answered_from_insights": f"{sum('insights' in r['sources'] for r in ins)}/{len(ins)}",
        "insights_questions_that_also_queried": f"{sum(bool(r['queries']) for r in ins)}/{len(ins)}",
        "sql_questions_answered_from_warehouse": f"{sum('warehouse' in r['sources'] for r in sql)}/{len(sql)}",
        "errors": sum(1 for r in rows if r["error"]),
        "not_finished": sum(1 for r in rows if r["finished"] != "done"),
    }


def rescore(path: Path) -> int:
    expect = {q["id"]: q["expect"] for q in load()["questions"]}
    rows = json.loads(path.read_text())["rows"]
    for r in rows:
        r["missing"] = check(r["answer"], expect[r["id"]]) if r["answer"] else [describe(i) for i in expect[r["id"]]]
        r["correct"] = not r["missing"]
        if r["missing"]:
            print(f"BAD {r['id']:<5} missing {', '.join(r['missing'])}: {r['answer'][:300]}")
    for k, v in summary(rows).items():
        print(f"{k}: {v}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("work", type=Path, nargs="?", help="working folder (ASSAY_HOME and the demo warehouses go here)")
    ap.add_argument("--llm", default="env", help="env | replay:NAME")
    ap.add_argument("--only", default="", help="comma-separated question ids")
    ap.add_argument("--json", type=Path, help="write every question's answer and verdict here")
    ap.add_argument("--done-file", type=Path, help="touch this file when the questions are answered (the bridge's DONE)")
    ap.add_argument("--rescore", type=Path, help="score the answers of an earlier --json again with today's checker "
                                                 "(nothing is asked)")
    args = ap.parse_args(argv)
    if args.rescore:
        return rescore(args.rescore)
    if args.work is None:
        ap.error("WORK_DIR is required (unless --rescore)")

    args.work.mkdir(parents=True, exist_ok=True)
    os.environ["ASSAY_HOME"] = str((args.work / "home").resolve())
    data = load()
    questions = data["questions"]
    if args.only:
        want = {x.strip() for x in args.only.split(",") if x.strip()}
        unknown = want - {q["id"] for q in questions}
        if unknown:
            raise SystemExit(f"error: --only: unknown question ids {', '.join(sorted(unknown))}")
        questions = [q for q in questions if q["id"] in want]
    llm = build(args.llm)
    t0 = time.time()
    runs = setup(args.work, data["scale"])
    problems = check_expectations(questions, runs)
    if problems:
        raise SystemExit("error: expectations do not hold:\n  " + "\n  ".join(problems))
    print(f"setup_seconds: {time.time() - t0:.0f}", flush=True)

    def line(r):
        mark = "ok " if r["correct"] else "BAD"
        print(f"{mark} {r['id']:<5} [{r['sources']}] {r['llm_calls']} calls {r['seconds']}s"
              + (f" missing {', '.join(r['missing'])}" if r["missing"] else "")
              + (f" ({r['error']})" if r["error"] else ""), flush=True)

    try:
        rows = ask_all(questions, runs, llm, on_answer=line)
    finally:
        if args.done_file:
            args.done_file.touch()
    if hasattr(llm, "assert_consumed"):
        llm.assert_consumed()
    s = summary(rows)
    for k, v in s.items():
        print(f"{k}: {v}")
    if args.json:
        args.json.write_text(json.dumps({"summary": s, "rows": rows}, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
