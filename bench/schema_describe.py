"""LLM table descriptions for the schema search, with a real model (issue 19).

Takes a subset of the synthetic ERP warehouse (assay/demo/erp.py): its live tables (every query
target of bench/data) and as many of its copies and configuration tables as fill ``--tables``.
Indexes it without descriptions, runs the description pass (one call per ``--group`` tables, through
the project's LLM protocol, so ANTHROPIC_BASE_URL / OPENAI_BASE_URL are honoured), indexes it again
with them, and prints recall@10 on every query set, per language, with and without descriptions;
then re-runs the pass to show that the cache answers it (0 calls).

    python bench/schema_describe.py --tables 150 --group 25 [--llm-model NAME] [--scripted]

``--scripted`` answers with the glossary's reading of each name (no model: checks the plumbing).
``--no-llm`` answers nothing: only the descriptions loaded by ``--notes-in`` are indexed, the other
tables stay undescribed (``describe_failed`` counts them), as a project whose model failed them would.
Prints ``name: value`` lines: describe_calls, describe_tables_written, describe_failed, describe_s,
describe_input_tokens, describe_output_tokens, describe_cost_usd (list prices, when the model is
known), rerun_calls, recall_at_10_<set>[_<lang>]_{plain,described}.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def subset(n: int):
    from assay.demo.erp import COLS, MODULES, table_plan
    from assay.models import ColumnInfo, TableInfo

    plan = table_plan(2000)
    core = sum(len(ts) for _, ts in MODULES.values())
    chosen = plan[:core] + plan[core:core + max(0, n - core)]
    return [TableInfo(schema="erp", name=name, row_count=rows, columns=[ColumnInfo(name=c, type=COLS[c]) for c in cols])
            for name, cols, rows in chosen]


def scripted_llm():
    from assay.llm.scripted import ScriptedLLM
    from assay.schema.describe import parse_answer  # noqa: F401 (the answer's shape is the real one)
    from assay.schema.glossary import expand

    def answer(req):
        names = req.meta["tables"]
        return json.dumps({n: f"Rows of {expand(n.split('.')[-1]) or n}. Search words: {expand(n.split('.')[-1])}"
                           for n in names})

    return ScriptedLLM(answer, model="scripted")


def postgres_tables(dsn: str, tmp: Path, store, existing: str = ""):
    """(schema, tables, drop): the ERP warehouse copied into a new schema of the PostgreSQL at ``dsn`` (or
    ``existing``, a schema an earlier copy left, kept) and discovered as a project there sees it."""
    import uuid

    import psycopg

    from assay.demo.erp import generate_erp
    from assay.demo.postgres import load_into_postgres
    from assay.models import Project, WarehouseConfig
    from assay.schema.discovery import discover_schema
    from assay.warehouse import open_warehouse

    schema = existing or f"assay_erp_{uuid.uuid4().hex[:6]}"
    if not existing:  # one copy at a time: 2,000 tables in one transaction take most of the server's lock table
        load_into_postgres(generate_erp(tmp / "erp.duckdb"), dsn, schema)
    cfg = WarehouseConfig(kind="postgres", settings={"dsn": dsn}, schemas=[schema])
    wh = open_warehouse(cfg)
    try:
        tables = discover_schema(store, Project(id="describe-pg", pack="ecommerce", warehouse=cfg), wh, refresh=True)
    finally:
        wh.close()

    def drop() -> None:
        if existing:
            return
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    return schema, tables, drop


def silent_llm():
    """An LLM that describes no table (its answer is an empty JSON object)."""
    from assay.llm.scripted import ScriptedLLM

    return ScriptedLLM(lambda req: "{}", model="none")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=150)
    ap.add_argument("--group", type=int, default=25)
    ap.add_argument("--llm-model", default=os.environ.get("ASSAY_LLM_MODEL", ""))
    ap.add_argument("--embedding-model", default=None)
    ap.add_argument("--scripted", action="store_true")
    ap.add_argument("--no-llm", action="store_true", help="describe nothing beyond --notes-in")
    ap.add_argument("--shard", default="", metavar="K/N",
                    help="describe only the K-th of N contiguous slices of the describable tables, and skip the "
                         "recall figures (several shards run at once, each through its own model; see --notes-out)")
    ap.add_argument("--notes-out", type=Path, default=None, help="write the descriptions (by content hash) to FILE")
    ap.add_argument("--notes-in", type=Path, nargs="*", default=[],
                    help="load descriptions written by --notes-out before the pass (the pass then asks only for the rest)")
    ap.add_argument("--postgres", default="", metavar="DSN",
                    help="the tables as PostgreSQL reports them: the whole 2,000-table ERP warehouse copied into a "
                         "throw-away schema of DSN and discovered there (its column types differ from DuckDB's, so "
                         "its descriptions are cached under other content hashes); --tables is ignored")
    ap.add_argument("--postgres-schema", default="", metavar="NAME",
                    help="with --postgres: a schema holding the copy already (shards running at once share one copy)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="assay-describe-") as d:
        os.environ.update(ASSAY_HOME=str(Path(d) / "home"), HF_HUB_OFFLINE="1")
        from schema_scale import LANGS, SETS

        from assay.estimate import cost, price_for, PhaseEstimate
        from assay.llm import build_llm
        from assay.models import LLMConfig
        from assay.schema.describe import DescribeStats, describe_tables
        from assay.schema.index import SchemaIndex
        from assay.settings import load_settings
        from assay.store import open_store
        from assay.vectors import open_index
        from assay.vectors.embedder import get_schema_embedder

        from assay.schema.describe import content_hash, describable

        if args.no_llm:
            llm = silent_llm()
        elif args.scripted:
            llm = scripted_llm()
        else:
            llm = build_llm(LLMConfig(provider="auto", model=args.llm_model))
            if llm is None:
                sys.exit("no LLM: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a bridge), or OPENAI_BASE_URL")
        settings = load_settings()
        store = open_store(settings)
        schema = "erp"
        if args.postgres:
            schema, tables, drop = postgres_tables(args.postgres, Path(d), store, args.postgres_schema)
            atexit.register(drop)
        else:
            tables = subset(args.tables)
        for f in args.notes_in:
            store.put_table_notes(json.loads(f.read_text()), model="notes-in")
        if args.shard:
            k, n = (int(x) for x in args.shard.split("/"))
            todo = describable(tables)
            size = -(-len(todo) // n)
            part = todo[k * size:(k + 1) * size]
            stats = DescribeStats()
            t0 = time.perf_counter()
            notes = describe_tables(llm, part, store, group=args.group, stats=stats)
            if args.notes_out:
                args.notes_out.write_text(json.dumps({content_hash(t): notes[t.fqn] for t in part if t.fqn in notes},
                                                     indent=1, ensure_ascii=False))
            for e in stats.errors[:3]:
                print(f"# describe error: {e}", file=sys.stderr)
            print(f"shard: {args.shard}\nshard_tables: {len(part)}\ndescribe_calls: {stats.calls}\n"
                  f"describe_tables_written: {stats.written}\ndescribe_failed: {stats.failed}\n"
                  f"describe_cached: {stats.cached}\ndescribe_s: {time.perf_counter() - t0:.1f}")
            return
        sets = {s: json.loads((ROOT / "bench" / "data" / f).read_text()) for s, f in SETS}
        idx = SchemaIndex(open_index(settings), get_schema_embedder(args.embedding_model), "describe-bench")

        def recalls(tag: str) -> dict[str, float]:
            out = {}
            for suffix, queries in sets.items():
                per: dict[str, list[int]] = {}
                misses = []
                for q, target in queries:
                    ok = f"{schema}.{target}" in [h[0] for h in idx.search(q, 10)]
                    for key in ("all", LANGS.get(q, "en")):
                        per.setdefault(key, [0, 0])
                        per[key][0] += ok
                        per[key][1] += 1
                    if not ok:
                        misses.append(q)
                if misses:
                    print(f"# {tag} {suffix.strip('_') or 'dev'} misses: {misses}", file=sys.stderr)
                for key, (h, n) in sorted(per.items()):
                    name = f"recall_at_10{suffix or '_dev'}" + ("" if key == "all" else f"_{key}")
                    out[f"{name}_{tag}"] = h / n
            return out

        idx.sync(tables)
        figures: dict[str, object] = {"tables": len(tables), "llm_model": getattr(llm, "model", ""),
                                      "embedding_model": idx.embedder.name}
        figures.update(recalls("plain"))
        stats = DescribeStats()
        t0 = time.perf_counter()
        notes = describe_tables(llm, tables, store, group=args.group, stats=stats)
        figures.update(describe_s=time.perf_counter() - t0, describe_calls=stats.calls,
                       describe_tables_written=stats.written, describe_failed=stats.failed,
                       describe_cached=stats.cached,
                       describe_input_tokens=stats.input_tokens, describe_output_tokens=stats.output_tokens)
        prices = price_for(getattr(llm, "model", "") or "")
        c = cost(PhaseEstimate("d", input_tokens=stats.input_tokens, output_tokens=stats.output_tokens), prices)
        if c is not None:
            figures["describe_cost_usd"] = c
        for e in stats.errors[:3]:
            print(f"# describe error: {e}", file=sys.stderr)
        sample = list(notes.items())[:3]
        for k, v in sample:
            print(f"# {k}: {v}", file=sys.stderr)
        re_embedded = idx.sync(tables, notes=notes).embedded
        figures["re_embedded_with_descriptions"] = re_embedded
        figures.update(recalls("described"))
        again = DescribeStats()
        describe_tables(llm, tables, store, group=args.group, stats=again)
        figures["rerun_calls"] = again.calls
        figures["rerun_cached"] = again.cached
        if args.notes_out:
            args.notes_out.write_text(json.dumps({content_hash(t): notes[t.fqn] for t in describable(tables)
                                                  if t.fqn in notes}, indent=1, ensure_ascii=False))
    for k, v in figures.items():
        print(f"{k}: {v:.3f}" if isinstance(v, float) else f"{k}: {v}")


if __name__ == "__main__":
    main()
