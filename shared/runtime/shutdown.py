"""Shutdown that always finishes (docs/architecture.md section 4: "shuts down gracefully on SIGTERM").

A graceful stop asks, waits, and then insists — but it must also *end*. A task
that does not honour cancellation (a driver waiting for a cancelled query to be
acknowledged: asyncpg's release can wait forever for that, MagicStack/asyncpg
#431) or a closer that waits on a peer that is gone would otherwise hold the
process for good: once, under a load of 7-9, the launcher waited more than a
minute on its status-snapshot task.

So every wait at shutdown is bounded from *outside* the waited-on work:
``asyncio.wait(..., timeout=)``, never ``wait_for`` (which, after its timeout,
waits for the cancelled work to finish cancelling — the very wait that may not
end). What is still running after its grace is cancelled; what is still
running after ``CANCEL_GRACE_S`` more is abandoned and named in the log, and
the process goes on closing the rest. Deadlines are on the event loop's time:
they must pass however a test's clock stands.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Coroutine
from typing import Any, TypeVar

from shared.runtime.loops import new_event_loop

T = TypeVar("T")

__all__ = ["CANCEL_GRACE_S", "CLOSE_TIMEOUT_S", "WRAP_UP_S", "bounded", "run_main", "settle"]

log = logging.getLogger("turbocubes.shutdown")

#: after a cancellation, how long a task gets to unwind (close a connection, leave a group) before
#: it is abandoned: a well-behaved task needs milliseconds; a few seconds cover a loaded machine
CANCEL_GRACE_S = 3.0
#: how long one engine gets to close (a pool, a producer flushing its last batch, a client)
CLOSE_TIMEOUT_S = 10.0
#: past ``runtime.shutdown_timeout_s`` (the in-flight work's grace), how long a runner gets to commit
#: what finished and leave its group before it is cancelled: a commit and a leave are round trips
WRAP_UP_S = 5.0


def _name(task: asyncio.Future[Any]) -> str:
    return task.get_name() if isinstance(task, asyncio.Task) else repr(task)


async def settle(
    tasks: Collection[asyncio.Future[Any]], grace_s: float, *, cancel_grace_s: float = CANCEL_GRACE_S
) -> list[str]:
    """Let ``tasks`` end within ``grace_s``, cancel the rest, give them ``cancel_grace_s`` to unwind.

    Returns the names of the tasks that were still running after that (abandoned, and logged).
    Never raises a task's exception: the caller reads ``task.exception()`` if it cares.
    """
    running = {t for t in tasks if not t.done()}
    pending = running
    if pending and grace_s > 0:
        _, pending = await asyncio.wait(pending, timeout=grace_s)
    stuck: set[asyncio.Future[Any]] = set()
    if pending:
        for t in pending:
            t.cancel()
        _, stuck = await asyncio.wait(pending, timeout=cancel_grace_s)
    for t in running - stuck:  # what ended here, with an error: said (and so retrieved) once
        if not t.cancelled() and (exc := t.exception()) is not None:
            log.error("shutdown: %s ended with %s: %s", _name(t), type(exc).__name__, exc, exc_info=exc)
    names = sorted(_name(t) for t in stuck)
    if names:
        log.error(
            "shutdown: %s did not end within %.1fs of being cancelled; left behind so that the process can exit",
            ", ".join(names),
            cancel_grace_s,
        )
    return names


async def bounded(what: str, close: Callable[[], Awaitable[Any]], timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
    """Run one closing step under a deadline; False (logged) when it failed or did not end in time.

    The step runs as a task of its own, so that a step that ignores its cancellation is left
    behind instead of holding the caller.
    """
    task = asyncio.ensure_future(close())
    task.set_name(f"close:{what}")
    stuck = await settle([task], timeout_s)
    if stuck:
        return False
    if task.cancelled():
        log.warning("shutdown: %s did not finish within %.1fs (cancelled)", what, timeout_s)
        return False
    exc = task.exception()
    if exc is not None:
        log.warning("shutdown: %s failed (%s: %s)", what, type(exc).__name__, exc)
        return False
    return True


def run_main(main: Coroutine[Any, Any, T], *, event_loop: str = "auto") -> T:
    """``asyncio.run(main)`` that returns however its tasks behave (a process's entry point), on the
    event loop ``event_loop`` names (``runtime.event_loop``: ``loops.py``).

    ``asyncio.run`` ends by cancelling every task left and waiting for all of them, then for
    the default executor's threads: one task that ignores its cancellation, or one thread
    blocked on a dead peer, and the process never exits. Here both waits are bounded
    (``CANCEL_GRACE_S`` each); what is still there is left to the process's exit.
    """
    try:
        loop = new_event_loop(event_loop)
    except BaseException:
        main.close()  # never awaited: say so to nobody (no "coroutine was never awaited" warning)
        raise
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            left = [t for t in asyncio.all_tasks(loop) if not t.done()]
            if left:
                loop.run_until_complete(settle(left, 0))
            loop.run_until_complete(_bounded_wait(loop.shutdown_asyncgens(), "async generators"))
            loop.run_until_complete(_bounded_wait(loop.shutdown_default_executor(), "the default executor"))
        finally:
            asyncio.set_event_loop(None)
            loop.close()


async def _bounded_wait(aw: Coroutine[Any, Any, None], what: str) -> None:
    task = asyncio.ensure_future(aw)
    done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
    if not done:
        log.error("shutdown: %s did not close within %.1fs; left to the process's exit", what, CANCEL_GRACE_S)
