"""Retry and cache policies shared by every task."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable

from assay.errors import is_transient


def retry_transient(task, task_run, state) -> bool:
    """Retry only transient errors (timeouts, rate limits, dropped connections).

    ``_sync=True``: Prefect calls this from async tasks too, where ``result``
    would otherwise hand back an un-awaited coroutine and never raise.
    """
    try:
        exc = state.result(raise_on_failure=False, _sync=True)
    except Exception as e:  # some states re-raise even when asked not to
        exc = e
    return isinstance(exc, BaseException) and is_transient(exc)


def run_scoped(phase: str) -> Callable[[Any, dict], str]:
    """Cache key: the run and the phase. A retried flow run re-uses finished phases."""

    def key(context, parameters: dict) -> str:
        extra = parameters.get("area") or ""
        return f"assay-{parameters['run_id']}-{phase}{'-' + extra if extra else ''}"

    return key


async def in_thread(fn: Callable, *args, **kwargs):
    """Run blocking core code off the event loop, keeping Prefect's context."""
    return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))
