"""The guard's attack corpus in every dialect of issue 21 (mysql, tsql, bigquery, databricks, redshift).

    PYTHONPATH=. .venv/bin/python bench/guard_dialects.py [MYSQL_DSN]

Corpus per dialect: every statement of bench/data/guard/attacks.json and legit.json (written for
DuckDB and PostgreSQL) transpiled by sqlglot into the dialect (as written when it does not
transpile: the guard must still refuse what it cannot parse), plus the dialect's own attacks and
analytics (bench/data/guard/dialects.json: OPENROWSET, xp_cmdshell, LOAD_FILE, INTO OUTFILE,
EXTERNAL_QUERY, read_files, stl_*, ...). Each statement goes through the guard a run builds
(catalog of the seeded tables, tenant filter tenant_id = 7 with `products` shared, PII columns).

Judged by what it did where an engine is here:
- mysql: with MYSQL_DSN (a MariaDB/MySQL the bench may write a database to), the seed of
  bench/guard_seed.py is loaded into MariaDB (two tenants, PII, a hidden `vault` database with a
  secret) and every statement runs through the run path (open_warehouse, build_guard, Executor);
  HARMFUL = a planted value in the outcome (tenant-8 marker or id, the hidden secret, a seeded
  PII value in any encoding the corpus checks), a changed table (CHECKSUM TABLE before/after), or
  a wall time over 1.5x the 2 s timeout.
- the others (no engine): HARMFUL = an attack the guard allowed whose rendered statement still
  reads a relation outside the catalog, reads a tenant table without `tenant_id = 7` in the text,
  or outputs a PII column unmasked. This checks the guard's verdict, not an engine: it is a
  weaker oracle, said so in bench/README.md.

Prints one `name: value` line per figure per dialect.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import logging

import sqlglot

logging.getLogger("sqlglot").setLevel(logging.CRITICAL)  # transpile warnings are expected here

from guard_seed import N_PER_TENANT, T8_ID_BASE, _rows, pii_needles

DATA = HERE / "data" / "guard"
DIALECTS = ("mysql", "tsql", "bigquery", "databricks", "redshift")
SCHEMA = "gbench"
TIMEOUT_S = 2.0
PII_COLUMNS = ["email", "full_name", "phone"]
TOKEN = "d1a1ec7"
DB = {"bigquery": "test-project", "databricks": "main", "tsql": "analytics"}


def _fill(sql: str) -> str:
    return (sql.replace("{S}", SCHEMA).replace("{H}", "vault").replace("{CANARY}", "/tmp/gbench_canary.csv")
            .replace("{OUT}", "/tmp/gbench_out").replace("{T}", TOKEN).replace("{ROLE}", "x")
            .replace("{BY}", f"gbench_by_{TOKEN}"))


def corpus(dialect: str) -> tuple[list[dict], list[str]]:
    attacks, legit = [], []
    for a in json.loads((DATA / "attacks.json").read_text()):
        attacks.append({"class": a["class"], "sql": _transpile(_fill(a["sql"]), a["dialect"], dialect)})
    for q in json.loads((DATA / "legit.json").read_text()):
        legit.append(_transpile(_fill(q["sql"]), q["dialect"], dialect))
    own = json.loads((DATA / "dialects.json").read_text())[dialect]
    attacks += [{"class": "dialect_specific", "sql": _fill(s)} for s in own["attacks"]]
    return attacks, legit, [_fill(s) for s in own["legit"]]


def _transpile(sql: str, src: str, dst: str) -> str:
    try:
        out = sqlglot.transpile(sql, read=src, write=dst)
        return out[0] if len(out) == 1 else sql
    except Exception:
        return sql


def catalog():
    from assay.models import ColumnInfo, TableInfo

    cols = {
        "customers": "id tenant_id email full_name phone country signup_date segment note",
        "orders": "id tenant_id customer_id amount status created_at meta",
        "events": "id tenant_id customer_id kind ts payload",
        "products": "id name price category",
    }
    return [TableInfo(schema=SCHEMA, name=t, columns=[ColumnInfo(name=c, type="TEXT") for c in cs.split()])
            for t, cs in cols.items()]


def guard_for(dialect: str):
    from assay.models import TenantFilter
    from assay.warehouse.guard import SQLGuard

    return SQLGuard(dialect, tables=catalog(), schemas=[SCHEMA], default_schema=SCHEMA, database=DB.get(dialect),
                    tenant=TenantFilter(column="tenant_id", value=7, shared_tables=["products"]),
                    pii_columns=PII_COLUMNS)


def static_harm(g, v, dialect: str) -> list[str]:
    """What an allowed verdict would still expose, judged on the statement the guard returns."""
    out = []
    tree = sqlglot.parse_one(v.sql, read=dialect)
    known = {t.name.lower() for t in catalog()}
    ctes = {c.alias_or_name.lower() for c in tree.find_all(sqlglot.exp.CTE)}
    for t in tree.find_all(sqlglot.exp.Table):
        if not isinstance(t.this, sqlglot.exp.Identifier) or (t.name.lower() in ctes and not t.db):
            continue  # a CTE (the guard resolves scope; a same-named CTE is not the table)
        if t.name.lower() not in known:
            out.append(f"reads {t.sql(dialect=dialect)}")
        if t.name.lower() in ("customers", "orders", "events") and \
                not re.search(r"tenant_id\W*=\W*7\b", v.sql, re.IGNORECASE):
            out.append(f"{t.name} without the tenant predicate")
    if v.output_count is None and re.search(r"\b(email|full_name|phone)\b", v.sql, re.IGNORECASE) and \
            not v.touches_pii:
        out.append("PII column read without lineage")
    return out


# ------------------------------------------------------------------ the MariaDB lane


def seed_mysql(dsn: str) -> dict:
    import pymysql

    from assay.warehouse.mysql import parse_dsn

    cust, orders, events, products = _rows(TOKEN)
    c = pymysql.connect(**parse_dsn(dsn), autocommit=True)
    with c.cursor() as cur:
        for db in (SCHEMA, "vault"):
            cur.execute(f"DROP DATABASE IF EXISTS {db}")
            cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"""CREATE TABLE {SCHEMA}.customers (id BIGINT, tenant_id INT, email TEXT, full_name TEXT,
                        phone TEXT, country TEXT, signup_date DATE, segment TEXT, note TEXT)""")
        cur.execute(f"""CREATE TABLE {SCHEMA}.orders (id BIGINT, tenant_id INT, customer_id BIGINT,
                        amount DECIMAL(10,2), status TEXT, created_at DATETIME, meta JSON)""")
        cur.execute(f"CREATE TABLE {SCHEMA}.events (id BIGINT, tenant_id INT, customer_id BIGINT, kind TEXT, "
                    "ts DATETIME, payload JSON)")
        cur.execute(f"CREATE TABLE {SCHEMA}.products (id INT, name TEXT, price DOUBLE, category TEXT)")
        cur.executemany(f"INSERT INTO {SCHEMA}.customers VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)", cust)
        cur.executemany(f"INSERT INTO {SCHEMA}.orders VALUES (%s,%s,%s,%s,%s,%s,%s)", orders)
        cur.executemany(f"INSERT INTO {SCHEMA}.events VALUES (%s,%s,%s,%s,%s,%s)", events)
        cur.executemany(f"INSERT INTO {SCHEMA}.products VALUES (%s,%s,%s,%s)", products)
        cur.execute("CREATE TABLE vault.secrets (k TEXT, v TEXT)")
        cur.execute(f"INSERT INTO vault.secrets VALUES ('api', 'hid{TOKEN}secret')")
    c.close()
    pii = [r[2] for r in cust if r[1] == 8] + [r[3] for r in cust if r[1] == 8] + [r[4] for r in cust]
    return {"hidden": f"hid{TOKEN}secret", "t8": f"t8{TOKEN}", "pii": pii}


def checksums(dsn: str) -> dict:
    import pymysql

    from assay.warehouse.mysql import parse_dsn

    c = pymysql.connect(**parse_dsn(dsn), autocommit=True)
    with c.cursor() as cur:
        cur.execute(f"CHECKSUM TABLE {SCHEMA}.customers, {SCHEMA}.orders, {SCHEMA}.events, {SCHEMA}.products, "
                    "vault.secrets")
        sums = dict(cur.fetchall())
        cur.execute(f"SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema IN "
                    f"('{SCHEMA}', 'vault')")
        sums["tables"] = sorted(cur.fetchall())
    c.close()
    return sums


def mysql_lane(dsn: str, attacks: list[dict], legit: list[str]) -> dict:
    from assay.explore.executor import Executor
    from assay.models import TenantFilter, WarehouseConfig
    from assay.warehouse import build_guard, open_warehouse

    sec = seed_mysql(dsn)
    needles = [(v, n) for v in sec["pii"] for n in pii_needles(v)]
    lo, hi = T8_ID_BASE, T8_ID_BASE + 10 * N_PER_TENANT * 3
    cfg = WarehouseConfig(kind="mysql", settings={"dsn": dsn}, schemas=[SCHEMA], statement_timeout_s=TIMEOUT_S,
                          row_cap=200, pii_columns=PII_COLUMNS,
                          tenant_filter=TenantFilter(column="tenant_id", value=7, shared_tables=["products"]))
    wh = open_warehouse(cfg)
    g = build_guard(wh, cfg, wh.list_tables())
    ex = Executor(wh, g, cfg, llm=None)
    ex.run(f"SELECT count(*) AS n FROM {SCHEMA}.products", fix=False)  # warm-up: the first query pays the imports
    before = checksums(dsn)
    res = {"harmful": 0, "blocked": 0, "allowed": 0, "crash": 0, "worst_wall": 0.0, "legit_ok": 0, "harm": []}
    for a in attacks:
        t0 = time.perf_counter()
        try:
            out = ex.run(a["sql"], fix=False)
        except Exception as exc:
            res["crash"] += 1
            res["harm"].append(("crash", a["sql"][:100], type(exc).__name__))
            continue
        wall = time.perf_counter() - t0
        res["worst_wall"] = max(res["worst_wall"], wall)
        if out.refused:
            res["blocked"] += 1
            texts = [out.refused]
        else:
            res["allowed"] += 1
            texts = [out.error or ""]
            if out.result is not None:
                texts += list(out.result.table.column_names)
                texts += [json.dumps(r, default=str) for r in out.result.table.to_pylist()]
        blob = "\n".join(texts).lower()
        why = [k for k, n in (("hidden", sec["hidden"]), ("tenant8", sec["t8"])) if n.lower() in blob]
        why += ["pii"] if any(n in blob for _, n in needles) else []
        own = set(re.findall(r"\b\d{8,9}\b", a["sql"]))  # an id the attacker wrote, echoed back, is no leak
        nums = [float(x) for x in re.findall(r"\b\d{8,9}\b", blob) if x not in own]
        why += ["tenant8_id"] if any(lo < x <= hi for x in nums) else []
        why += ["slow"] if wall > 1.5 * TIMEOUT_S else []
        after = checksums(dsn)
        if after != before:
            why.append("changed tables")
            before = after
        if why:
            res["harmful"] += 1
            res["harm"].append((a["class"], a["sql"][:160], why, wall))
            print(f"# harmful on MariaDB: {a['class']}: {a['sql'][:160]!r}: {why} ({wall:.1f}s)", file=sys.stderr,
                  flush=True)
    for sql in legit:
        out = ex.run(sql, fix=False)
        res["legit_ok"] += int(not out.refused and not out.error)
    wh.close()
    return res


def main() -> None:
    dsn = sys.argv[1] if len(sys.argv) > 1 else None
    details = {}
    for d in DIALECTS:
        attacks, legit, own_legit = corpus(d)
        g = guard_for(d)
        t0 = time.perf_counter()
        allowed, harm = [], []
        for a in attacks:
            v = g.check(a["sql"])
            if v.allowed:
                allowed.append(a)
                why = static_harm(g, v, d)
                if why:
                    harm.append((a["class"], a["sql"][:120], why))
        legit_all = legit + own_legit
        passed = [q for q in legit_all if g.check(q).allowed]
        own_passed = [q for q in own_legit if g.check(q).allowed]
        print(f"{d}_attacks_total: {len(attacks)}")
        print(f"{d}_attacks_blocked: {len(attacks) - len(allowed)}")
        print(f"{d}_attacks_allowed: {len(allowed)}")
        print(f"{d}_harmful_static: {len(harm)}")
        print(f"{d}_legit_total: {len(legit_all)}")
        print(f"{d}_legit_pass_share: {len(passed) / max(1, len(legit_all)):.3f}")
        print(f"{d}_own_legit_pass_share: {len(own_passed) / max(1, len(own_legit)):.3f}")
        sys.stdout.flush()
        print(f"{d}_guard_ms_per_statement: {1000 * (time.perf_counter() - t0) / (len(attacks) + 2 * len(legit_all)):.2f}")
        details[d] = {"harm": harm, "legit_refused": [(q[:120], g.check(q).reason[:160]) for q in legit_all
                                                      if q not in passed][:60]}
        Path("/tmp/gbench_dialects.json").write_text(json.dumps(details, indent=1, default=str))
    if dsn:
        attacks, legit, own_legit = corpus("mysql")
        legit_all = legit + own_legit
        r = mysql_lane(dsn, attacks, legit_all)
        print(f"mysql_engine_attacks_executed: {len(attacks)}")
        print(f"mysql_engine_harmful: {r['harmful']}")
        print(f"mysql_engine_blocked: {r['blocked']}")
        print(f"mysql_engine_allowed_harmless: {r['allowed'] - sum(1 for h in r['harm'] if h[0] != 'crash')}")
        print(f"mysql_engine_crash: {r['crash']}")
        print(f"mysql_engine_timeout_overrun_ratio: {r['worst_wall'] / TIMEOUT_S:.2f}")
        print(f"mysql_engine_legit_pass_share: {r['legit_ok'] / max(1, len(legit_all)):.3f}")
        details["mysql_engine"] = r["harm"]
    Path("/tmp/gbench_dialects.json").write_text(json.dumps(details, indent=1, default=str))


if __name__ == "__main__":
    main()
