"""A wheel install works on its own: the built-in domain packs are inside the wheel (package data) and load
from an installed copy, away from the source tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_ships_the_packs_and_they_load_when_installed(tmp_path):
    src = tmp_path / "src"  # a copy: the build writes build/ and *.egg-info beside the sources
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for pkg in [p for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name != "tests"]:
        shutil.copytree(pkg, src / pkg.name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(src),
                    "-w", str(tmp_path / "dist")], check=True, capture_output=True, timeout=600, cwd=tmp_path)
    wheel = next((tmp_path / "dist").glob("assay-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    packs = ROOT / "assay" / "domain_packs"
    shipped = {p.relative_to(ROOT).as_posix() for p in packs.rglob("*") if p.is_file()}
    assert shipped and shipped <= names, sorted(shipped - names)[:5]
    # installed into a bare folder, outside the source tree, the packs load from the installed copy
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, timeout=600)
    code = ("import assay.packs as p; from assay.packs import load_pack; "
            "print(p.BUILTIN_PACKS); print(','.join(sorted(a.id for a in load_pack('gaming').areas)))")
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    where, areas = out.stdout.splitlines()[-2:]
    assert Path(where).is_relative_to(target)
    assert {"churn", "engagement", "monetization"} <= set(areas.split(","))
    for name in ("flows", "tasks", "deployments"):  # no top-level packages with generic names
        assert not any(n.startswith(f"{name}/") for n in names), name
