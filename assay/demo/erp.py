"""A synthetic ERP-like warehouse of thousands of tables (for scale benchmarks).

Modules with abbreviated and non-English names (Turkish, German), archive copies
(`_bkp`, `_tmp`, date-suffixed), many small configuration tables, a few large fact
tables, and one table of 1,000,000 rows. Deterministic.
"""

from __future__ import annotations

import random
from pathlib import Path

import duckdb

MODULES = {
    "fin": ("finance", ["gl_jrnl", "gl_acct", "ap_inv", "ar_inv", "pmt", "bank_stmt", "cost_ctr", "tax_code",
                        "fatura_baslik", "fatura_satir", "kasa_hareket", "cari_hesap"]),
    "sls": ("sales", ["ord_hdr", "ord_ln", "quote", "price_lst", "disc", "cust", "cust_addr", "shp_to",
                      "musteri", "siparis", "kunde", "auftrag_pos"]),
    "pur": ("purchasing", ["po_hdr", "po_ln", "vend", "rfq", "rcpt", "lieferant", "tedarikci", "satinalma"]),
    "inv": ("inventory", ["stk_mvmt", "stk_bal", "item", "item_uom", "whse", "bin_loc", "stok_hareket",
                          "stok_kart", "lager", "artikel"]),
    "hr": ("people", ["emp", "emp_pos", "payroll", "leave_req", "personel", "bordro", "mitarbeiter"]),
    "mfg": ("manufacturing", ["wo_hdr", "wo_op", "bom", "routing", "uretim_emri", "fertigung"]),
    "crm": ("customer relations", ["lead", "oppty", "case", "activity", "kampanya", "ticket"]),
    "log": ("logistics", ["shpmt", "carrier", "frt_rate", "route", "sevkiyat", "versand"]),
}
COLS = {
    "id": "BIGINT", "cust_no": "VARCHAR", "musteri_kodu": "VARCHAR", "kdnr": "VARCHAR", "ord_dt": "DATE",
    "tarih": "DATE", "datum": "DATE", "amt_lcy": "DOUBLE", "tutar": "DOUBLE", "betrag": "DOUBLE",
    "qty": "DOUBLE", "miktar": "DOUBLE", "menge": "DOUBLE", "sube_kodu": "VARCHAR", "whse_cd": "VARCHAR",
    "item_no": "VARCHAR", "stok_kodu": "VARCHAR", "status_cd": "VARCHAR", "durum": "VARCHAR", "curr_cd": "VARCHAR",
    "created_by": "VARCHAR", "upd_ts": "TIMESTAMP", "region_cd": "VARCHAR", "vend_no": "VARCHAR", "emp_no": "VARCHAR",
}


def _expr(col: str, typ: str, i: str) -> str:
    if typ == "BIGINT":
        return f"{i} AS {col}"
    if typ == "DOUBLE":
        return f"round(((({i} * 7919) % 100000) / 100.0), 2) AS {col}"
    if typ == "DATE":
        return f"DATE '2024-01-01' + CAST({i} % 700 AS INTEGER) AS {col}"
    if typ == "TIMESTAMP":
        return f"TIMESTAMP '2024-01-01' + INTERVAL ({i} % 20000) MINUTE AS {col}"
    return f"'{col[:3].upper()}' || CAST({i} % 97 AS VARCHAR) AS {col}"


# columns a table of each module plausibly has (real ERPs are coherent per module)
POOLS = {
    "fin": ["amt_lcy", "tutar", "betrag", "curr_cd", "tarih", "datum", "status_cd", "durum", "sube_kodu", "upd_ts",
            "created_by", "cust_no", "vend_no"],
    "sls": ["cust_no", "musteri_kodu", "kdnr", "ord_dt", "tarih", "amt_lcy", "tutar", "qty", "miktar", "item_no",
            "status_cd", "region_cd", "curr_cd", "upd_ts"],
    "pur": ["vend_no", "ord_dt", "tarih", "amt_lcy", "betrag", "qty", "menge", "item_no", "status_cd", "curr_cd",
            "whse_cd", "upd_ts"],
    "inv": ["item_no", "stok_kodu", "whse_cd", "qty", "miktar", "menge", "tarih", "datum", "status_cd", "upd_ts",
            "sube_kodu"],
    "hr": ["emp_no", "amt_lcy", "tarih", "datum", "sube_kodu", "status_cd", "durum", "region_cd", "created_by"],
    "mfg": ["item_no", "qty", "menge", "whse_cd", "tarih", "status_cd", "durum", "upd_ts", "emp_no"],
    "crm": ["cust_no", "musteri_kodu", "emp_no", "tarih", "status_cd", "durum", "region_cd", "amt_lcy", "upd_ts"],
    "log": ["cust_no", "whse_cd", "tarih", "datum", "amt_lcy", "status_cd", "region_cd", "qty", "upd_ts"],
}


def table_plan(n_tables: int = 2000, seed: int = 5) -> list[tuple[str, list[str], int]]:
    rng = random.Random(seed)
    plan: list[tuple[str, list[str], int]] = []
    core = [(m, t) for m, (_, ts) in MODULES.items() for t in ts]
    for m, t in core:
        pool = POOLS[m]
        cols = ["id"] + rng.sample(pool, rng.randint(4, min(9, len(pool))))
        rows = rng.choice([200, 1_000, 5_000, 20_000, 50_000])
        plan.append((f"{m}_{t}", cols, rows))
    plan[[n for n, _, _ in plan].index("sls_ord_ln")] = ("sls_ord_ln", ["id", "cust_no", "item_no", "ord_dt",
                                                                          "qty", "amt_lcy", "status_cd", "region_cd",
                                                                          "curr_cd", "upd_ts"], 1_000_000)
    i = 0
    names = {n for n, _, _ in plan}
    while len(plan) < n_tables:
        base, cols, rows = plan[i % len(core)]
        kind = rng.random()
        if kind < 0.35:
            name = f"{base}_{rng.choice(['bkp', 'tmp', 'old', 'stg'])}{rng.randint(1, 99)}"
        elif kind < 0.55:
            name = f"{base}_{rng.choice(['2021', '2022', '2023'])}{rng.randint(1, 12):02d}"
        else:
            m = base.split("_")[0]
            name = f"{m}_cfg_{rng.choice(['param', 'lkp', 'map', 'tanim', 'kod', 'schluessel'])}_{len(plan)}"
            cols = ["id"] + rng.sample(POOLS[m], rng.randint(2, 4))
        i += 1
        if name in names:
            continue
        names.add(name)
        plan.append((name, cols, rng.choice([0, 5, 20, 100, 500])))
    return plan[:n_tables]


def generate_erp(path: Path, n_tables: int = 2000) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    con = duckdb.connect(str(path))
    try:
        for name, cols, rows in table_plan(n_tables):
            select = ", ".join(_expr(c, COLS[c], "i") for c in cols)
            con.execute(f"CREATE TABLE {name} AS SELECT {select} FROM range({rows}) t(i)")
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path
