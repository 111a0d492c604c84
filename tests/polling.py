"""Waiting for a condition in an integration test: poll it, fail with what was awaited (no timed sleeps)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

__all__ = ["eventually"]


async def eventually(
    what: str, check: Callable[[], Awaitable[bool]], task: asyncio.Task[int], *, deadline_s: float = 60.0
) -> None:
    """Poll ``check`` until true; fail after ``deadline_s``, or at once if ``task`` (``run_up``) ended."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + deadline_s
    while not await check():
        if task.done():
            pytest.fail(f"run_up ended (rc={task.result()}) before {what}")
        if loop.time() > deadline:
            pytest.fail(f"timed out after {deadline_s:.0f} s waiting for {what}")
        await asyncio.sleep(0.2)  # a poll interval, not a synchronization
