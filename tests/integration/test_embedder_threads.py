"""The embedding model's first load, in a fresh process (torch not yet imported), one process for two behaviours:

- two threads loading it at once both get a model. Before the process-wide load lock, two flow runs served by one
  `assay serve` imported torch at the same time and one failed with "partially initialized module 'torch'";
- loading it adds no variable to ``os.environ`` after the embedder is made. Loading sets variables (ours, and
  torch's on import); it runs on a background thread while the main thread starts Prefect, whose settings iterate
  ``os.environ``, and a key added meanwhile fails that iteration ("dictionary changed size during iteration", seen
  as a flaky failed run under load, session 13). Every such key is set on the thread that makes the embedder."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = """
import json, os, threading
from assay.vectors.embedder import Embedder, get_embedder
errors, dims = [], []
def load(e):
    try:
        dims.append(e.dim)
        e.embed(["a text to embed"])
    except Exception as exc:
        errors.append(repr(exc))
made = [get_embedder(), Embedder(), get_embedder(None)]
before = set(os.environ)
threads = [threading.Thread(target=load, args=(e,)) for e in made]
for t in threads: t.start()
for t in threads: t.join()
assert not errors and dims == [384, 384, 384], (errors, dims)
assert get_embedder() is get_embedder(None)
print(json.dumps(sorted(set(os.environ) - before)))
"""


def test_concurrent_first_loads_in_a_fresh_process_add_no_environment_variable(tmp_path):
    # without the variables a load sets, as a fresh shell has it (the suite's own loads may have set them here)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KMP_", "TORCHINDUCTOR_", "TRANSFORMERS_", "TOKENIZERS_", "HF_HUB_DISABLE"))}
    env["ASSAY_HOME"] = str(tmp_path)
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == []
