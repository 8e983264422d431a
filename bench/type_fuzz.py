"""Every column type we can create on DuckDB and PostgreSQL, through the run path: adapter ->
guard -> executor -> explorer tool result -> digest -> stored step (JSON) -> pandas frame.

Prints per engine: <engine>_types_total, <engine>_run_failures (an exception out of the path:
goal 0), <engine>_step_errors (the query came back as an error instead of values: goal 0).
The corpus is tests/data/types/<engine>.json. PostgreSQL on 127.0.0.1:5432 (ASSAY_TEST_PG_DSN).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "data" / "types"
PG_DSN = os.environ.get("ASSAY_TEST_PG_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=test")


def corpus(engine: str) -> list[dict]:
    return json.loads((CORPUS / f"{engine}.json").read_text())


def create_duckdb(path: Path) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    for k, t in enumerate(corpus("duckdb")):
        if t.get("setup"):
            con.execute(t["setup"])
        con.execute(f'CREATE TABLE fz{k} (c {t["type"]})')
        for v in t["values"] + ["NULL"]:
            con.execute(f"INSERT INTO fz{k} VALUES ({v})")
    con.close()


def create_postgres(schema: str) -> None:
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
        for k, t in enumerate(corpus("postgres")):
            if t.get("setup"):
                c.execute(t["setup"].replace("{schema}", schema))
            typ = t["type"] if not t.get("setup") else f"{schema}.{t['type']}"
            c.execute(f"CREATE TABLE {schema}.fz{k} (c {typ})")
            for v in t["values"] + ["NULL"]:
                c.execute(f"INSERT INTO {schema}.fz{k} VALUES ({v})")


def drop_postgres(schema: str) -> None:
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True) as c:
        c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run_type(wh, cfg, tables, schema: str, k: int) -> dict:
    """One type through the explorer (scripted LLM): its step, the model's view, the digest."""
    from assay.digest import build_compact_result, to_frame
    from assay.explore.executor import Executor
    from assay.explore.loop import Explorer
    from assay.llm.scripted import ReplayLLM
    from assay.warehouse import build_guard

    sql = f"SELECT c FROM {schema}.fz{k}"
    action = json.dumps({"thinking": "t", "purpose": "type", "query": sql})
    llm = ReplayLLM({"explore": [action, '{"done": true}']})
    saved = []
    ex = Explorer(llm=llm, executor=Executor(wh, build_guard(wh, cfg, tables), cfg, llm), provider=None,
                  run_id="fuzz", system_prompt="You explore.", max_steps=3, sink=saved.append, tables=tables)
    out = ex.run()
    step = out.steps[0]
    stored = json.loads("".join(s.model_dump_json() for s in saved[:1]))
    view = "".join(m.content for c in llm.calls for m in c.messages)
    frame_rows = None
    if step.ok:
        res = Executor(wh, build_guard(wh, cfg, tables), cfg).run(sql, fix=False)
        frame = to_frame(res.result.table)
        build_compact_result(frame)  # the statistical analyst's path: a DataFrame digested
        frame_rows = len(frame)
    return {"ok": step.ok, "error": step.error or step.refused, "digest": stored.get("digest"), "view": view,
            "rows": frame_rows}


def fuzz(engine: str) -> dict:
    from assay.models import WarehouseConfig
    from assay.warehouse import open_warehouse

    types = corpus(engine)
    tmp = Path(tempfile.mkdtemp(prefix="typefuzz-"))
    schema = f"tf_{uuid.uuid4().hex[:8]}"
    if engine == "duckdb":
        create_duckdb(tmp / "types.duckdb")
        cfg = WarehouseConfig(kind="duckdb", settings={"path": str(tmp / "types.duckdb")})
        schema_ref = "main"
    else:
        create_postgres(schema)
        cfg = WarehouseConfig(kind="postgres", settings={"dsn": PG_DSN}, schemas=[schema])
        schema_ref = schema
    failures, errors, results = [], [], {}
    try:
        wh = open_warehouse(cfg)
        tables = wh.list_tables()
        for k, t in enumerate(types):
            try:
                r = run_type(wh, cfg, tables, schema_ref, k)
                results[t["type"]] = r
                if not r["ok"]:
                    errors.append(f"{t['type']}: {r['error']}")
            except Exception as exc:
                failures.append(f"{t['type']}: {type(exc).__name__}: {exc}")
        wh.close()
    finally:
        if engine == "postgres":
            drop_postgres(schema)
    return {"types_total": len(types), "run_failures": failures, "step_errors": errors, "results": results}


def main() -> None:
    for engine in ("duckdb", "postgres"):
        r = fuzz(engine)
        print(f"{engine}_types_total: {r['types_total']}")
        print(f"{engine}_run_failures: {len(r['run_failures'])}")
        print(f"{engine}_step_errors: {len(r['step_errors'])}")
        for line in r["run_failures"] + r["step_errors"]:
            print("#", engine, line[:200], file=sys.stderr)


if __name__ == "__main__":
    main()
