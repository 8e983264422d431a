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
    return _silence(run.host, run.pid, run.heartbeat_at, run.heartbeat_s, now, host)


def _silence(where: str | None, pid: int | None, beat_at: dt.datetime, every_s: float | None,
             now: dt.datetime | None = None, host: str | None = None) -> str | None:
    now = now or utcnow()
    host = host or socket.gethostname()
    if where == host and pid and not pid_alive(pid):
        return f"its process ({where} pid {pid}) stopped without ending it"
    silent = (now - _aware(beat_at)).total_seconds()
    if silent > STALE_AFTER * (every_s or heartbeat_s()) + 1:
        return f"no heartbeat from {where} pid {pid} for {silent:.0f} s"
    return None


class AreaHeartbeat(Heartbeat):
    """While an area runs as its own flow run (on any worker): its host, pid, parent pid (the worker that
    started it) and a heartbeat, in the store, so the discovery waiting for it sees a killed worker."""

    def __init__(self, store, run_id: str, area: str, flow_run_id: str, every_s: float | None = None):
        super().__init__(store, run_id, every_s)
        self.area, self.flow_run_id = area, flow_run_id
        self._thread.name = f"heartbeat-{run_id[:8]}-{area}"

    def beat(self) -> None:
        try:
            self.store.beat_area(self.run_id, self.area, heartbeat_at=utcnow())
        except Exception as exc:
            log.debug("heartbeat of area %s of run %s: %s", self.area, self.run_id, exc)

    def __enter__(self) -> AreaHeartbeat:
        self.store.beat_area(self.run_id, self.area, flow_run=self.flow_run_id, host=socket.gethostname(),
                             pid=os.getpid(), ppid=os.getppid(), heartbeat_at=utcnow(), heartbeat_s=self.every_s)
        self._thread.start()
        return self


def area_gone_because(beat: dict | None, flow_run_id: str, now: dt.datetime | None = None,
                      host: str | None = None) -> str | None:
    """Why the area flow run ``flow_run_id`` (seen running) has no live process, or None while it may be alive
    or has not yet said where it runs."""
    if not beat or beat.get("flow_run") != flow_run_id or not beat.get("heartbeat_at"):
        return None
    at = beat["heartbeat_at"]
    at = dt.datetime.fromisoformat(at) if isinstance(at, str) else at
    return _silence(beat.get("host"), beat.get("pid"), at, beat.get("heartbeat_s"), now, host)


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
