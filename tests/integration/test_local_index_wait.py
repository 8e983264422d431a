"""Two processes on one local-mode index folder: the second waits for the first, saying so, instead of
failing (two runs on a process work pool used to die on the Qdrant folder lock)."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from assay.errors import ConfigError
from assay.vectors.index import _open_local

HOLD = """
import sys, time
from qdrant_client import QdrantClient
c = QdrantClient(path=sys.argv[1])
print("held", flush=True)
time.sleep(float(sys.argv[2]))
c.close()
"""


def _hold(folder, seconds: float) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(folder), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_second_process_waits_for_the_folder_and_says_so(tmp_path, caplog):
    holder = _hold(tmp_path, 3)
    t0 = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="assay"):
        client = _open_local(SimpleNamespace(qdrant_path=tmp_path), wait_s=60, log_every_s=1)
    waited = time.monotonic() - t0
    client.close()
    holder.wait(10)
    assert waited >= 1.0
    assert any("waiting for the local vector store" in r.getMessage() for r in caplog.records)


def test_it_gives_up_with_one_clear_line(tmp_path):
    holder = _hold(tmp_path, 20)
    try:
        with pytest.raises(ConfigError) as e:
            _open_local(SimpleNamespace(qdrant_path=tmp_path), wait_s=1, log_every_s=10)
        assert "QDRANT_URL" in str(e.value) and "\n" not in str(e.value)
    finally:
        holder.kill()


def test_the_wait_reaches_the_cli_progress_line(tmp_path):
    """The waiting line went only to the run's log: a person watching `assay discover` saw nothing. The
    CLI's progress handler turns it into the progress bar's note while it is fresh."""
    from assay.cli import _ProgressNotes

    notes = _ProgressNotes()
    logging.getLogger("assay").addHandler(notes)
    holder = _hold(tmp_path, 3)
    try:
        assert notes.current() == ""
        client = _open_local(SimpleNamespace(qdrant_path=tmp_path), wait_s=60, log_every_s=1)
        client.close()
    finally:
        logging.getLogger("assay").removeHandler(notes)
        holder.wait(10)
    assert notes.current().startswith("waiting for the local vector store, in use by another assay process")
    notes._until = 0.0  # a stale note (the wait is over) leaves the line to the run's own note
    assert notes.current() == ""
