"""A glossary for table descriptions: ERP abbreviations and common non-English terms.

Warehouses name things `sls_ord_ln`, `musteri_kodu`, `auftrag_pos`; people search for "sales
order lines", "customer", "orders". The embedded text of each table carries the expansions, so a
query in plain English finds abbreviated and Turkish or German names. Projects add their own
terms (``warehouse.settings.glossary``).
"""

from __future__ import annotations

import re

GLOSSARY: dict[str, str] = {
    # abbreviations
    "acct": "account", "addr": "address", "amt": "amount", "ap": "accounts payable", "ar": "accounts receivable",
    "bal": "balance", "bom": "bill of materials", "cd": "code", "cfg": "configuration", "ctr": "center",
    "cur": "currency", "curr": "currency", "cust": "customer", "disc": "discount", "dt": "date",
    "emp": "employee", "frt": "freight", "gl": "general ledger", "hdr": "header", "inv": "inventory", "ap_inv": "accounts payable supplier invoice",
    "ar_inv": "accounts receivable customer invoice",
    "jrnl": "journal", "lcy": "local currency", "ln": "line", "loc": "location", "lkp": "lookup",
    "lst": "list", "mfg": "manufacturing", "mvmt": "movement", "no": "number", "op": "operation",
    "ord": "order", "oppty": "opportunity", "pmt": "payment", "po": "purchase order", "pos": "position",
    "pur": "purchasing", "qty": "quantity", "rcpt": "receipt", "req": "request", "rfq": "request for quotation",
    "shp": "ship shipping", "shpmt": "shipment", "sls": "sales", "stk": "stock", "stmt": "statement",
    "ts": "timestamp", "uom": "unit of measure", "upd": "updated", "vend": "vendor supplier",
    "whse": "warehouse", "wo": "work order", "hr": "human resources people", "crm": "customer relations",
    "fin": "finance accounting", "log": "logistics", "lkp_": "lookup", "param": "parameter", "kdnr": "customer number",
    # Turkish
    "musteri": "customer", "siparis": "order", "fatura": "invoice", "baslik": "header", "satir": "line",
    "stok": "stock", "kart": "card master", "hareket": "movement transaction", "tarih": "date",
    "tutar": "amount", "miktar": "quantity", "sube": "branch", "kodu": "code", "kod": "code",
    "durum": "status", "kasa": "cash", "cari": "current account", "hesap": "account", "tedarikci": "supplier vendor",
    "satinalma": "purchasing", "personel": "personnel employee", "bordro": "payroll", "uretim": "production",
    "emri": "order", "sevkiyat": "shipment", "kampanya": "campaign", "tanim": "definition",
    # German
    "kunde": "customer", "auftrag": "order", "lieferant": "supplier vendor", "lager": "warehouse stock",
    "artikel": "item article product", "betrag": "amount", "menge": "quantity", "datum": "date",
    "mitarbeiter": "employee", "fertigung": "manufacturing production", "versand": "shipping shipment",
    "schluessel": "key",
}
_WORD = re.compile(r"[a-z]+")


def expand(name: str, extra: dict[str, str] | None = None) -> str:
    """The glossary's reading of an identifier: 'sls_ord_ln' -> 'sales order line'."""
    g = {**GLOSSARY, **(extra or {})}
    words = _WORD.findall(name.lower())
    out = []
    i = 0
    while i < len(words):
        pair = f"{words[i]}_{words[i + 1]}" if i + 1 < len(words) else None
        if pair in g:  # two-word terms first: ap_inv is an invoice, inv alone is inventory
            out.append(g[pair])
            i += 2
            continue
        if words[i] in g:
            out.append(g[words[i]])
        i += 1
    return " ".join(dict.fromkeys(out))
