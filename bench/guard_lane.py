"""One lane of bench/guard.py: one engine, one role, statements run in order through the run path.

Started by bench/guard.py as a child process (so a runaway statement can be killed without losing
the benchmark): ``python bench/guard_lane.py LANE.json START``. Builds exactly what a run builds:
``open_warehouse(cfg)``, ``build_guard(wh, cfg, wh.list_tables())``, ``Executor(...)``, and for each
statement prints one JSON line: what happened, how long it took, what planted value the outcome
holds (result cells, column names, error and refusal text), and whether the session's own state
(settings, role, temporary objects, open transaction, listeners) changed.
"""

from __future__ import annotations

import base64
import decimal
import json
import math
import resource
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from guard_seed import pii_needles


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


# ------------------------------------------------------------------ the oracle on an outcome

class Needles:
    def __init__(self, sec: dict):
        self.fixed = [("canary", sec["canary"].lower()), ("hidden", sec["hidden"].lower()),
                      ("tenant8", sec["t8"].lower()), ("password_hash", "scram-sha-256$")]
        self.pii = [(v, n) for v in sec["pii"] for n in pii_needles(v)]
        self.lo, self.hi = sec["t8_id_base"], sec["t8_id_base"] + 10 * sec["n"] * 3

    def find(self, texts: list[str], numbers: list[float]) -> list[str]:
        blob = "\n".join(texts).lower()
        found = [f"{kind}:{n}" for kind, n in self.fixed if n in blob]
        pii = sorted({v for v, n in self.pii if n in blob})
        if pii:
            found.append(f"pii:{len(pii)} values e.g. {pii[0]}")
        ids = [x for x in numbers if self.lo < x <= self.hi]
        if ids:
            found.append(f"tenant8_id:{int(ids[0])}")
        return found


def flatten(v, texts: list[str], numbers: list[float]) -> None:
    if v is None:
        return
    if isinstance(v, bool):
        return
    if isinstance(v, (int, float, decimal.Decimal)):
        try:
            f = float(v)
            if math.isfinite(f):
                numbers.append(f)
        except (OverflowError, ValueError):
            pass
        texts.append(str(v))
        return
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        texts += [b.decode("latin-1"), b.hex(), base64.b64encode(b).decode()]
        return
    if isinstance(v, dict):
        for k, x in v.items():
            texts.append(str(k))
            flatten(x, texts, numbers)
        return
    if isinstance(v, (list, tuple, set)):
        for x in v:
            flatten(x, texts, numbers)
        return
    texts.append(str(v))


def outcome_texts(out, skip: set[int] = frozenset()) -> tuple[list[str], list[float]]:
    texts: list[str] = [out.refused or "", out.error or ""]
    texts += [a.error or "" for a in out.attempts]
    numbers: list[float] = []
    if out.result is not None:
        t = out.result.table
        texts += list(out.result.columns or []) + list(t.column_names)
        for pos, col in enumerate(t.columns):
            if pos in skip:
                continue
            try:
                vals = col.to_pylist()
            except Exception as exc:  # a value Arrow cannot hand back: its text is what we can scan
                vals = [f"<unreadable {type(exc).__name__}: {exc}>"]
            for v in vals:
                flatten(v, texts, numbers)
    return texts, numbers


# ------------------------------------------------------------------ session state (what persists in the lane's session)

def duck_state(wh) -> dict:
    cur = wh._cursor()
    q = {
        "settings": "SELECT name, value FROM duckdb_settings() WHERE name NOT IN ('temp_directory') ORDER BY 1",
        "databases": "SELECT database_name, path, readonly FROM duckdb_databases() ORDER BY 1",
        "tables": "SELECT database_name, schema_name, table_name, temporary FROM duckdb_tables() ORDER BY ALL",
        "views": "SELECT database_name, schema_name, view_name FROM duckdb_views() WHERE NOT internal ORDER BY ALL",
        "macros": "SELECT database_name, schema_name, function_name FROM duckdb_functions() WHERE NOT internal ORDER BY ALL",
        "sequences": "SELECT schema_name, sequence_name, last_value FROM duckdb_sequences() ORDER BY ALL",
        "variables": "SELECT name FROM duckdb_variables() ORDER BY 1",
    }
    out = {}
    for k, sql in q.items():
        try:
            out[k] = [list(map(str, r)) for r in cur.execute(sql).fetchall()]
        except Exception:
            out[k] = "unreadable"
    return out


def pg_state(wh) -> dict:
    c = wh._conn()
    out = {"txn": str(c.info.transaction_status)}
    try:
        with c.cursor() as cur:
            cur.execute("""SELECT current_user, session_user,
                (SELECT string_agg(name || '=' || setting, ',' ORDER BY name) FROM pg_settings
                   WHERE source NOT IN ('default', 'configuration file', 'override', 'environment variable')
                     AND name NOT IN ('transaction_isolation', 'transaction_read_only', 'transaction_deferrable')),
                (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema()),
                (SELECT count(*) FROM pg_prepared_statements), (SELECT count(*) FROM pg_cursors),
                (SELECT string_agg(l, ',') FROM pg_listening_channels() l),
                (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())""")
            out["session"] = [str(x) for x in cur.fetchone()]
        c.rollback()
    except Exception as exc:
        out["session"] = f"error {type(exc).__name__}: {str(exc)[:100]}"
        try:
            c.rollback()
        except Exception:
            pass
    return out


def diff(a: dict, b: dict) -> list[str]:
    return [f"{k}: {str(a.get(k))[:200]} -> {str(b.get(k))[:200]}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def backend_pids(wh) -> list[int]:
    try:
        return [c.info.backend_pid for c in list(getattr(wh, "_all", [])) if not c.closed]
    except Exception:
        return []


# ------------------------------------------------------------------ main

def main() -> None:
    lane = json.loads(Path(sys.argv[1]).read_text())
    start = int(sys.argv[2])
    # safety for a shared machine: a runaway statement may take memory, not the whole box
    gib = lane.get("rlimit_gib", 8)
    resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    from assay.explore.executor import Executor
    from assay.models import WarehouseConfig
    from assay.warehouse import build_guard, open_warehouse

    cfg = WarehouseConfig.model_validate(lane["cfg"])
    wh = open_warehouse(cfg)
    tables = wh.list_tables()
    guard = build_guard(wh, cfg, tables)
    ex = Executor(wh, guard, cfg, llm=None)
    needles = Needles(lane["secrets"])
    state = duck_state if lane["engine"] == "duckdb" else pg_state
    emit({"ready": True, "pids": backend_pids(wh), "tables": len(tables)})
    items = lane["items"]
    before = state(wh)
    for i in range(start, len(items)):
        sql = items[i]["sql"]
        if not sys.stdin.readline():  # the harness says go once it has judged the previous statement
            break
        emit({"start": i, "pids": backend_pids(wh)})
        t0 = time.perf_counter()
        rec: dict = {"i": i}
        try:
            out = ex.run(sql, fix=False)
            rec["wall"] = time.perf_counter() - t0
            if out.refused:
                rec["status"], rec["msg"] = "blocked", out.refused[:300]
            elif out.error:
                rec["status"], rec["msg"] = "error", out.error[:300]
            else:
                rec["status"] = "ok"
                rec["rows"] = out.result.table.num_rows
            texts, numbers = outcome_texts(out)
            rec["leaks"] = needles.find(texts, numbers)
            if out.result is not None and any(x.startswith("pii") for x in rec["leaks"]):
                # would the guard's own verdict (PII lineage -> masked_outputs) have covered it?
                masked = getattr(guard.check(sql), "masked_outputs", None)
                if masked is not None:
                    texts, numbers = outcome_texts(out, set(masked))
                    rec["leaks_after_verdict_mask"] = [x for x in needles.find(texts, numbers) if x.startswith("pii")]
        except Exception as exc:
            rec["wall"] = time.perf_counter() - t0
            rec["status"], rec["msg"] = "crash", f"{type(exc).__name__}: {str(exc)[:300]}"
            rec["trace"] = traceback.format_exc(limit=4)[-600:]
            rec["leaks"] = needles.find([str(exc)], [])
        if rec["status"] == "blocked":  # refused before the engine saw it: nothing can have changed
            rec["session_changed"] = []
        else:
            after = state(wh)
            rec["session_changed"] = diff(before, after)
            before = after
        rec["pids"] = backend_pids(wh)
        emit(rec)
    emit({"done": True})
    wh.close()


if __name__ == "__main__":
    main()
