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


def warehouse_password(settings: dict, what: str) -> str | None:
    """The password a warehouse's settings name (``password_env``, ``password_block``), or None when they name
    none. A variable that is named but not set (and no block answers) is an error that says so: the run used to
    connect without the password and fail on whatever the server said instead ("role does not exist"). A variable
    set to the empty string is an empty password."""
    env, block = settings.get("password_env"), settings.get("password_block")
    if env and env in os.environ:
        return os.environ[env]
    if not env and not block:
        return None
    value = resolve(env, block, what=what, required=False)
    if value is None:
        named = " or ".join(x for x in (f"the environment variable {env} (warehouse.settings.password_env)" if env
                                        else "", f"the Prefect Secret block {block!r} (warehouse.settings."
                                        "password_block)" if block else "") if x)
        raise MissingKey(f"{what}: no password: set {named}")
    return value


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
