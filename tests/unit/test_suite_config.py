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
    core never imports it, so a unit test that needs it imports it inside the test (one worker pays, at run time).
    The same for the MCP SDK (~0.7 s; only test_mcp_server.py uses it)."""
    heavy = ("prefect", "assay_flows", "mcp")
    found = []
    for path in sorted(Path(__file__).parent.glob("*.py")):
        for node in ast.parse(path.read_text()).body:  # module level only: what collection runs
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in heavy]
    assert not found, found


def _functions_using(tree: ast.Module, name: str) -> set[str]:
    """The module-level functions of ``tree`` (tests, fixtures) that take ``name`` as an argument."""
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and name in [a.arg for a in n.args.args]}


def test_the_files_sharing_a_prefect_server_are_one_unit_of_work():
    """A real Prefect server of tests/integration/conftest.py starts once in an xdist worker only if every file
    that uses it runs there, one after the other: those files are one unit of work (tests/conftest.py), named after
    the server's fixture. A file uses it when one of its functions takes the fixture, or it imports a fixture that
    does from another file."""
    from tests.conftest import unit_of

    integ = Path(__file__).parents[1] / "integration"
    servers = _functions_using(ast.parse((integ / "conftest.py").read_text()), "tmp_path_factory")
    assert servers == {"prefect_serve_server", "prefect_pool_server"}
    trees = {p.stem: ast.parse(p.read_text()) for p in sorted(integ.glob("test_*.py"))}
    for server in servers:
        users = {stem for stem, tree in trees.items() if _functions_using(tree, server)}
        for stem, tree in trees.items():
            for node in tree.body:
                src = node.module.rsplit(".", 1)[-1] if isinstance(node, ast.ImportFrom) and node.module else None
                if src in users and {a.name for a in node.names} & _functions_using(trees[src], server):
                    users.add(stem)
        assert len(users) >= 2, (server, users)  # shared, or there is nothing to share
        assert {unit_of(f"tests/integration/{stem}.py") for stem in users} == {server}, (server, users)


def test_the_flow_files_without_the_harness_are_units_of_their_own():
    """The flow files that start their own servers run without the Prefect test harness (tests/flows/conftest.py),
    each as its own unit of work; every other flow file shares the harness's unit."""
    from tests.conftest import OWN_SERVER_FLOW_FILES, unit_of

    flows = Path(__file__).parents[1] / "flows"
    names = {p.name for p in flows.glob("test_*.py")}
    assert set(OWN_SERVER_FLOW_FILES) <= names, set(OWN_SERVER_FLOW_FILES) - names
    for name in sorted(names):
        unit = unit_of(f"tests/flows/{name}")
        assert unit == (f"tests/flows/{name}" if name in OWN_SERVER_FLOW_FILES else "tests/flows"), (name, unit)


def test_every_service_fixture_sets_a_service_marker(pytestconfig):
    """A session fixture of tests/conftest.py that reaches a service (it calls ``need_service``) marks the tests
    using it with that service's marker and ``services`` (`-m "not services"` leaves them out); the markers are
    registered. The MariaDB fixture was missing: its tests ran under `-m "not services"`."""
    from tests.conftest import _SERVICE_FIXTURES, SERVICE_MARKERS

    tree = ast.parse((Path(__file__).parents[1] / "conftest.py").read_text())
    reaching = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                and any(isinstance(c, ast.Call) and getattr(c.func, "id", None) == "need_service" for c in ast.walk(n))}
    assert reaching == set(_SERVICE_FIXTURES), (reaching, set(_SERVICE_FIXTURES))
    assert set(_SERVICE_FIXTURES.values()) <= set(SERVICE_MARKERS)
    registered = {line.split(":")[0].strip() for line in pytestconfig.getini("markers")}
    assert {"services", *SERVICE_MARKERS} <= registered, {"services", *SERVICE_MARKERS} - registered


class _Item:
    """What ``_start_rank`` reads of a collected test: its file and its markers."""

    def __init__(self, path: str, *markers: str):
        self.fspath, self.markers = Path(path), set(markers)

    def get_closest_marker(self, name):
        return name if name in self.markers else None


def test_the_integration_tier_starts_with_its_long_units_and_ends_with_the_split_replays():
    """The order units are handed out in: the Prefect server files, the unit and flow tiers, then the long
    integration units that cannot be split, the other integration files, and last the replays, one unit per test
    (a 110 s file handed out last kept one worker busy alone for a minute)."""
    from tests.conftest import _LONG_INTEGRATION, SPLIT_FILES, _start_rank

    integ = Path(__file__).parents[1] / "integration"
    assert all((integ / name).is_file() for name in _LONG_INTEGRATION)
    assert all((Path(__file__).parents[2] / f).is_file() for f in SPLIT_FILES)
    ranks = [_start_rank(_Item("tests/integration/test_prefect_workers.py", "prefect_server", "integration")),
             _start_rank(_Item("tests/unit/test_guard.py", "unit")),
             _start_rank(_Item("tests/flows/test_notify.py", "flow")),
             *(_start_rank(_Item(f"tests/integration/{n}", "integration")) for n in _LONG_INTEGRATION),
             _start_rank(_Item("tests/integration/test_wheel.py", "integration")),
             _start_rank(_Item(SPLIT_FILES[0], "integration"))]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks), ranks


def test_a_split_file_is_one_unit_per_test():
    """Under `make test`'s scheduler a replay test is a unit of its own; any other file is one unit (or its
    shared unit)."""
    from tests.conftest import SPLIT_FILES, work_unit

    a, b = (f"{SPLIT_FILES[0]}::test_real_model_transcript_replays_end_to_end[{n}]" for n in ("r1", "r2"))
    assert work_unit(a, SPLIT_FILES[0]) == a and work_unit(b, SPLIT_FILES[0]) == b
    plain = "tests/integration/test_wheel.py"
    assert work_unit(f"{plain}::test_x", plain) == work_unit(f"{plain}::test_y", plain) == plain
    pool = "tests/integration/test_prefect_scale_out.py"
    assert work_unit(f"{pool}::test_x", pool) == "prefect_pool_server"
