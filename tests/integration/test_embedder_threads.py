"""Two threads loading the embedding model at once, in a fresh process (torch not yet imported): both get a
model. Before the process-wide load lock, two flow runs served by one `assay serve` imported torch at the same
time and one failed with "partially initialized module 'torch'"."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import threading
from assay.vectors.embedder import Embedder, get_embedder
errors, dims = [], []
def load(e):
    try:
        dims.append(e.dim)
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=load, args=(e,)) for e in (get_embedder(), Embedder(), get_embedder(None))]
for t in threads: t.start()
for t in threads: t.join()
print(errors, dims)
assert not errors and dims == [384, 384, 384], (errors, dims)
assert get_embedder() is get_embedder(None)
"""


def test_concurrent_first_loads_in_a_fresh_process():
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
