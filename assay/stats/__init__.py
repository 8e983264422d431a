"""The statistical analyst (no LLM): planner, detectors, analyst."""

import importlib.util as _util

# scipy.stats looks at sys.modules["torch"] while it initialises: when another thread is importing torch at
# that moment (the embedder loading in the background), scipy meets a half-initialised module and raises
# AttributeError. Importing torch here first waits for that import to finish (or does it once, in this
# thread). torch comes with sentence-transformers, which every run loads anyway.
if _util.find_spec("torch") is not None:
    import torch  # noqa: F401
