"""Where task results persist: one storage every worker reads, so a Retry on any worker re-uses the
phases and areas that finished (without it, Prefect writes to the worker's own
``$PREFECT_HOME/storage`` and a retry on another host recomputes everything).

``ASSAY_RESULT_STORAGE`` chooses it (see ``assay.settings.result_storage_target``): a folder (default
``$ASSAY_HOME/results``), a storage block slug for clusters (``s3-bucket/assay-results``), or
``prefect`` for Prefect's own default. It is read when the tasks are defined, i.e. once per flow process,
from the worker's environment.
"""

from __future__ import annotations

from pathlib import Path

from assay.settings import load_settings, result_storage_target


def result_storage() -> Path | str | None:
    """The ``result_storage`` of every task whose result a retry re-uses: a folder (Prefect makes it a
    LocalFileSystem), a block slug (loaded from the server when a task runs), or None (Prefect's default)."""
    kind, where = result_storage_target(load_settings())
    if kind == "path":
        return Path(where)
    if kind == "block":
        return where
    return None
