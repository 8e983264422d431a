"""InsightBench evaluation: tasks into DuckDB, goal-driven discovery, scores against ground truth.

A task folder holds ``csvs/flag-N.csv`` (plus ``flag-N-sysuser.csv`` for some
tasks) and ``flags/flag-N.json`` (``metadata.goal``, ``insights``). The score is
the benchmark's insight-level score: for every ground-truth insight the best
matching prediction, averaged over ground truth, with ROUGE-1 (F-measure) and
with embedding cosine. Extra predictions are not penalised by that score, so
precision is reported beside it: the share of predictions whose best cosine to
some ground-truth insight reaches ``MATCH_COSINE``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import UserError

MATCH_COSINE = 0.5
# ServiceNow table names as the datasets describe them -> the plain names people would give them
TABLE_NAMES = {"incident": "incidents", "incidents": "incidents", "alm_hardware": "assets",
               "fm_expense_line": "expenses", "sn_gf_goal": "goals", "sys_user": "users"}
_TABLE_IN_DESCRIPTION = re.compile(r"ServiceNow\s+`?([a-z_]+)`?\s+table", re.I)


@dataclass
class Task:
    id: int
    goal: str
    tables: dict[str, Path]        # table name -> CSV
    truth: list[str]


@dataclass
class TaskScore:
    task: int
    rouge1: float
    cosine: float
    precision: float
    predictions: int
    truths: int
    seconds: float = 0.0
    rouge1_description: float = 0.0  # the same score on descriptions (the claim with its numbers)
    best: list[str] = field(default_factory=list)  # the best prediction for each truth (for reading)


def parse_task_ids(spec: str) -> list[int]:
    """``1-30``, ``1,4,9-12``."""
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise UserError(f"--tasks {spec!r}: expected numbers and ranges such as 1-30 or 1,4,9-12")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise UserError(f"--tasks {spec!r}: range {part} runs backwards")
        out += [i for i in range(lo, hi + 1) if i not in out]
    if not out:
        raise UserError("--tasks: no task given")
    return out


def table_name(meta: dict, second_table: bool = False) -> str:
    """The main table's name from the dataset description (two-table tasks name sys_user first)."""
    desc = meta.get("dataset_description") or ""
    named = [m.group(1).lower() for m in _TABLE_IN_DESCRIPTION.finditer(desc)]
    named += [x.lower() for x in re.findall(r"`([a-z_]+)`", desc)]
    if second_table:
        named = [x for x in named if x != "sys_user"]
    raw = named[0] if named else "data"
    return TABLE_NAMES.get(raw, raw)


def truth_insights(flag: dict) -> list[str]:
    """Ground-truth insight strings; empty upstream strings fall back to the insight list's text."""
    listed = [x.get("insight") for x in flag.get("insight_list") or [] if isinstance(x, dict)]
    out = []
    for i, text in enumerate(flag.get("insights") or []):
        text = (text or "").strip() or (str(listed[i] or "").strip() if i < len(listed) else "")
        if text:
            out.append(text)
    if not out:
        out = [str(t).strip() for t in listed if t and str(t).strip()]
    return out


def load_task(root: Path, n: int) -> Task:
    flag_path = root / "flags" / f"flag-{n}.json"
    csv_path = root / "csvs" / f"flag-{n}.csv"
    if not flag_path.is_file() or not csv_path.is_file():
        raise UserError(f"{root}: task {n} needs flags/flag-{n}.json and csvs/flag-{n}.csv")
    try:
        flag = json.loads(flag_path.read_text())
        goal = flag["metadata"]["goal"].strip()
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UserError(f"{flag_path}: not an InsightBench task ({type(exc).__name__}: {exc})") from None
    users = root / "csvs" / f"flag-{n}-sysuser.csv"
    name = table_name(flag["metadata"], second_table=users.is_file())
    tables = {name: csv_path}
    if users.is_file():
        tables["users" if name != "users" else "users_2"] = users
    # no ground truth (the public benchmark has such a task): loaded, and skipped by `evaluate`
    return Task(id=n, goal=goal, tables=tables, truth=truth_insights(flag))


def load_tasks(root: Path, ids: list[int]) -> list[Task]:
    if not (root / "flags").is_dir() or not (root / "csvs").is_dir():
        raise UserError(f"{root}: not an InsightBench folder (expected csvs/ and flags/)")
    return [load_task(root, n) for n in ids]


def build_warehouse(task: Task, path: Path) -> Path:
    """One DuckDB file per task, a table per CSV (types inferred by DuckDB's CSV sniffer)."""
    import duckdb

    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    try:
        for name, csv in task.tables.items():
            con.execute(f'CREATE TABLE main."{name}" AS SELECT * FROM read_csv_auto(?, header = true)', [str(csv)])
    finally:
        con.close()
    return path


# ---------------------------------------------------------------------------- scoring

_scorer = None


def rouge1(prediction: str, reference: str) -> float:
    """ROUGE-1 F-measure (Porter-stemmed unigrams), as the rouge-score package computes it."""
    global _scorer
    if _scorer is None:
        from rouge_score import rouge_scorer

        _scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    return float(_scorer.score(reference, prediction)["rouge1"].fmeasure)


def rouge_matrix(predictions: list[str], truths: list[str]) -> np.ndarray:
    """ROUGE-1 F of every prediction (columns) against every truth (rows)."""
    return np.array([[rouge1(p, t) for p in predictions] for t in truths])


def score_task(task_id: int, predictions: list[str], truths: list[str], embed) -> TaskScore:
    """Insight-level scores: for each truth its best prediction, averaged over truths."""
    if not truths:
        raise ValueError("a task needs ground truth")
    if not predictions:
        return TaskScore(task_id, 0.0, 0.0, 0.0, 0, len(truths))
    r = rouge_matrix(predictions, truths)
    vt, vp = embed(truths), embed(predictions)
    cos = np.clip(vt @ vp.T, -1.0, 1.0)
    precision = float((cos.max(axis=0) >= MATCH_COSINE).mean())
    best = [predictions[int(j)] for j in r.argmax(axis=1)]
    return TaskScore(task_id, float(r.max(axis=1).mean()), float(cos.max(axis=1).mean()), precision,
                     len(predictions), len(truths), best=best)


def prediction_text(insight, field: str = "name") -> str:
    """What is scored for a predicted insight: its headline (``name``), the form of the benchmark's
    ground truth, or its ``description`` (the same claim with its numbers and tests)."""
    return (getattr(insight, field) or "").strip() or insight.name


def reported(result) -> list:
    """What a discovery's report states: its insights, then its context notes (a non-difference that answers the
    goal's question, "the increase is uniform across categories", is reported as context, not as an insight, and
    the benchmark's ground truth states such answers too)."""
    return list(result.insights) + list(getattr(result, "context_notes", None) or [])


# ---------------------------------------------------------------------------- running


def run_task(task: Task, *, settings, store, analyst: str = "statistical", max_steps: int = 60):
    """Goal-driven discovery of one task on a fresh DuckDB warehouse; earlier runs of the task's
    project are deleted first, so a task never sees another attempt's insights as history."""
    from .models import Project, WarehouseConfig
    from .run.lifecycle import new_run_id, run_discovery_inline

    db = build_warehouse(task, settings.home / "insightbench" / f"flag-{task.id}.duckdb")
    pid = f"insightbench-{task.id}"
    store.save_project(Project(id=pid, name=task.goal[:60], pack="goal", goal=task.goal, analyst=analyst,
                               max_steps=max_steps,
                               warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)})))
    for old in store.list_runs(pid, limit=1000):
        store.delete_run(old.id)
    store.drop_schema_cache(pid)  # the file was rebuilt: its schema is re-read
    return run_discovery_inline(pid, new_run_id(), settings=settings)


def skip_reason(task: Task) -> str | None:
    """Why a task cannot be scored (None when it can)."""
    if not task.truth:
        return "no ground-truth insights in its flags file"
    return None


def scorable(tasks: list[Task]) -> list[Task]:
    """The tasks that can be scored; when none can, one line saying so."""
    kept = [t for t in tasks if skip_reason(t) is None]
    if tasks and not kept:
        raise UserError(f"no task to score: task(s) {', '.join(str(t.id) for t in tasks)} have no ground-truth "
                        "insights")
    return kept


def evaluate(root: Path, ids: list[int], *, settings, store, embed, analyst: str = "statistical",
             max_steps: int = 60, on_task=None, on_skip=None) -> list[TaskScore]:
    """Run and score each task; a task without ground truth is skipped (``on_skip(id, why)``), not run."""
    import time

    tasks = load_tasks(root, ids)
    kept = scorable(tasks)
    for task in tasks:
        if task not in kept and on_skip:
            on_skip(task.id, skip_reason(task))
    scores = []
    for task in kept:
        t0 = time.perf_counter()
        result = run_task(task, settings=settings, store=store, analyst=analyst, max_steps=max_steps)
        stated = reported(result)
        s = score_task(task.id, [prediction_text(i) for i in stated], task.truth, embed)
        if stated:  # the same score on descriptions (ROUGE only: no second embedding pass)
            descriptions = [prediction_text(i, "description") for i in stated]
            s.rouge1_description = float(rouge_matrix(descriptions, task.truth).max(axis=1).mean())
        s.seconds = time.perf_counter() - t0
        scores.append(s)
        if on_task:
            on_task(s)
    return scores


CSV_COLUMNS = ["task", "rouge1", "rouge1_description", "cosine", "precision", "predictions", "truths", "seconds"]


def write_csv(scores: list[TaskScore], path: Path) -> None:
    import csv

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for s in scores:
            w.writerow([s.task, f"{s.rouge1:.4f}", f"{s.rouge1_description:.4f}", f"{s.cosine:.4f}",
                        f"{s.precision:.4f}", s.predictions, s.truths, f"{s.seconds:.2f}"])


def summary(scores: list[TaskScore]) -> dict[str, float]:
    n = len(scores) or 1
    return {
        "tasks": len(scores),
        "rouge1": sum(s.rouge1 for s in scores) / n,
        "rouge1_description": sum(s.rouge1_description for s in scores) / n,
        "cosine": sum(s.cosine for s in scores) / n,
        "precision": sum(s.precision for s in scores) / n,
        "seconds_per_task": sum(s.seconds for s in scores) / n,
    }
