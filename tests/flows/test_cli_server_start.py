"""`assay discover`/`rerun` start Prefect's ephemeral server in a thread while the flows import and the
embedder loads (issue #20 item 8); the flow's client must then find that same server running, and with a
real server configured nothing may be started. Each case runs in its own process (a fresh PREFECT_HOME),
as the CLI does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.prefect_servers import seed_database

SCRIPT = textwrap.dedent("""
    import asyncio, sys
    from assay.cli import _start_ephemeral_server
    from prefect.server.api.server import SubprocessASGIServer

    _start_ephemeral_server().join()
    if sys.argv[1] == "none":
        print("instances", len(SubprocessASGIServer._instances))
        raise SystemExit(0)
    server = SubprocessASGIServer()
    assert server.running and server.server_process is not None, "not started"
    started = server.api_url
    from prefect.client.orchestration import get_client

    async def main():
        async with get_client() as c:
            await c.hello()
            return str(c.api_url)
    used = asyncio.run(main())
    print("same", used.rstrip("/") == started.rstrip("/"), SubprocessASGIServer() is server)
    server.stop()
""")


def _run(tmp_path, mode: str, **extra: str) -> str:
    # a fresh home whose database is the run's template copy: the server skips Prefect's migrations
    seed_database(tmp_path / "prefect" / "prefect.db")
    env = dict(os.environ, PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
               DO_NOT_TRACK="1", PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180", **extra)
    for k in ("PREFECT_API_URL", "PREFECT_PROFILES_PATH"):
        if k not in extra:
            env.pop(k, None)
    r = subprocess.run([sys.executable, "-c", SCRIPT, mode], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.strip().splitlines()[-1]


def test_the_server_started_early_is_the_one_the_flow_client_uses(tmp_path):
    assert _run(tmp_path, "start") == "same True True"


def test_nothing_is_started_when_a_real_server_is_configured(tmp_path):
    assert _run(tmp_path, "none", PREFECT_API_URL="http://127.0.0.1:9/api") == "instances 0"
