"""Loading the model adds variables to ``os.environ`` (ours, and torch's on import). It loads on a background thread
while the main thread starts Prefect, whose settings iterate ``os.environ``: a key added meanwhile fails that
iteration ("dictionary changed size during iteration", seen as a flaky failed run under load, session 13). Every
such key is set on the thread that makes the embedder, before any background load."""

from __future__ import annotations

import json
import os
import subprocess
import sys

SCRIPT = r"""
import json, os
from assay.vectors.embedder import Embedder
e = Embedder()
made = set(os.environ)
e.embed(["a text to embed"])
print(json.dumps(sorted(set(os.environ) - made)))
"""


def test_loading_the_model_adds_no_environment_variable_after_the_embedder_is_made(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KMP_", "TORCHINDUCTOR_", "TRANSFORMERS_", "TOKENIZERS_", "HF_HUB_DISABLE"))}
    env["ASSAY_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
