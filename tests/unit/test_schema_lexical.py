"""The lexical half of the schema search (BM25 over table words, bm25s)."""

from __future__ import annotations

from assay.models import ColumnInfo, TableInfo
from assay.schema.lexical import Lexical, fold, table_words, words


def t(name, cols, description=""):
    return TableInfo(schema="erp", name=name, row_count=10, description=description,
                     columns=[ColumnInfo(name=c, type="VARCHAR") for c in cols])


TABLES = [t("fin_ap_inv", ["vend_no", "amt_lcy"]), t("fin_ar_inv", ["cust_no", "amt_lcy"]),
          t("fin_gl_jrnl", ["acct_no", "amt_lcy"]), t("inv_lager", ["artikel", "menge"]),
          t("sls_musteri", ["musteri_kodu", "tarih"]), t("pur_lieferant", ["kdnr", "betrag"]),
          t("crm_case", ["cust_no", "status_cd"], description="complaints raised by customers")]


def lex():
    return Lexical({x.fqn: table_words(x) for x in TABLES})


def top(q):
    s = lex().scores(q)
    return sorted(s, key=lambda k: -s[k])


def test_words_split_identifiers_and_fold_accents():
    assert words("sls_ordLn") == ["sls", "ord", "ln"]
    assert fold("Müşteri Şikayetleri İzin Straße") == "musteri sikayetleri izin strasse"
    w = table_words(TABLES[0])
    assert {"fin", "ap", "inv", "accounts", "payable", "supplier", "invoice", "vend"} <= set(w)


def test_abbreviations_and_exact_names_win():
    assert top("ap inv")[0] == "erp.fin_ap_inv"
    assert top("fin_gl_jrnl")[0] == "erp.fin_gl_jrnl"
    assert top("kdnr")[0] == "erp.pur_lieferant"
    assert top("accounts receivable")[0] == "erp.fin_ar_inv"


def test_inflected_and_compound_query_words_match_the_stem():
    assert top("Lieferanten")[0] == "erp.pur_lieferant"      # plural
    assert top("Lagerbewegungen")[0] == "erp.inv_lager"       # compound
    assert top("müşteriler")[0] == "erp.sls_musteri"          # accents and a suffix
    assert top("invoices")[:2] and set(top("invoices")[:2]) == {"erp.fin_ap_inv", "erp.fin_ar_inv"}
    assert top("complaint")[0] == "erp.crm_case"              # the description's words count


def test_no_shared_word_no_score():
    assert lex().scores("weather forecast") == {}
    assert Lexical({}).scores("anything") == {}


def test_building_the_index_prints_no_library_debug_lines(caplog):
    """bm25s turns its own logger to DEBUG; under a root handler (the eval command had one) each build printed
    "DEBUG:bm25s:Building index from tokens" to the person's terminal."""
    import logging

    from assay.schema.lexical import Lexical

    with caplog.at_level(logging.NOTSET):
        Lexical({"orders": ["order", "customer"], "events": ["event", "session"]})
    assert not [r for r in caplog.records if r.name.startswith("bm25s")]
