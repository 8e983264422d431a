"""Golden fixtures: small files under tests/data/golden/, each opening with one line that says why it exists
(in the file's own comment syntax: ``-- why`` for .sql, ``# why`` for .txt, ``<!-- why -->`` for .md).

A missing fixture fails, and so does a changed one. To accept a change on purpose, rerun the test with
``pytest --update-goldens`` (or ``ASSAY_UPDATE_GOLDEN=1``), read the diff of tests/data/golden/, and commit it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "data" / "golden"
ENV_FLAG = "ASSAY_UPDATE_GOLDEN"
_update = os.environ.get(ENV_FLAG) == "1"


def set_update(on: bool) -> None:
    """Called by the ``--update-goldens`` option (tests/conftest.py)."""
    global _update
    _update = _update or on


def updating() -> bool:
    return _update


def why_line(path: Path, why: str) -> str:
    why = " ".join(why.split())
    if path.suffix == ".sql":
        return f"-- why: {why}"
    if path.suffix in (".md", ".html"):
        return f"<!-- why: {why} -->"
    return f"# why: {why}"


def read_golden(path: Path) -> tuple[str, str]:
    """(the why line, the content) of a golden file."""
    head, _, body = path.read_text(encoding="utf-8").partition("\n")
    return head, body


def check_golden(name: str, actual: str, why: str) -> None:
    """``actual`` must equal the content of tests/data/golden/``name`` (after its why line)."""
    path = GOLDEN / name
    actual = actual.rstrip("\n") + "\n"
    if _update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{why_line(path, why)}\n{actual}", encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"golden fixture {name} is missing: run with --update-goldens (or {ENV_FLAG}=1), review, commit",
                    pytrace=False)
    _, expected = read_golden(path)
    if expected != actual:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            f"golden/{name}", "actual", n=2))
        pytest.fail(f"golden fixture {name} changed (rerun with --update-goldens to accept):\n{diff[:6000]}",
                    pytrace=False)
