"""A fresh home's Prefect database from a template (issue #20 item 8): the first local server on a fresh
home builds the database with Prefect's own migrations and keeps it as the template of the installed Prefect;
a later fresh home copies it and reaches a working server; a template of another Prefect (another version,
another migration set, a stale or broken file) is never copied; a home's own database is never replaced."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assay_flows import local_server

# a command's view: connect to the local server (starting it), then use it through Prefect's own client
CLIENT = textwrap.dedent("""
    import asyncio, json, os
    from assay_flows import local_server
    url = local_server.connect(300)
    os.environ["PREFECT_API_URL"] = url
    from prefect import flow
    from prefect.client.orchestration import get_client

    @flow(name="template-probe")
    def probe():
        return 42

    async def main():
        async with get_client() as c:
            block_types = await c.read_block_types()
            return len(block_types)

    n = asyncio.run(main())
    assert probe() == 42
    print(json.dumps({"url": url, "block_types": n}))
""")


def _env(home: Path, cache: Path, **extra: str) -> dict:
    env = dict(os.environ, PREFECT_HOME=str(home), ASSAY_CACHE_DIR=str(cache), DO_NOT_TRACK="1",
               PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="300",
               PREFECT_LOGGING_LEVEL="WARNING")
    for k in ("PREFECT_API_URL", "PREFECT_PROFILES_PATH", "PREFECT_PROFILE", "ASSAY_PREFECT_SERVER_IDLE",
              "ASSAY_PREFECT_DB_TEMPLATE", "PREFECT_API_DATABASE_CONNECTION_URL",
              "PREFECT_SERVER_DATABASE_CONNECTION_URL"):
        env.pop(k, None)
    env.update(extra)
    return env


def _run_client(home: Path, cache: Path) -> tuple[dict, str]:
    env = _env(home, cache)
    try:
        r = subprocess.run([sys.executable, "-c", CLIENT], env=env, capture_output=True, text=True, timeout=600)
    finally:
        st = local_server._read_state(home)
        if st:
            with contextlib.suppress(ProcessLookupError):
                os.kill(st["pid"], signal.SIGTERM)
    log = (home / local_server.LOG).read_text() if (home / local_server.LOG).exists() else ""
    assert r.returncode == 0, r.stderr[-3000:] + log[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1]), log


def _stamp(path: Path, revision: str) -> None:
    con = sqlite3.connect(str(path))
    con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
    con.execute("INSERT INTO alembic_version VALUES (?)", (revision,))
    con.commit()
    con.close()


def test_a_fresh_home_builds_the_template_then_the_next_one_copies_it(tmp_path):
    cache = tmp_path / "cache"
    head = local_server._migrations_head()
    assert head, "the installed Prefect's SQLite migrations have one head"
    # a template left by another Prefect (same file name, another revision): never copied, rebuilt
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ASSAY_CACHE_DIR", str(cache))
        template = local_server.template_path()
    template.parent.mkdir(parents=True)
    _stamp(template, "0000stale000")

    first, log = _run_client(tmp_path / "a", cache)
    assert "database built" in log
    assert local_server._head_revision(template) == head  # the rebuilt template is at the installed head
    assert first["block_types"] > 0

    second, log = _run_client(tmp_path / "b", cache)
    assert "database copied" in log
    assert second["block_types"] == first["block_types"]  # the same registry, and flows run against it
    assert local_server._head_revision(tmp_path / "b" / "prefect.db") == head
    # the copy is the home's own database: the template is untouched by the server's writes
    con = sqlite3.connect(f"file:{template}?mode=ro", uri=True)
    assert con.execute("SELECT count(*) FROM flow_run").fetchone()[0] == 0
    con.close()
    con = sqlite3.connect(f"file:{tmp_path / 'b' / 'prefect.db'}?mode=ro", uri=True)
    assert con.execute("SELECT count(*) FROM flow_run").fetchone()[0] == 1
    con.close()


# ------------------------------------------------------------------------------- without a server


def _fake_prefect(root: Path, version: str, revisions: list[str]) -> Path:
    (root / "server" / "database" / "_migrations" / "versions" / "sqlite").mkdir(parents=True, exist_ok=True)
    (root / "_build_info.py").write_text(f'# Generated\n__version__ = "{version}"\n')
    versions = root / "server" / "database" / "_migrations" / "versions" / "sqlite"
    for old in versions.glob("*.py"):
        old.unlink()
    down = None
    for i, rev in enumerate(revisions):
        (versions / f"2026_01_{i + 1:02d}_000000_{rev}_step.py").write_text(
            f'revision = "{rev}"\ndown_revision = {json.dumps(down) if down else None}\n')
        down = rev
    return root


def test_another_prefect_names_another_template(tmp_path, monkeypatch):
    fake = tmp_path / "prefect"
    monkeypatch.setattr(local_server, "_prefect_dir", lambda: fake)
    _fake_prefect(fake, "3.8.8", ["aaa111", "bbb222"])
    key = local_server.template_key()
    assert local_server._migrations_head() == "bbb222"
    _fake_prefect(fake, "3.9.0", ["aaa111", "bbb222"])  # an upgrade with no new migration
    upgraded = local_server.template_key()
    _fake_prefect(fake, "3.8.8", ["aaa111", "bbb222", "ccc333"])  # a patched install that adds one
    patched = local_server.template_key()
    assert len({key, upgraded, patched}) == 3
    assert local_server._migrations_head() == "ccc333"
    _fake_prefect(fake, "3.8.8", ["aaa111", "bbb222"])
    assert local_server.template_key() == key  # the same install names the same template


def _home_db(tmp_path, monkeypatch, head: str) -> Path:
    db = tmp_path / "home" / "prefect.db"
    monkeypatch.setattr(local_server, "_database_path", lambda: db)
    monkeypatch.setattr(local_server, "_migrations_head", lambda: head)
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))

    async def never(path):  # the slow path (Prefect's migrations) is the server test's subject
        raise AssertionError("built instead of copied")

    monkeypatch.setattr(local_server, "_build", never)
    return db


def test_a_template_at_the_head_is_copied_and_a_home_database_is_kept(tmp_path, monkeypatch):
    db = _home_db(tmp_path, monkeypatch, "bbb222")
    template = local_server.template_path()
    template.parent.mkdir(parents=True)
    _stamp(template, "bbb222")
    assert local_server.prepare_database() == "copied"
    assert local_server._head_revision(db) == "bbb222"
    assert not list(db.parent.glob(".*template"))  # no temporary copy left behind
    # the home's own database (with its runs) is never replaced, whatever the template holds
    con = sqlite3.connect(str(db))
    con.execute("CREATE TABLE mine (x)")
    con.commit()
    con.close()
    assert local_server.prepare_database() == "existing"
    con = sqlite3.connect(str(db))
    assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'mine'").fetchone()[0] == 1
    con.close()


@pytest.mark.parametrize("content", ["stale", "not a database", "unstamped"])
def test_a_template_not_at_the_head_is_never_copied(tmp_path, monkeypatch, content):
    db = _home_db(tmp_path, monkeypatch, "bbb222")
    template = local_server.template_path()
    template.parent.mkdir(parents=True)
    if content == "stale":
        _stamp(template, "aaa111")  # an older Prefect's database
    elif content == "not a database":
        template.write_bytes(b"\x00garbage" * 100)
    else:
        sqlite3.connect(str(template)).close()
    with pytest.raises(AssertionError, match="built instead of copied"):
        local_server.prepare_database()
    assert not db.exists()


def test_templates_turned_off_or_another_database(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_PREFECT_DB_TEMPLATE", "0")
    assert local_server.prepare_database() == "off"
    monkeypatch.delenv("ASSAY_PREFECT_DB_TEMPLATE")
    # a server database that is not this home's SQLite file is Prefect's alone
    script = ("from assay_flows import local_server; print(local_server._database_path())")
    for url in ("postgresql+asyncpg://u@127.0.0.1:5432/x", "sqlite+aiosqlite:///:memory:"):
        env = dict(os.environ, PREFECT_HOME=str(tmp_path / "h"), PREFECT_API_DATABASE_CONNECTION_URL=url)
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.strip() == "None", r.stderr[-2000:]
    env = dict(os.environ, PREFECT_HOME=str(tmp_path / "h"))
    env.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)
    env.pop("PREFECT_SERVER_DATABASE_CONNECTION_URL", None)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == str(tmp_path / "h" / "prefect.db"), r.stderr[-2000:]


def test_prepare_builds_the_template_ahead_of_time(tmp_path):
    """`make install` runs it: the template exists before the first command, and a second call is a no-op."""
    cache = tmp_path / "cache"
    env = _env(tmp_path / "unused-home", cache)
    r = subprocess.run([sys.executable, "-m", "assay_flows.local_server", "--prepare"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "template built" in r.stdout, r.stderr[-2000:]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ASSAY_CACHE_DIR", str(cache))
        template = local_server.template_path()
    assert local_server._head_revision(template) == local_server._migrations_head()
    assert not (tmp_path / "unused-home").exists()  # a throwaway home, not the user's
    r = subprocess.run([sys.executable, "-m", "assay_flows.local_server", "--prepare"], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "template ready" in r.stdout, r.stderr[-2000:]



def test_templates_of_prefects_gone_for_a_month_are_pruned(tmp_path, monkeypatch):
    """The cache holds one template per Prefect ever installed; another virtualenv's template in use stays, one
    unused for 30 days goes, and so does a temporary copy a dead process left; the current one always stays."""
    db = _home_db(tmp_path, monkeypatch, "bbb222")
    template = local_server.template_path()
    folder = template.parent
    folder.mkdir(parents=True)
    _stamp(template, "bbb222")
    day = 86400
    now = local_server.time.time()
    recent = folder / "prefect-3.8.7-aaaaaaaaaaaaaaaa.db"  # another install, used last week
    gone = folder / "prefect-3.7.0-bbbbbbbbbbbbbbbb.db"  # another install, unused for two months
    dead_tmp = folder / f".{template.name}.99999"  # a build that died an hour and more ago
    fresh_tmp = folder / f".{template.name}.88888"  # a build under way now
    keep_other = folder / "notes.txt"  # not ours
    for p, age in ((recent, 7 * day), (gone, 60 * day), (dead_tmp, 2 * 3600), (fresh_tmp, 10), (keep_other, 90 * day)):
        p.write_bytes(b"x")
        os.utime(p, (now - age, now - age))
    os.utime(template, (now - 90 * day, now - 90 * day))  # the current template, however old, stays
    assert local_server.prepare_database() == "copied"
    assert db.exists() and template.exists() and recent.exists() and fresh_tmp.exists() and keep_other.exists()
    assert not gone.exists() and not dead_tmp.exists()
    assert now - template.stat().st_mtime < 60  # a copy marks the template as in use
