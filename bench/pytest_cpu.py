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
_COLLECT: dict[str, float] = {}


def pytest_collection_finish(session):
    _COLLECT["collection"] = _cpu() - _START  # interpreter start, plugins, conftest and test module imports


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    t = _cpu()
    try:
        return (yield)
    finally:
        _TIMES[item.nodeid] += _cpu() - t


def pytest_sessionfinish(session):
    out = session.config.getoption("--cpu-out")
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / f"{worker}.json").write_text(json.dumps({"collection": _COLLECT.get("collection", 0.0),
                                                          "total": _cpu(), "tests": _TIMES}, indent=0))


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


if __name__ == "__main__":
    summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25)
