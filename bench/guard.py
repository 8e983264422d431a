"""Does the guard fail closed? Attacks and analytics through the run path, judged by an oracle (issue 18).

Seeds real engines (bench/guard_seed.py: two tenants, PII, a hidden schema, a canary file), then
runs every statement of bench/data/guard/attacks.json and legit.json exactly as a run does —
``open_warehouse(cfg)``, ``build_guard(wh, cfg, wh.list_tables())``, ``Executor(...).run(sql,
fix=False)`` with a tenant filter (tenant_id = 7) and pii_columns set — in three lanes: DuckDB,
PostgreSQL as the superuser, PostgreSQL as a least-privilege role. Each lane is a child process
(bench/guard_lane.py) so a statement that runs away is killed, not waited for.

An attack is judged by what it did, not by whether it was blocked. HARMFUL when any of:
- a planted value in the outcome (result cells, column names, error or refusal text): the canary
  file's content, a tenant-8 marker or id, a seeded email/name/phone (also lower-cased, reversed,
  base64, hex, or its distinctive part), the hidden schema's secret, a password hash;
- a side effect: tables/views/functions/schemas, table data, sequences, large objects, roles,
  role/database settings, postgresql.auto.conf, advisory locks, notifications, statistics resets,
  a configuration reload, a terminated bystander session, files under the seed
  folder or the server's data directory, the DuckDB file's bytes, or the lane session's own state
  (settings, role, open transaction, temp objects, prepared statements, cursors, listeners);
- wall time over 1.5x the statement timeout (a statement still running after 5 s is killed);
- a call whose only trace is a WAL record or a server-wide action (a WAL switch: other
  sessions on a shared server switch WAL files too, so it is not snapshotted) (``effect_if_ok`` in the
  corpus) that returned a result.

Also runs bench/pii_leak.py (a scripted discovery over the PII corpus) and reports its figures.

Prints one `name: value` line per figure; writes every execution's record to
$GBENCH_DETAILS (default /tmp/gbench_details.json).
"""

from __future__ import annotations

import hashlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from guard_seed import (
    PG_ADMIN_DSN,
    Seed,
    cleanup,
    drop_postgres,
    new_seed,
    seed_duckdb,
    seed_postgres,
)

DATA = HERE / "data" / "guard"
TIMEOUT_S = 2.0
HARMFUL_FACTOR = 1.5
KILL_AFTER_S = 5.0
ROW_CAP = 200
PII_COLUMNS = ["email", "full_name", "phone"]
PY = sys.executable
VERBOSE = os.environ.get("GBENCH_VERBOSE") == "1"


def fill(sql: str, seed: Seed, engine: str, out: Path) -> str:
    s, h = ("main", "vault") if engine == "duckdb" else (seed.pg_schema, seed.pg_vault)
    return (sql.replace("{S}", s).replace("{H}", h).replace("{CANARY}", str(seed.canary_path))
            .replace("{OUT}", str(out)).replace("{T}", seed.token).replace("{ROLE}", seed.pg_role or "x")
            .replace("{BY}", f"gbench_by_{seed.token}"))


def lane_cfg(seed: Seed, engine: str, role: str) -> dict:
    from assay.models import TenantFilter, WarehouseConfig

    tenant = TenantFilter(column="tenant_id", value=7, shared_tables=["products"])
    common = dict(tenant_filter=tenant, statement_timeout_s=TIMEOUT_S, row_cap=ROW_CAP, pii_columns=PII_COLUMNS)
    if engine == "duckdb":
        cfg = WarehouseConfig(kind="duckdb", settings={"path": str(seed.duckdb_path)}, schemas=["main"], **common)
    else:
        user = "postgres" if role == "super" else seed.pg_role
        dsn = PG_ADMIN_DSN.replace("user=postgres", f"user={user}")
        cfg = WarehouseConfig(kind="postgres", settings={"dsn": dsn}, schemas=[seed.pg_schema], **common)
    return cfg.model_dump(mode="json")


# ------------------------------------------------------------------ what the world looks like (outside the lane)

class World:
    """Snapshots of everything an attack could change, taken by the harness's own connections."""

    def __init__(self, seed: Seed, pg: bool, watch: Path):
        self.seed = seed
        self.watch = watch  # the lane's own folder (write targets, working directory)
        self.pg = pg
        self.notes: list[str] = []
        self.admin = self.bystander = None
        self.data_dir = None
        if pg:
            import psycopg

            self.admin = psycopg.connect(PG_ADMIN_DSN, autocommit=True)
            self.admin.add_notify_handler(lambda n: self.notes.append(f"{n.channel}:{n.payload}"))
            for ch in (f"gb_{seed.token}", "gb", "x", "c"):
                self.admin.execute(f"LISTEN {ch}")
            self.data_dir = Path(self.admin.execute("SHOW data_directory").fetchone()[0])
            self._connect_bystander()

    def _connect_bystander(self):
        import psycopg

        self.bystander = psycopg.connect(PG_ADMIN_DSN + f" application_name=gbench_by_{self.seed.token}",
                                         autocommit=True)

    def files(self) -> list[str]:
        out = [f"{p.relative_to(self.watch)}:{p.stat().st_size if p.is_file() else 'dir'}"
               for p in sorted(self.watch.rglob("*"))]
        if not self.pg and self.seed.duckdb_path is not None:
            for p in sorted(self.seed.root.glob("warehouse.duckdb*")):
                out.append(f"{p.name}:{hashlib.sha256(p.read_bytes()).hexdigest()[:16]}")
        if self.data_dir is not None and self.data_dir.is_dir():
            out += [f"datadir/{p.name}" for p in sorted(self.data_dir.iterdir())]
            auto = self.data_dir / "postgresql.auto.conf"
            if auto.is_file():
                out.append("auto.conf:" + hashlib.sha256(auto.read_bytes()).hexdigest()[:16])
        return out

    def snapshot(self, pids: list[int]) -> dict:
        snap = {"files": self.files()}
        if not self.pg:
            return snap
        s, v, t, role = self.seed.pg_schema, self.seed.pg_vault, self.seed.token, self.seed.pg_role
        a = self.admin
        q = {
            "objects": f"""SELECT string_agg(n.nspname || '.' || c.relname || ':' || c.relkind::text, ',' ORDER BY 1)
                           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                           WHERE n.nspname IN ('{s}', '{v}', 'public')""",
            "functions": f"""SELECT string_agg(n.nspname || '.' || p.proname, ',' ORDER BY 1) FROM pg_proc p
                             JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname IN ('{s}', '{v}', 'public')""",
            "schemas": f"SELECT string_agg(nspname, ',' ORDER BY 1) FROM pg_namespace WHERE nspname LIKE '%{t}%'",
            "data": " || ".join(f"(SELECT coalesce(md5(string_agg(x::text, '|' ORDER BY x::text)), '-') FROM {tb} x)"
                                for tb in (f"{s}.customers", f"{s}.orders", f"{s}.events", f"{s}.products",
                                           f"{v}.secrets")).join(("SELECT ", "")),
            "sequence": f"SELECT last_value::text || is_called::text FROM {s}.seq_gb",
            "large_objects": "SELECT count(*)::text FROM pg_largeobject_metadata",
            "roles": f"""SELECT string_agg(rolname || ':' || rolsuper || rolcreaterole || rolcreatedb || rolcanlogin
                         || rolbypassrls || coalesce(rolpassword, ''), ',' ORDER BY rolname) FROM pg_authid
                         WHERE rolname IN ('postgres', '{role}') OR rolname LIKE '%{t}%'""",
            "members": f"SELECT count(*)::text FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member "
                       f"WHERE r.rolname = '{role}'",
            "role_settings": "SELECT count(*)::text || coalesce(string_agg(array_to_string(setconfig, ';'), ','), '') "
                             "FROM pg_db_role_setting",
            "advisory": "SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory' AND pid = ANY(%s)",
            "stats_reset": "SELECT concat((SELECT stats_reset FROM pg_stat_database WHERE datname = current_database()),"
                           " (SELECT stats_reset FROM pg_stat_bgwriter), (SELECT stats_reset FROM pg_stat_archiver))",
            "table_stats": f"SELECT coalesce(sum(n_live_tup), 0)::text FROM pg_stat_user_tables WHERE schemaname = '{s}'",
            "conf_load": "SELECT pg_conf_load_time()::text",
        }
        for k, sql in q.items():
            try:
                snap[k] = a.execute(sql, [pids] if "%s" in sql else None).fetchone()[0]
            except Exception as exc:
                snap[k] = f"error {type(exc).__name__}: {str(exc)[:80]}"
        snap["notifications"] = len(self.notes)
        try:
            self.bystander.execute("SELECT 1")
            snap["bystander"] = "alive"
        except Exception:
            snap["bystander"] = "terminated"
            self._connect_bystander()
        return snap

    def running(self, pids: list[int]) -> list[str]:
        if not self.pg or not pids:
            return []
        rows = self.admin.execute("SELECT pid, left(query, 80) FROM pg_stat_activity WHERE pid = ANY(%s) "
                                  "AND state = 'active'", [pids]).fetchall()
        return [f"{p}: {q}" for p, q in rows]

    def terminate(self, pids: list[int]) -> None:
        if self.pg and pids:
            self.admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids])

    def close(self):
        for c in (self.admin, self.bystander):
            if c is not None:
                c.close()


def diff(a: dict, b: dict) -> list[str]:
    out = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            x, y = a.get(k), b.get(k)
            if isinstance(x, list) and isinstance(y, list):
                out.append(f"{k}: +{sorted(set(y) - set(x))[:3]} -{sorted(set(x) - set(y))[:3]}")
            else:
                out.append(f"{k}: {str(x)[:80]} -> {str(y)[:80]}")
    return out


# ------------------------------------------------------------------ one lane

class Lane:
    def __init__(self, name: str, engine: str, cfg: dict, items: list[dict], seed: Seed, world: World, work: Path):
        self.name, self.engine, self.items, self.seed, self.world = name, engine, items, seed, world
        self.file = work / f"{name}.json"
        self.file.write_text(json.dumps({"engine": engine, "cfg": cfg, "items": items, "secrets": seed.secrets()}))
        self.err = work / f"{name}.stderr"
        self.proc = None
        self.pids: list[int] = []

    def spawn(self, start: int) -> bool:
        cwd = self.world.watch / "cwd"
        self.proc = subprocess.Popen([PY, str(HERE / "guard_lane.py"), str(self.file), str(start)], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(self.err, "a"), bufsize=0,
                                     start_new_session=True)
        self.buf = b""
        self.go_sent = False
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        msg = self.read(120)
        if not msg or not msg.get("ready"):
            self.kill()
            return False
        self.pids = msg.get("pids") or []
        return True

    def read(self, timeout: float) -> dict | None:
        """The child's next JSON line, or None after ``timeout`` (raw reads: no hidden buffer)."""
        deadline = time.perf_counter() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.perf_counter()
            if left <= 0 or not self.sel.select(left):
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return {"eof": True}
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {"noise": line.decode(errors="replace")}

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def run(self) -> list[dict]:
        recs: list[dict] = []
        i = 0
        before = self.world.snapshot(self.pids)
        while i < len(self.items):
            if self.proc is None and not self.spawn(i):
                err = self.err.read_text()[-800:] if self.err.exists() else ""
                raise SystemExit(f"lane {self.name}: the child did not start:\n{err}")
            if not self.go_sent:  # one statement at a time: the child waits until the last one is judged
                try:
                    self.proc.stdin.write(b"go\n")
                except (BrokenPipeError, OSError):
                    pass
                self.go_sent = True
            msg = self.read(60)
            while msg and "noise" in msg:
                msg = self.read(60)
            if msg is None or msg.get("eof") or msg.get("done"):
                if msg and msg.get("done"):
                    break
                recs.append(self.judge(i, {"i": i, "status": "crash", "msg": "lane died between statements",
                                           "leaks": [], "session_changed": []}, before))
                self.kill()
                i += 1
                continue
            if "start" not in msg:
                continue
            i = msg["start"]
            self.pids = msg.get("pids") or self.pids
            t0 = time.perf_counter()
            rec = None
            while rec is None:
                left = KILL_AFTER_S - (time.perf_counter() - t0)
                m = self.read(max(left, 0.01))
                if m is None:  # past the kill line: the harness stops it, as a user's runner would not
                    wall = time.perf_counter() - t0
                    self.kill()
                    time.sleep(0.5)
                    still = self.world.running(self.pids)
                    rec = {"i": i, "status": "killed", "wall": wall, "leaks": [], "session_changed": [],
                           "msg": f"still running after {KILL_AFTER_S:g}s, killed"
                                  + (f"; the server kept running it after the client died: {still[0]}" if still else "")}
                elif m.get("eof"):
                    rec = {"i": i, "status": "crash", "wall": time.perf_counter() - t0, "leaks": [], "session_changed": [],
                           "msg": "the lane process died: " + (self.err.read_text()[-300:] if self.err.exists() else "")}
                    self.kill()
                elif "i" in m:
                    rec = m
            if rec.get("status") == "blocked":  # the guard refused it: the engine never saw it
                rec["world_changed"] = []
            else:
                after = self.world.snapshot(self.pids)
                rec["world_changed"] = diff(before, after)
                before = after
            recs.append(self.judge(i, rec, None))
            self.go_sent = False
            if VERBOSE:
                print(f"# {self.name} {i} {rec['status']} {rec.get('wall', 0):.2f}s {rec['harm'][:2]} "
                      f"{rec.get('msg', '')[:100]!r} :: {rec['sql'][:100]!r}", file=sys.stderr, flush=True)
            if rec.get("session_changed") and self.proc is not None:
                self.kill()  # a fresh session for the next statement: the harm is counted once
            if self.proc is None:  # killed: end its server sessions, then take a new baseline
                self.world.terminate(self.pids)
                time.sleep(0.2)
                before = self.world.snapshot(self.pids)
            i += 1
        self.kill()
        return recs

    def judge(self, i: int, rec: dict, _before) -> dict:
        item = self.items[i]
        rec.update(lane=self.name, engine=self.engine, sql=item["sql"], kind=item["kind"],
                   cls=item.get("class", "legit"))
        why = list(rec.get("leaks") or [])
        why += [f"side effect: {d}" for d in rec.get("world_changed") or []]
        why += [f"session changed: {d}" for d in rec.get("session_changed") or []]
        if rec.get("wall", 0) > HARMFUL_FACTOR * TIMEOUT_S:
            why.append(f"ran {rec['wall']:.1f}s under a {TIMEOUT_S:g}s timeout")
        if item.get("effect_if_ok") and rec.get("status") == "ok":
            why.append(f"executed: {item['effect_if_ok']}")
        rec["harm"] = why
        return rec


# ------------------------------------------------------------------ main

def pg_reachable() -> bool:
    try:
        import psycopg

        psycopg.connect(PG_ADMIN_DSN, connect_timeout=3).close()
        return True
    except Exception as exc:
        print(f"# PostgreSQL not reachable ({type(exc).__name__}): PostgreSQL lanes skipped", file=sys.stderr)
        return False


def start_pii():
    """bench/pii_leak.py in its own process, beside the lanes (GBENCH_PII=0 skips it)."""
    if os.environ.get("GBENCH_PII", "1") != "1":
        return None
    return subprocess.Popen([PY, str(HERE / "pii_leak.py")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_pii(proc) -> dict:
    if proc is None:
        return {}
    out, err = proc.communicate(timeout=900)
    figs = {}
    for line in out.splitlines():
        if ": " in line and not line.startswith("#"):
            k, v = line.split(": ", 1)
            figs[k.strip()] = v.strip()
    if proc.returncode != 0 or not figs:
        print(f"# pii_leak.py failed (exit {proc.returncode}): {err[-800:]}", file=sys.stderr)
    else:
        sys.stderr.write("".join(x + "\n" for x in err.splitlines() if x.startswith("#")))
    return figs


def main() -> None:
    attacks = json.loads((DATA / "attacks.json").read_text())
    legit = json.loads((DATA / "legit.json").read_text())
    only = os.environ.get("GBENCH_LANES", "duckdb,pg_super,pg_low").split(",")
    seed = new_seed()
    t_start = time.perf_counter()
    recs: list[dict] = []
    pii: dict = {}
    pg = pg_reachable() and any(x.startswith("pg") for x in only)
    try:
        seed_duckdb(seed)
        if pg:
            seed_postgres(seed)
            import psycopg

            with psycopg.connect(PG_ADMIN_DSN) as c:
                seed.lo_floor = c.execute("SELECT coalesce(max(oid::bigint), 0) FROM pg_largeobject_metadata").fetchone()[0]
        with tempfile.TemporaryDirectory(prefix="gbench_work_") as work:
            lanes = [("duckdb", "duckdb", "super")]
            if pg:
                lanes += [("pg_super", "postgres", "super"), ("pg_low", "postgres", "low")]
            lanes = [x for x in lanes if x[0] in only]

            def run_lanes(group):
                for name, engine, role in group:
                    watch = seed.root / name
                    (watch / "out").mkdir(parents=True)
                    (watch / "cwd").mkdir()
                    for d in (watch, watch / "out", watch / "cwd"):
                        os.chmod(d, 0o777)
                    items = [dict(x, kind="legit", sql=fill(x["sql"], seed, engine, watch / "out"))
                             for x in legit if x["dialect"] == engine]
                    items += [dict(x, kind="attack", sql=fill(x["sql"], seed, engine, watch / "out"))
                              for x in attacks if x["dialect"] == engine]
                    world = World(seed, pg=engine == "postgres", watch=watch)
                    try:
                        t0 = time.perf_counter()
                        recs.extend(Lane(name, engine, lane_cfg(seed, engine, role), items, seed, world,
                                         Path(work)).run())
                        print(f"# lane {name}: {len(items)} statements in {time.perf_counter() - t0:.0f}s",
                              file=sys.stderr, flush=True)
                    finally:
                        world.close()

            # DuckDB and PostgreSQL share nothing a statement could change, so their lanes run side
            # by side; the two PostgreSQL lanes share the server, so they run one after the other
            # (a side effect is then attributed to the statement that caused it).
            groups = [[x for x in lanes if x[1] == "duckdb"], [x for x in lanes if x[1] == "postgres"]]
            pii_proc = start_pii()
            threads = [threading.Thread(target=run_lanes, args=(g,)) for g in groups if g]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            pii = finish_pii(pii_proc)
    finally:
        if pg:
            drop_postgres(seed)
        cleanup(seed)
    details = Path(os.environ.get("GBENCH_DETAILS", "/tmp/gbench_details.json"))
    details.write_text(json.dumps(recs, indent=1, default=str))
    report(attacks, legit, recs, pii, time.perf_counter() - t_start)
    print(f"# details of every execution: {details}", file=sys.stderr)


def report(attacks: list[dict], legit: list[dict], recs: list[dict], pii: dict, wall: float) -> None:
    att = [r for r in recs if r["kind"] == "attack"]
    leg = [r for r in recs if r["kind"] == "legit"]
    fig: dict[str, object] = {"attacks_total": len(attacks), "attacks_executed": len(att)}
    harmful = [r for r in att if r["harm"]]
    fig["harmful_total"] = len(harmful)
    fig["blocked_total"] = sum(r["status"] == "blocked" for r in att)
    fig["allowed_harmless_total"] = sum(r["status"] != "blocked" and not r["harm"] for r in att)
    fig["crash_total"] = sum(r["status"] == "crash" for r in recs)
    by: dict[str, list[dict]] = defaultdict(list)
    for r in att:
        by[r["cls"]].append(r)
        by[r["lane"]].append(r)
        by[f"{r['cls']}_{r['lane']}"].append(r)
    keys = sorted({r["cls"] for r in att}) + sorted({r["lane"] for r in att})
    for k in keys:
        rs = by[k]
        fig[f"{k}_executed"] = len(rs)
        fig[f"{k}_harmful"] = sum(bool(r["harm"]) for r in rs)
        fig[f"{k}_blocked"] = sum(r["status"] == "blocked" for r in rs)
    fig["legit_total"] = len(legit)
    fig["legit_executed"] = len(leg)
    fig["legit_pass_share"] = round(sum(r["status"] == "ok" for r in leg) / len(leg), 4) if leg else 0
    for lane in sorted({r["lane"] for r in leg}):
        rs = [r for r in leg if r["lane"] == lane]
        fig[f"legit_pass_share_{lane}"] = round(sum(r["status"] == "ok" for r in rs) / len(rs), 4)
    walls = [r.get("wall", 0) for r in recs]
    fig["timeout_overrun_ratio"] = round(max(walls) / TIMEOUT_S, 2) if walls else 0
    fig["killed_total"] = sum(r["status"] == "killed" for r in recs)
    for k in ("pii_queries", "pii_steps", "pii_raw_values_found", "pii_places_with_raw_values", "pii_run_type"):
        if k in pii:
            fig[k] = pii[k]
    fig["bench_wall_s"] = round(wall, 1)
    for k, v in fig.items():
        print(f"{k}: {v}")


if __name__ == "__main__":
    main()
