"""CPU time per test and of the collection, for a shared machine where wall times say more about the load than
about the tests (issue 23, item 4). A pytest plugin:

    PYTHONPATH=. .venv/bin/python -m pytest -p bench.pytest_cpu --cpu-out=/tmp/cpu tests/unit -n 2 ...

Each process (every xdist worker, or the one process) writes ``<cpu-out>/<worker>.json``: the CPU seconds
(user + sys of the process and of the child processes it waited for) of its collection and of each test's
setup, call and teardown. ``python bench/pytest_cpu.py /tmp/cpu`` sums them: per worker, the top tests and files.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def pytest_addoption(parser):
    parser.addoption("--cpu-out", default=None, help="folder for the per-process CPU times (bench/pytest_cpu.py)")


_START = _cpu()
_TIMES: dict[str, float] = defaultdict(float)
_WALL: dict[str, list[float]] = {}  # a test's (start, end) on the wall clock: when each worker was busy
_COLLECT: dict[str, float] = {}


def pytest_collection_finish(session):
    _COLLECT["collection"] = _cpu() - _START  # interpreter start, plugins, conftest and test module imports


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t, w = _cpu(), time.time()
    try:
        return (yield)
    finally:
        _TIMES[item.nodeid] += _cpu() - t
        _WALL[item.nodeid] = [w, time.time()]


def pytest_sessionfinish(session):
    out = session.config.getoption("--cpu-out")
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / f"{worker}.json").write_text(json.dumps({"collection": _COLLECT.get("collection", 0.0),
                                                          "total": _cpu(), "tests": _TIMES,
                                                          "wall": _WALL}, indent=0))


def summary(folder: str, top: int = 25) -> None:
    per_file: dict[str, float] = defaultdict(float)
    tests: dict[str, float] = {}
    for f in sorted(Path(folder).glob("*.json")):
        d = json.loads(f.read_text())
        print(f"{f.stem}: total {d['total']:.1f} s CPU, collection {d['collection']:.1f} s, "
              f"tests {sum(d['tests'].values()):.1f} s ({len(d['tests'])} tests)")
        for node, s in d["tests"].items():
            tests[node] = s
            per_file[node.split("::")[0]] += s
    print("top tests (CPU s):")
    for node, s in sorted(tests.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {s:6.2f}  {node}")
    print("top files (CPU s):")
    for node, s in sorted(per_file.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {s:6.2f}  {node}")
    timeline(folder)


def timeline(folder: str, buckets: int = 10) -> None:
    """When the workers were busy: per tenth of the run, how many were running a test, and per worker the
    file it ran last (the tail, where one long file runs alone, is what a schedule can shorten)."""
    walls = {f.stem: json.loads(f.read_text()).get("wall") or {} for f in sorted(Path(folder).glob("gw*.json"))}
    spans = [(w, node, a, b) for w, d in walls.items() for node, (a, b) in d.items()]
    if not spans:
        return
    t0, t1 = min(a for _, _, a, _ in spans), max(b for _, _, _, b in spans)
    step = (t1 - t0) / buckets
    print(f"timeline ({t1 - t0:.0f} s from the first test to the last; busy worker-seconds per tenth):")
    for i in range(buckets):
        lo, hi = t0 + i * step, t0 + (i + 1) * step
        busy = sum(max(0.0, min(b, hi) - max(a, lo)) for _, _, a, b in spans)
        print(f"  {i * step:6.0f}-{(i + 1) * step:4.0f} s: {busy / step:.2f} workers busy")
    for w in walls:
        mine = sorted((a, b, node) for ww, node, a, b in spans if ww == w)
        if mine:
            files = list(dict.fromkeys(node.split("::")[0] for _, _, node in mine))
            print(f"  {w}: busy {sum(b - a for a, b, _ in mine):.0f} s, last test ends at {mine[-1][1] - t0:.0f} s, "
                  f"last files: {', '.join(f.rsplit('/', 1)[-1] for f in files[-3:])}")


if __name__ == "__main__":
    summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25)
