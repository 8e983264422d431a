"""The Makefile's install stamp follows pyproject.toml's content, never its mtime; torch is the CPU
build, named explicitly and held by a constraint while the project installs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def make(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "-s", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.fixture()
def clone(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_stamp_follows_content_not_mtime(clone):
    stamp = clone / make(clone, "print-stamp").stdout.strip()
    stamp.parent.mkdir()
    stamp.touch()
    os.utime(stamp, (1_000_000, 1_000_000))  # installed long ago; pyproject.toml checked out since
    assert make(clone, "-q", "install").returncode == 0  # up to date: no reinstall
    (clone / "pyproject.toml").write_text((clone / "pyproject.toml").read_text() + "\n# changed\n")
    assert clone / make(clone, "print-stamp").stdout.strip() != stamp
    assert make(clone, "-q", "install").returncode != 0  # new content: install again


def test_install_names_the_cpu_torch_and_holds_it(clone):
    recipe = make(clone, "-n", "install").stdout
    torch_line = next(x for x in recipe.splitlines() if "torch==2.13.0+cpu" in x)
    project_line = next(x for x in recipe.splitlines() if '-e ".[dev]"' in x)
    assert recipe.index(torch_line) < recipe.index(project_line)
    assert "-c .venv/constraints.txt" in project_line
