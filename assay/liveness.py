"""Is a running run still alive? A run's process writes a heartbeat (host, pid, time) into its run document;
a run whose process is gone (killed with its worker, a lost host) is marked ``crashed``, so that
`assay runs` stops calling it running, `runs --watch` ends, `assay rerun` accepts it and the orphan sweep
drops its step collection.

A process is gone when it ran on this host and its pid is dead (seen at once), or when its heartbeat is
older than ``STALE_AFTER`` of its beats (any host). ``ASSAY_HEARTBEAT_S`` sets the beat (default 15 s); a run
records the beat its process keeps, so readers with another setting judge it right.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading

from .models import DiscoveryRun, RunStatus, utcnow

log = logging.getLogger("assay")

STALE_AFTER = 4  # heartbeats missed before a run on another host counts as gone


def heartbeat_s() -> float:
    try:
        return max(0.2, float(os.environ.get("ASSAY_HEARTBEAT_S") or 15))
    except ValueError:
        return 15.0


def _aware(ts: dt.datetime) -> dt.datetime:
    return ts if ts.tzinfo else ts.replace(tzinfo=dt.timezone.utc)


def pid_alive(pid: int) -> bool:
    """Whether a process of this host is alive (a zombie is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class Heartbeat:
    """While a run's flow executes: its host, pid and a heartbeat every ``heartbeat_s()`` seconds."""

    def __init__(self, store, run_id: str, every_s: float | None = None):
        self.store, self.run_id = store, run_id
        self.every_s = every_s or heartbeat_s()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"heartbeat-{run_id[:8]}", daemon=True)

    def beat(self) -> None:
        try:
            self.store.update_run(self.run_id, heartbeat_at=utcnow())
        except Exception as exc:  # a missed beat is not a failed run
            log.debug("heartbeat of run %s: %s", self.run_id, exc)

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.beat()

    def __enter__(self) -> Heartbeat:
        self.store.update_run(self.run_id, host=socket.gethostname(), pid=os.getpid(), heartbeat_at=utcnow(),
                              heartbeat_s=self.every_s)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)


def gone_because(run: DiscoveryRun, now: dt.datetime | None = None, host: str | None = None) -> str | None:
    """Why a run marked running has no live process, or None while it may still be alive. A run with no
    heartbeat (written by a version without one, or run inline) is never judged."""
    if run.status not in (RunStatus.running, RunStatus.pending) or run.heartbeat_at is None:
        return None
    now = now or utcnow()
    host = host or socket.gethostname()
    if run.host == host and run.pid and not pid_alive(run.pid):
        return f"its process ({run.host} pid {run.pid}) stopped without ending it"
    silent = (now - _aware(run.heartbeat_at)).total_seconds()
    if silent > STALE_AFTER * (run.heartbeat_s or heartbeat_s()) + 1:
        return f"no heartbeat from {run.host} pid {run.pid} for {silent:.0f} s"
    return None


def reap_gone_runs(store, now: dt.datetime | None = None) -> list[DiscoveryRun]:
    """Mark every running run whose process is gone as crashed; returns them (as they are now)."""
    reaped = []
    for run_id in store.active_run_ids():
        try:
            run = store.get_run(run_id)
        except Exception:
            continue
        why = gone_because(run, now)
        if why is None:
            continue
        store.update_run(run_id, status=RunStatus.crashed, finished_at=_aware(run.heartbeat_at),
                         error=f"crashed: {why}; rerun its areas with `assay rerun {run_id[:8]} --area AREA` "
                               "or Retry its flow run")
        log.warning("run %s crashed: %s", run_id[:8], why)
        reaped.append(store.get_run(run_id))
    return reaped


def state_name(run: DiscoveryRun) -> str:
    """The run's state as Prefect names its flow run's final state (they mirror each other)."""
    if run.status == RunStatus.completed:
        return "Partial" if run.run_type is not None and run.run_type.value == "partial" else "Completed"
    return run.status.value.capitalize()
