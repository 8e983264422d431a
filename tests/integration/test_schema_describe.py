"""LLM table descriptions (scripted LLM, real store, real Qdrant local index and embeddings)."""

from __future__ import annotations

import json

import pytest

from assay.llm.scripted import ScriptedLLM
from assay.models import ColumnInfo, Project, TableInfo, WarehouseConfig
from assay.schema.describe import (
    GROUP, PURPOSE, DescribeStats, content_hash, describe_tables, enabled, estimate_phase, parse_answer, run_notes,
)
from assay.schema.index import SchemaIndex
from assay.settings import load_settings
from assay.store import open_store
from assay.vectors.index import open_index


def t(name, cols, rows=100, schema="erp"):
    return TableInfo(schema=schema, name=name, row_count=rows, columns=[ColumnInfo(name=c, type="VARCHAR") for c in cols])


WORDS = {"t_x1": "Customer complaints and support cases. Search words: complaints, tickets, grievances",
         "t_x2": "Payroll runs with gross pay per employee. Search words: salaries, wages, payroll"}


def describer(fail_on: set[str] | None = None):
    def answer(req):
        names = req.meta["tables"]
        if fail_on and any(n.split(".")[-1] in fail_on for n in names):
            raise TimeoutError("model timed out")
        return "Here you go:\n" + json.dumps({n: WORDS.get(n.split(".")[-1], f"Rows of {n}.") for n in names})
    return ScriptedLLM(answer)


@pytest.fixture
def store():
    return open_store(load_settings())


def test_one_call_per_group_cached_by_content(store):
    tables = [t(f"tbl_{i}", ["a", "b"]) for i in range(2 * GROUP + 3)] + [t("tbl_0_bkp3", ["a", "b"])]
    llm = describer()
    stats = DescribeStats()
    notes = describe_tables(llm, tables, store, stats=stats)
    assert stats.calls == 3 == len(llm.purposes(PURPOSE)) and stats.written == 2 * GROUP + 3
    assert "erp.tbl_0_bkp3" not in notes  # archive copies fold into their live table: not described
    assert all("Tables:" in r.messages[0].content and len(r.meta["tables"]) <= GROUP for r in llm.calls)
    again = DescribeStats()
    assert describe_tables(llm, tables, store, stats=again) == notes  # a rerun: all from the cache
    assert again.calls == 0 and again.cached == len(notes) and len(llm.calls) == 3
    changed = tables[:1] + [tables[1].model_copy(update={"columns": tables[1].columns + [ColumnInfo(name="c", type="INT")]})]
    third = DescribeStats()
    describe_tables(llm, changed, store, stats=third)
    assert (third.calls, third.written, third.cached) == (1, 1, 1)
    assert llm.calls[-1].meta["tables"] == ["erp.tbl_1"]  # only the changed table is asked about again


def test_a_failed_call_loses_nothing_and_is_asked_again(store):
    tables = [t("t_x1", ["case_no", "cust_no"]), t("t_x2", ["emp_no", "gross"])]
    stats = DescribeStats()
    notes = describe_tables(describer(fail_on={"t_x1"}), tables, store, group=1, stats=stats)
    assert set(notes) == {"erp.t_x2"} and stats.failed == 1 and "TimeoutError" in stats.errors[0]
    ok = describer()
    assert set(describe_tables(ok, tables, store, group=1)) == {"erp.t_x1", "erp.t_x2"}
    assert [c.meta["tables"] for c in ok.calls] == [["erp.t_x1"]]


def test_parse_answer_matches_names_and_ignores_junk():
    g = [t("sls_quote", ["a"]), t("hr_emp", ["b"])]
    assert parse_answer('```json\n{"ERP.SLS_QUOTE": "Quotes.", "hr_emp": " Staff.  ", "other": "x"}\n```', g) == {
        "erp.sls_quote": "Quotes.", "erp.hr_emp": "Staff."}
    assert parse_answer("no json here", g) == {} and parse_answer('{"hr_emp": 3}', g) == {}


def test_descriptions_find_an_opaque_table(embedder, store):
    """Names and columns that say nothing: the description is what the search finds it by."""
    tables = [t("t_x1", ["c1", "c2", "c3"]), t("t_x2", ["c1", "c4"]), t("t_x3", ["c2", "c5"])]
    idx = SchemaIndex(open_index(load_settings()), embedder, "describe-opaque")
    try:
        idx.sync(tables)
        before = [h[0] for h in idx.search("customer complaints", 3)]
        project = Project(id="p", pack="ecommerce", warehouse=WarehouseConfig())
        stats = idx.sync_in_background(tables, None, run_notes(store, project, describer)).result()
        assert stats.embedded == 3  # each described table is embedded again, once
        after = [h[0] for h in idx.search("customer complaints", 3)]
        pay = [h[0] for h in idx.search("salaries", 3)]
        assert idx.sync(tables, notes=run_notes(store, project, describer)(tables)).embedded == 0  # cached
    finally:
        idx.index.drop(idx.collection)
    assert after[0] == "erp.t_x1" and pay[0] == "erp.t_x2", (before, after, pay)
    # the catalog's tables are untouched: descriptions live in the index only
    assert all(not x.description for x in tables)


def test_off_without_llm_or_when_the_project_says_so(store):
    p = Project(id="p", pack="ecommerce", warehouse=WarehouseConfig())
    assert not enabled(p, None) and enabled(p, describer())
    off = p.model_copy(update={"warehouse": WarehouseConfig(settings={"llm_descriptions": False})})
    assert not enabled(off, describer())
    assert run_notes(store, p, lambda: None)([t("a", ["b"])]) is None


def test_estimate_counts_only_uncached_tables(store):
    p = Project(id="p", pack="ecommerce", warehouse=WarehouseConfig())
    tables = [t(f"est_{i}", ["a", "b", "c"]) for i in range(30)]
    phase = estimate_phase(p, tables, store, "llm")
    assert phase.phase == "table descriptions" and phase.calls == 2 and phase.output_tokens > 0
    describe_tables(describer(), tables[:26], store)
    assert estimate_phase(p, tables, store, "llm").calls == 1
    assert estimate_phase(p, tables, store, "statistical") is None
    assert content_hash(tables[0]) != content_hash(tables[0].model_copy(update={"description": "x"}))


def test_bench_no_llm_indexes_only_the_notes_loaded(store):
    """bench/schema_describe.py --no-llm: the notes loaded from a shard file describe their tables, and the
    rest stay undescribed (no made-up text stands in for a missing description)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from schema_describe import silent_llm

    tables = [t(f"nollm_{i}", ["a", f"b{i}"]) for i in range(4)]
    store.put_table_notes({content_hash(tables[0]): "Loaded from a shard."}, model="notes-in")
    stats = DescribeStats()
    got = describe_tables(silent_llm(), tables, store, group=2, stats=stats)
    assert got == {tables[0].fqn: "Loaded from a shard."}
    assert (stats.cached, stats.written, stats.failed, stats.calls) == (1, 0, 3, 2)
