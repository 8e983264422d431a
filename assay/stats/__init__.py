"""The statistical analyst (no LLM): planner, detectors, analyst."""

# scipy.stats looks at sys.modules["torch"] while it initialises: when another thread is importing torch at
# that moment (the embedder loading in the background), scipy meets a half-initialised module and raises
# AttributeError. scipy.stats imports here under the lock the embedder holds while torch imports, so one
# waits for the other; torch itself is not imported (a rerun that reads its vectors from the cache needs none).
from ..vectors.embedder import IMPORT_LOCK as _IMPORT_LOCK

with _IMPORT_LOCK:
    import scipy.stats  # noqa: F401
