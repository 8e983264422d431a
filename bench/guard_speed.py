"""How long the guard takes per statement, and a digest of its verdicts (issue 23, item 4: the suite's CPU).

Every statement a run sends passes ``SQLGuard.check`` (parse, node checks, scopes, lineage, and a round trip
through the parser). This checks a fixed corpus — every SQL statement the recorded model transcripts sent
(tests/fixtures/transcripts, the demo warehouses' real tables) and the DuckDB statements of the guard's attack
and analytics corpora (bench/data/guard) — with the guard a run builds over the demo warehouses, and prints:

    statements: N (allowed A, refused R)
    sqlglot: <version> compiled=<True|False>   (sqlglotc: mypyc-compiled parser and generator)
    ms_per_statement: best of --passes passes
    verdicts_sha256: digest of every (statement, allowed, reason, statement sent)

Run it in two environments (with and without ``sqlglotc``) to compare speed; equal digests prove that the
compiled build gives every statement the same verdict and sends the same text.

    PYTHONPATH=. .venv/bin/python bench/guard_speed.py [--passes 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def corpus() -> list[tuple[str, str]]:
    """(demo, sql): the transcripts' queries (their demo by the folder's name) and the corpora's DuckDB ones."""
    out: list[tuple[str, str]] = []
    for folder in sorted((ROOT / "tests" / "fixtures" / "transcripts").iterdir()):
        which = "gaming" if "gaming" in folder.name else "ecommerce"
        for f in sorted(folder.glob("*.response.json")):
            for call in json.loads(f.read_text()).get("tool_calls") or []:
                args = call.get("arguments") or {}
                for key in ("sql", "query"):
                    if call.get("name") == "query" and isinstance(args.get(key), str):
                        out.append((which, args[key]))
    for name in ("legit.json", "attacks.json"):
        for item in json.loads((ROOT / "bench" / "data" / "guard" / name).read_text()):
            if item.get("dialect") == "duckdb":
                out.append(("ecommerce", item["sql"].replace("{S}", "main").replace("{T}", "7")))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    import sqlglot
    import sqlglot.parser

    from assay.demo import generate
    from assay.models import WarehouseConfig
    from assay.warehouse import build_guard, open_warehouse

    statements = corpus()
    guards = {}
    with tempfile.TemporaryDirectory() as tmp:
        for which in ("ecommerce", "gaming"):
            path, _ = generate(which, Path(tmp), scale=0.02)
            cfg = WarehouseConfig(kind="duckdb", settings={"path": str(path)}, pii_columns=["email", "full_name"])
            wh = open_warehouse(cfg)
            guards[which] = build_guard(wh, cfg, wh.list_tables())
            wh.close()
    best = float("inf")
    digest = ""
    allowed = 0
    for _ in range(args.passes):
        h = hashlib.sha256()
        allowed = 0
        t0 = time.perf_counter()
        for which, sql in statements:
            v = guards[which].check(sql)
            allowed += bool(v.allowed)
            h.update(json.dumps([sql, bool(v.allowed), v.reason, v.sql if v.allowed else ""]).encode())
        best = min(best, time.perf_counter() - t0)
        digest = h.hexdigest()
    compiled = not sqlglot.parser.__file__.endswith(".py")
    print(f"statements: {len(statements)} (allowed {allowed}, refused {len(statements) - allowed})")
    print(f"sqlglot: {sqlglot.__version__} compiled={compiled}")
    print(f"ms_per_statement: {1000 * best / len(statements):.2f}")
    print(f"verdicts_sha256: {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
