"""BigQuery schema discovery: INFORMATION_SCHEMA (the default) against the tables API, by requests and time.

    PYTHONPATH=. .venv/bin/python bench/bigquery_discovery.py [--tables 400] [--columns 12] [--rtt-ms 0]

Both paths run the real google-cloud-bigquery client against the loopback server of the tests
(tests/services/bigquery_server.py), which answers from a DuckDB file of ``--tables`` tables of
``--columns`` columns in one dataset. ``--rtt-ms`` delays every HTTP answer (a stand-in for the
round trip to Google; 0 measures client and server work only). Prints one JSON line of figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=400)
    ap.add_argument("--columns", type=int, default=12)
    ap.add_argument("--rtt-ms", type=float, default=0.0)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()

    import duckdb

    from assay.models import WarehouseConfig
    from assay.warehouse import open_warehouse
    from tests.services.bigquery_server import FakeBigQuery

    path = Path(tempfile.mkdtemp(prefix="bq-bench-")) / "bq.duckdb"
    c = duckdb.connect(str(path))
    c.execute("CREATE SCHEMA ds")
    cols = ", ".join(f"i + {k} AS c{k}" for k in range(a.columns))
    for n in range(a.tables):
        c.execute(f"CREATE TABLE ds.t{n:05d} AS SELECT {cols} FROM range(10) t(i)")
    c.close()

    out: dict = {"tables": a.tables, "columns": a.columns, "rtt_ms": a.rtt_ms}
    with FakeBigQuery(str(path), project="bench", tables_page=1000, page_rows=10_000) as srv:
        if a.rtt_ms:
            route = srv.route

            def slow(*args, **kw):
                time.sleep(a.rtt_ms / 1000)
                return route(*args, **kw)

            srv.route = slow
        for mode in ("information_schema", "api"):
            w = open_warehouse(WarehouseConfig(kind="bigquery", schemas=["ds"], settings={
                "project": "bench", "api_endpoint": srv.url, "discovery": mode, "connect_timeout": 30}))
            times, requests, got = [], 0, None
            for _ in range(a.rounds):
                before = len(srv.requests)
                t0 = time.perf_counter()
                got = w.list_tables()
                times.append(time.perf_counter() - t0)
                requests = len(srv.requests) - before
            w.close()
            assert len(got) == a.tables and all(len(t.columns) == a.columns for t in got)
            out[f"{mode}_requests"] = requests
            out[f"{mode}_s"] = round(sorted(times)[len(times) // 2], 3)
    out["api_vs_information_schema_time_ratio"] = round(out["api_s"] / out["information_schema_s"], 2)
    out["load_1m"] = round(os.getloadavg()[0], 1)
    out["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                   cwd=Path(__file__).parent).stdout.strip()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
