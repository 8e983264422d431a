"""Secrets: from environment variables, or from a Prefect Secret block.

The core never imports Prefect: the orchestration layer registers a block
resolver at start-up (``assay_flows/tasks/__init__.py``). Secrets are returned to the
adapter that needs them and never logged or stored.
"""

from __future__ import annotations

import os
from typing import Callable

from .errors import MissingKey

_block_resolver: Callable[[str], str] | None = None


def register_block_resolver(fn: Callable[[str], str]) -> None:
    global _block_resolver
    _block_resolver = fn


def resolve(env: str | None = None, block: str | None = None, *, what: str, required: bool = True) -> str | None:
    if env and os.environ.get(env):
        return os.environ[env]
    if block:
        if _block_resolver is None:
            raise MissingKey(f"{what}: Secret block {block!r} needs Prefect; run through `assay` or a flow")
        try:
            value = _block_resolver(block)
        except Exception as exc:
            raise MissingKey(f"{what}: cannot read Prefect Secret block {block!r} ({type(exc).__name__})") from None
        if value:
            return value
    if required:
        hint = f"set {env}" if env else "configure a secret"
        if block:
            hint += f" or create the Prefect Secret block {block!r}"
        raise MissingKey(f"{what}: no credentials; {hint}")
    return None
