"""Retry and cache policies shared by every task."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable

from assay.errors import is_transient


def retry_transient(task, task_run, state) -> bool:
    """Retry only transient errors (timeouts, rate limits, dropped connections)."""
    try:
        state.result()
    except Exception as exc:  # the state's exception, re-raised
        return is_transient(exc)
    return False


def run_scoped(phase: str) -> Callable[[Any, dict], str]:
    """Cache key: the run and the phase. A retried flow run re-uses finished phases."""

    def key(context, parameters: dict) -> str:
        extra = parameters.get("area") or ""
        return f"assay-{parameters['run_id']}-{phase}{'-' + extra if extra else ''}"

    return key


async def in_thread(fn: Callable, *args, **kwargs):
    """Run blocking core code off the event loop, keeping Prefect's context."""
    return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))
