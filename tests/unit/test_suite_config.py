"""The suite's own pytest configuration (pyproject.toml): the plugins it uses are named, none is autoloaded, so
pytest does not rewrite the asserts of whole third-party packages in every process (issue 23, item 4)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import AssertionRewritingHook


def test_plugins_are_named_and_third_party_packages_are_not_rewritten(pytestconfig):
    addopts = " ".join(pytestconfig.getini("addopts"))
    assert "--disable-plugin-autoload" in addopts and "-p xdist" in addopts  # `-p no:xdist` still wins by hand
    pm = pytestconfig.pluginmanager
    assert pm.hasplugin("timeout") and pm.hasplugin("hypothesispytest")
    assert pytestconfig.getini("timeout") == "600"  # pytest-timeout reads its ini option
    # autoloaded, the hypothesis and anyio distributions were rewritten module by module (~4 s of CPU a process)
    for name in ("hypothesis.internal.conjecture.engine", "hypothesis.strategies._internal.core", "anyio"):
        mod = importlib.import_module(name)
        assert not isinstance(getattr(mod, "__loader__", None), AssertionRewritingHook), name
    # the suite's own modules still are: a failing assert says what it compared
    assert isinstance(__loader__, AssertionRewritingHook)  # noqa: F821 (the module's loader)


def test_a_failing_assert_still_explains_itself():
    with pytest.raises(AssertionError, match=r"assert 2 == 3"):
        x = 2
        assert x == 3


def test_no_unit_test_module_imports_prefect_when_collected():
    """The unit tier collects in every xdist worker; Prefect (with assay_flows) is ~1.8 s of CPU to import and the
    core never imports it, so a unit test that needs it imports it inside the test (one worker pays, at run time)."""
    heavy = ("prefect", "assay_flows")
    found = []
    for path in sorted(Path(__file__).parent.glob("*.py")):
        for node in ast.parse(path.read_text()).body:  # module level only: what collection runs
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in heavy]
    assert not found, found
