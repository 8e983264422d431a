"""Project the wall time of `make test` on two workers from a JUnit report of one run (issue 23).

    python bench/suite_schedule.py RUN.xml [--scale F] [--order old|new]

The report gives each test's duration (setup + call + teardown, pytest's default junit_duration_report).
This replays xdist's file scheduling with those durations: a unit of work (a file, or the files of a shared
unit of tests/conftest.py) goes to a worker at the start and whenever the worker has two tests or fewer left
to finish (xdist's LoadScopeScheduling). `--order old` hands the units out as xdist does by default (most
tests first); `--order new` in the order tests/conftest.py gives (the Prefect server files first, then the
unit, flow and integration tiers) with its shared units. `--scale` multiplies every duration (a run measured
under load, scaled to an idle machine). Collection time is not in the report: add it.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import OrderedDict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TIERS = ("tests/unit/", "tests/flows/", "tests/integration/")

def _first() -> tuple[str, ...]:
    """The files that start a real Prefect server (prefect_server marker): tests/conftest.py starts them first,
    longest first (its _LONGEST_FIRST, read from there so that the replay keeps the suite's order)."""
    from tests.conftest import _LONGEST_FIRST

    return tuple(f"tests/integration/{name}" for name in _LONGEST_FIRST)


FIRST = _first()


def tests_of(report: Path) -> list[tuple[str, float]]:
    """(file, seconds) per test, files in collection order (tiers as `make test` names them, then by name)."""
    out = []
    for tc in ET.parse(report).iter("testcase"):
        parts = tc.get("classname").split(".")
        file = "/".join(parts[:3]) + ".py"
        out.append((file, float(tc.get("time") or 0)))
    tier = {f: next(i for i, t in enumerate(TIERS) if f.startswith(t)) for f, _ in out}
    return sorted(out, key=lambda t: (tier[t[0]], t[0]))  # stable: a file's tests keep their order


def units(tests: list[tuple[str, float]], order: str) -> list[list[float]]:
    from tests.conftest import _SHARED_UNITS

    def unit(file: str) -> str:
        if order == "old":
            return file
        return next((u for prefix, u in _SHARED_UNITS.items() if file.startswith(prefix)), file)

    if order == "new":
        rank = {f: FIRST.index(f) / len(FIRST) if f in FIRST else 1 + next(i for i, t in enumerate(TIERS) if f.startswith(t))
                for f, _ in tests}
        tests = sorted(tests, key=lambda t: rank[t[0]])
    work: OrderedDict[str, list[float]] = OrderedDict()
    for f, s in tests:
        work.setdefault(unit(f), []).append(s)
    queue = list(work.values())
    if order == "old":
        queue.sort(key=lambda u: -len(u))  # xdist's --loadscope-reorder (the default)
    return queue


def simulate(queue: list[list[float]], workers: int = 2, scale: float = 1.0) -> list[float]:
    """Each worker's finishing time."""
    queue = [[s * scale for s in u] for u in queue]
    pending: list[list[float]] = [[] for _ in range(workers)]
    clock = [0.0] * workers
    for w in range(workers):  # one unit each, then a second one if the first is two tests or fewer
        if queue:
            pending[w].extend(queue.pop(0))
    for w in range(workers):
        if queue and len(pending[w]) <= 2:
            pending[w].extend(queue.pop(0))
    while any(pending):
        w = min((w for w in range(workers) if pending[w]), key=lambda w: clock[w] + pending[w][0])
        clock[w] += pending[w].pop(0)
        if queue and len(pending[w]) <= 2:
            pending[w].extend(queue.pop(0))
    return clock


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("report", type=Path)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--order", choices=("old", "new"), default="new")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    tests = tests_of(a.report)
    finish = simulate(units(tests, a.order), a.workers, a.scale)
    total = sum(s for _, s in tests) * a.scale
    print(f"tests {len(tests)}  test time {total:.1f} s  order {a.order}  scale {a.scale}")
    print("worker finish: " + ", ".join(f"{c:.1f} s" for c in finish) + f"  -> wall {max(finish):.1f} s "
          f"(+ collection)")


if __name__ == "__main__":
    main()
