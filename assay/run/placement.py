"""Where a run's analysis areas run: in the discovery's own process, or each as its own flow run on a pool.

One decision for every way a discovery starts (the orchestrator asks it, and only does what it says):

- ``ASSAY_AREA_RUNS=auto`` (the default): each area is its own flow run of the area deployment when the
  discovery itself runs from a deployment on a work pool, so the areas spread over the pool's workers; in
  process otherwise (`assay discover`, `assay serve`, the embedded defaults).
- ``ASSAY_AREA_RUNS=deployment``: always their own flow runs (a served or pooled area deployment must exist).
- ``ASSAY_AREA_RUNS=inline``: always in process.

Areas in other processes need a vector index those processes can open: a Qdrant server (``QDRANT_URL``) or
the vectors in the store (``ASSAY_VECTOR_INDEX=store``, the default with ``MONGODB_URI``). Qdrant local mode
is held by the discovery's process for the whole run, so with it the areas stay in process (``auto``) or the
run is refused before it starts (``deployment``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import ConfigError

MODES = ("auto", "deployment", "inline")


@dataclass(frozen=True)
class Placement:
    flow_runs: bool  # True: each area is a flow run of the area deployment
    why: str  # one line for the run's log

    def __str__(self) -> str:
        return self.why


def area_runs_setting(environ=os.environ) -> str:
    mode = (environ.get("ASSAY_AREA_RUNS") or "auto").strip().lower()
    if mode not in MODES:
        raise ConfigError(f"ASSAY_AREA_RUNS={mode!r}: use auto (areas as flow runs when the discovery runs on a "
                          "work pool), deployment (always) or inline (always in this process)")
    return mode


def place_areas(mode: str, *, work_pool: str | None, index_kind: str, deployment: str,
                api_server: bool = True) -> Placement:
    """``mode``: the setting; ``work_pool``: the pool the discovery's flow run came from (None: not from a
    pooled deployment); ``index_kind``: ``assay.settings.vector_index_kind``; ``api_server``: a Prefect
    server other processes can reach (not the ephemeral one of `assay discover`)."""
    if mode not in MODES:
        raise ConfigError(f"area placement {mode!r}: use one of {', '.join(MODES)}")
    if mode == "inline":
        return Placement(False, "areas run in this process (ASSAY_AREA_RUNS=inline)")
    shareable = index_kind in ("server", "store")
    if mode == "deployment":
        if not shareable:
            raise ConfigError("ASSAY_AREA_RUNS=deployment needs a vector index other processes can open: set "
                              "QDRANT_URL (a Qdrant server) or ASSAY_VECTOR_INDEX=store (vectors in the store); "
                              "Qdrant local mode admits one process")
        if not api_server:
            raise ConfigError("ASSAY_AREA_RUNS=deployment needs a Prefect server the workers reach "
                              "(PREFECT_API_URL); this process runs on an ephemeral one")
        return Placement(True, f"areas run as flow runs of {deployment} (ASSAY_AREA_RUNS=deployment)")
    if not work_pool:
        return Placement(False, "areas run in this process (the discovery is not on a work pool)")
    if not shareable:
        return Placement(False, f"areas run in this process although the discovery runs on work pool "
                                f"{work_pool!r}: the vector index is Qdrant local mode (one process); set "
                                "MONGODB_URI, ASSAY_VECTOR_INDEX=store or QDRANT_URL to spread them over the pool")
    return Placement(True, f"areas run as flow runs of {deployment} on work pool {work_pool!r}")
