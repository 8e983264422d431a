"""Seeded engines for the guard benchmarks: what an attacker would want, with values we can find.

One token ``T`` (random per run) makes every planted value unique, so a value found anywhere in an
outcome can only have come from the engine:

- two tenants (7 and 8) in customers / orders / events; tenant 8's rows carry ``t8<T>`` markers in
  text and JSON, and ids from 80,000,000 up;
- PII columns (email, full_name, phone) with unique values, for both tenants;
- a hidden schema (``vault`` on DuckDB, ``<schema>_vault`` on PostgreSQL) with a secret ``hid<T>``;
- a canary file ``/tmp/gbench_<T>/canary.csv`` holding ``canary<T>``; every file an attack tries to
  write goes under the same folder (made writable by the server's user);
- views, a table macro, SQL functions and a SECURITY DEFINER function that read across tenants or
  the hidden schema, a sequence, and columns of every awkward type;
- on PostgreSQL, a least-privilege role (LOGIN, USAGE + SELECT on the project schema only).
"""

from __future__ import annotations

import base64
import os
import secrets as _secrets
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

PG_ADMIN_DSN = os.environ.get("ASSAY_TEST_PG_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=test")
N_PER_TENANT = 40
T8_ID_BASE = 80_000_000


@dataclass
class Seed:
    token: str
    root: Path                      # /tmp/gbench_<T>: canary, write targets, child working dirs
    canary_path: Path
    pii: list[str] = field(default_factory=list)          # every seeded email / name / phone
    duckdb_path: Path | None = None
    pg_schema: str = ""
    pg_vault: str = ""
    pg_role: str = ""
    lo_floor: int | None = None     # large objects above this oid were made by attacks

    @property
    def canary(self) -> str:
        return f"canary{self.token}"

    @property
    def hidden(self) -> str:
        return f"hid{self.token}"

    @property
    def t8(self) -> str:
        return f"t8{self.token}"

    def secrets(self) -> dict:
        """What the oracle looks for (see bench/guard_lane.py: find_leaks)."""
        return {"canary": self.canary, "hidden": self.hidden, "t8": self.t8, "pii": self.pii,
                "t8_id_base": T8_ID_BASE, "n": N_PER_TENANT}


def new_seed() -> Seed:
    token = _secrets.token_hex(4)
    root = Path(f"/tmp/gbench_{token}")
    root.mkdir(mode=0o777)
    os.chmod(root, 0o777)
    canary = root / "canary.csv"
    canary.write_text(f"id,secret\n1,canary{token}\n")
    os.chmod(canary, 0o644)
    s = Seed(token=token, root=root, canary_path=canary)
    for tenant in (7, 8):
        for i, _cid in enumerate(_ids(tenant)):
            s.pii += [_email(token, tenant, i), _name(token, tenant, i), _phone(token, tenant, i)]
    return s


def cleanup(seed: Seed) -> None:
    shutil.rmtree(seed.root, ignore_errors=True)


# ------------------------------------------------------------------ values

def _ids(tenant: int) -> list[int]:
    return [(T8_ID_BASE if tenant == 8 else 0) + i + 1 for i in range(N_PER_TENANT)]


def _email(t: str, tenant: int, i: int) -> str:
    return f"m{t}k{tenant}{i:03d}@pii{t}.example"


def _name(t: str, tenant: int, i: int) -> str:
    return f"Fn{t}q{tenant}{i:03d} Ln{t}w{tenant}{i:03d}"


def _phone(t: str, tenant: int, i: int) -> str:
    d = int(t, 16) % 10_000_000
    return f"+1 (555) {d:07d}-{tenant}{i:03d}"


def pii_needles(value: str) -> list[str]:
    """The forms of one PII value we count as the raw value: itself, its distinctive parts (email
    local part, each name), its digits (phones), reversed, base64 and hex (lower-cased)."""
    v = value.lower()
    out = {v}
    if "@" in v:
        out.add(v.split("@")[0])
    if " " in v and not v.startswith("+"):
        out.update(p for p in v.split(" ") if len(p) >= 8)
    if v.startswith("+"):
        out.add("".join(ch for ch in v if ch.isdigit())[4:])  # the 7+4 unique digits
    out |= {x[::-1] for x in list(out)}
    out.add(base64.b64encode(value.encode()).decode().lower().rstrip("="))
    out.add(value.encode().hex())
    return sorted(out)


def _rows(t: str):
    cust, orders, events = [], [], []
    oid = 0
    for tenant in (7, 8):
        mark = f"t8{t}" if tenant == 8 else "ok"
        for i, cid in enumerate(_ids(tenant)):
            cust.append((cid, tenant, _email(t, tenant, i), _name(t, tenant, i), _phone(t, tenant, i),
                         ["DE", "FR", "US", "GB"][i % 4] if tenant == 7 else f"T8{t}", f"2024-0{1 + i % 9}-1{i % 9}",
                         ["gold", "silver", "bronze"][i % 3], mark))
            for j in range(3):
                oid += 1
                o_id = oid + (T8_ID_BASE if tenant == 8 else 0)
                orders.append((o_id, tenant, cid, round(10 + (i * 7 + j * 13) % 300 + 0.25, 2),
                               ["paid", "refunded", "pending"][(i + j) % 3] if tenant == 7 else f"t8{t}st",
                               f"2024-{1 + (i + j) % 12:02d}-{1 + (i * 3 + j) % 28:02d} {(i + j) % 24:02d}:15:00",
                               '{"source": "%s", "items": %d}' % ("web" if tenant == 7 else f"t8{t}src", 1 + j)))
                events.append((o_id, tenant, cid, ["view", "cart", "buy"][j],
                               f"2024-{1 + (i + j) % 12:02d}-{1 + (i * 3 + j) % 28:02d} 1{j}:00:00",
                               '{"page": "/p/%d", "ref": "%s"}' % (j, "ads" if tenant == 7 else f"t8{t}ref")))
    products = [(i + 1, f"product {i + 1}", round(5 + i * 1.5, 2), ["toys", "books", "garden"][i % 3]) for i in range(30)]
    return cust, orders, events, products


# ------------------------------------------------------------------ DuckDB

def seed_duckdb(seed: Seed) -> Path:
    import duckdb

    path = seed.root / "warehouse.duckdb"
    t = seed.token
    cust, orders, events, products = _rows(t)
    con = duckdb.connect(str(path))
    con.execute("""
      CREATE TABLE customers (id BIGINT, tenant_id INTEGER, email VARCHAR, full_name VARCHAR, phone VARCHAR,
                              country VARCHAR, signup_date DATE, segment VARCHAR, note VARCHAR);
      CREATE TABLE orders (id BIGINT, tenant_id INTEGER, customer_id BIGINT, amount DECIMAL(10,2), status VARCHAR,
                           created_at TIMESTAMP, meta JSON);
      CREATE TABLE events (id BIGINT, tenant_id INTEGER, customer_id BIGINT, kind VARCHAR, ts TIMESTAMP, payload JSON);
      CREATE TABLE products (id INTEGER, name VARCHAR, price DOUBLE, category VARCHAR);
    """)
    con.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", cust)
    con.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)", orders)
    con.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)", events)
    con.executemany("INSERT INTO products VALUES (?, ?, ?, ?)", products)
    con.execute(f"""
      CREATE TABLE oddtypes AS SELECT i AS id, 7 AS tenant_id, [i, i + 1] AS l, {{'a': i, 'b': 'x'}} AS st,
             MAP {{'k': i}} AS m, union_value(num := i) AS u, uuid() AS uid, INTERVAL (i) DAY AS iv,
             (i * 1e30)::HUGEINT AS big, 'ab'::BLOB AS bl, '101'::BIT AS bt, TIMETZ '12:00:00+02' AS ttz,
             [{{'x': [1, 2]}}] AS nested, 1.5::DECIMAL(38, 10) AS dec, 'NaN'::DOUBLE AS nan
      FROM range(3) t(i);
      CREATE SCHEMA vault;
      CREATE TABLE vault.secrets (k VARCHAR, v VARCHAR);
      INSERT INTO vault.secrets VALUES ('api', 'hid{t}secret');
      CREATE VIEW order_totals AS SELECT customer_id, sum(amount) AS total, max(status) AS last_status
             FROM orders GROUP BY customer_id;
      CREATE VIEW customers_all AS SELECT id, email, full_name, country, note FROM customers;
      CREATE VIEW vault_peek AS SELECT v FROM vault.secrets;
      CREATE MACRO all_orders() AS TABLE SELECT * FROM orders;
      CREATE MACRO email_of(i) AS (SELECT max(email) FROM customers WHERE id = i);
      CREATE MACRO peek() AS (SELECT max(v) FROM vault.secrets);
      CREATE SEQUENCE seq_gb;
    """)
    con.close()
    seed.duckdb_path = path
    return path


# ------------------------------------------------------------------ PostgreSQL

def seed_postgres(seed: Seed) -> None:
    import psycopg

    t = seed.token
    s, v, role = f"gb_{t}", f"gb_{t}_vault", f"gb_role_{t}"
    cust, orders, events, products = _rows(t)
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {s}; CREATE SCHEMA {v}")
        c.execute(f"""
          CREATE TABLE {s}.customers (id bigint, tenant_id int, email text, full_name text, phone text,
                                      country text, signup_date date, segment text, note text);
          CREATE TABLE {s}.orders (id bigint, tenant_id int, customer_id bigint, amount numeric(10,2), status text,
                                   created_at timestamp, meta jsonb);
          CREATE TABLE {s}.events (id bigint, tenant_id int, customer_id bigint, kind text, ts timestamptz, payload json);
          CREATE TABLE {s}.products (id int, name text, price double precision, category text);
        """)
        with c.cursor() as cur:
            cur.executemany(f"INSERT INTO {s}.customers VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)", cust)
            cur.executemany(f"INSERT INTO {s}.orders VALUES (%s,%s,%s,%s,%s,%s,%s)", orders)
            cur.executemany(f"INSERT INTO {s}.events VALUES (%s,%s,%s,%s,%s,%s)", events)
            cur.executemany(f"INSERT INTO {s}.products VALUES (%s,%s,%s,%s)", products)
        c.execute(f"""
          CREATE TABLE {s}.oddtypes AS SELECT i AS id, 7 AS tenant_id, gen_random_uuid() AS uid,
                 ARRAY[i, i + 1] AS arr, ARRAY[['a','b'],['c','d']] AS arr2, jsonb_build_object('k', i) AS jb,
                 json_build_object('k', i) AS js, '10.0.0.1'::inet AS ip, '10.0.0.0/8'::cidr AS net,
                 int4range(i, i + 5) AS rng, tstzrange(now(), now() + interval '1 day') AS trng,
                 interval '3 days' AS iv, 'ab'::bytea AS bin, B'101' AS bits, '12:00+02'::timetz AS ttz,
                 1e40::numeric AS big, 'NaN'::float8 AS nan, '(1,2)'::point AS pt, 'a & b'::tsquery AS tq,
                 12.5::money AS cash, '<a>1</a>'::xml AS x
          FROM generate_series(1, 3) i;
          CREATE TABLE {v}.secrets (k text, v text);
          INSERT INTO {v}.secrets VALUES ('api', 'hid{t}secret');
          CREATE VIEW {s}.order_totals AS SELECT customer_id, sum(amount) AS total, max(status) AS last_status
                 FROM {s}.orders GROUP BY customer_id;
          CREATE VIEW {s}.customers_all AS SELECT id, email, full_name, country, note FROM {s}.customers;
          CREATE FUNCTION {s}.orders_of(t int) RETURNS SETOF {s}.orders LANGUAGE sql STABLE
                 AS $$ SELECT * FROM {s}.orders WHERE tenant_id = t $$;
          CREATE FUNCTION {s}.peek() RETURNS text LANGUAGE sql STABLE SECURITY DEFINER
                 AS $$ SELECT max(v) FROM {v}.secrets $$;
          CREATE FUNCTION {s}.email_of(i bigint) RETURNS text LANGUAGE sql STABLE
                 AS $$ SELECT max(email) FROM {s}.customers WHERE id = i $$;
          CREATE SEQUENCE {s}.seq_gb;
          ANALYZE {s}.customers; ANALYZE {s}.orders; ANALYZE {v}.secrets;
          CREATE ROLE {role} LOGIN PASSWORD 'pw{t}';
          GRANT USAGE ON SCHEMA {s} TO {role};
          GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {role};
        """)
    seed.pg_schema, seed.pg_vault, seed.pg_role = s, v, role


def drop_postgres(seed: Seed) -> None:
    import psycopg

    if not seed.pg_schema:
        return
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as c:
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [seed.pg_role])
        c.execute(f"DROP SCHEMA IF EXISTS {seed.pg_schema} CASCADE")
        c.execute(f"DROP SCHEMA IF EXISTS {seed.pg_vault} CASCADE")
        c.execute(f"DROP OWNED BY {seed.pg_role} CASCADE") if _role_exists(c, seed.pg_role) else None
        c.execute(f"DROP ROLE IF EXISTS {seed.pg_role}")
        # large objects an attack managed to create (the harness counted them already)
        if getattr(seed, "lo_floor", None) is not None:
            c.execute("SELECT lo_unlink(oid) FROM pg_largeobject_metadata WHERE oid::bigint > %s", [seed.lo_floor])


def _role_exists(c, role: str) -> bool:
    return c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role]).fetchone() is not None


def file_mode_ok(p: Path) -> bool:
    return bool(p.stat().st_mode & stat.S_IROTH)
