"""CPU-heavy work on partner content in worker processes, under a deadline that stops it (docs/architecture.md
section 6: hostile content is bounded).

Sanitizing partner HTML (nh3) costs more than its size says on some inputs, measured on this 2-core
machine: 200,000 nested ``<div>`` (1 MB) take 137 s, 1 MB of ``<p a0=1 a1=1 ...>`` 6.5 s, 500,000
no-break spaces 4.6 s; at 16 KB the worst found (``<ul><li>`` nested) is 28 ms. On the event loop that
serves HTTP and heartbeats, such an item stops everything in the process (in ``turbocubes up``: every
cube, the API and the frontend), and asyncio cannot interrupt synchronous work: a handler's time
limit is a task cancellation, which waits for the work to yield.

A thread would keep the loop free (nh3 releases the GIL), but nothing can stop a thread: the item
would run its 137 s, and again at each retry. A process can be stopped. So the parser and the
kvwriter send an item larger than their inline bound here (``OFFLOAD_CHARS``); the rest stays on
the loop, where it costs what it always did. ``Offload.run(fn, *args, deadline_s=)``:

* runs ``fn(*args)`` in one of at most ``workers`` processes (started on first use, with the
  ``preload`` modules imported before any deadline starts: a fresh interpreter, never a fork of this
  process, which has threads). Arguments and the result are pickled; ``fn`` must be a module-level
  function;
* past ``deadline_s`` of the work itself (waiting for a free worker does not count), the worker is
  killed and ``OffloadTimeout`` raised: the same input would take as long again, so it is not
  retried; the caller refuses the item and says why;
* when the awaiting task is cancelled (the runtime's handler time limit, SIGTERM's grace running
  out) the worker running its call is killed at once: the cancellation really stops the work;
* ``close()`` kills every worker; a waiting call then fails. A worker dies with its parent (the
  kernel kills it, on Linux, even when the parent was killed with -9), and ends when its pipe closes.

The wait never blocks the loop: the worker's pipe is watched with ``add_reader``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import logging
import os
import signal
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from shared.errors import OffloadClosed, OffloadFailed, OffloadTimeout

__all__ = ["OFFLOAD_CHARS", "Offload", "OffloadClosed", "OffloadFailed", "OffloadTimeout"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: content (characters of HTML) past which an item is prepared or rendered in a worker process: at 16 KB
#: nh3's worst case found is ~28 ms on the loop (nested lists), at 32 KB ~100 ms, at 64 KB ~600 ms
OFFLOAD_CHARS = 16 * 1024
#: how long a new worker may take to start and import its modules (a spawned interpreter importing
#: lxml, nh3 and pydantic: ~1 s on a quiet machine, several under load)
START_TIMEOUT_S = 60.0
#: the byte a worker sends once it is ready to take work
_READY = b"r"
#: prctl(2): the signal a process gets when its parent ends
_PR_SET_PDEATHSIG = 1


def _child(tasks_fd: int, results_fd: int, preload: Sequence[str]) -> None:
    """A worker's loop: import ``preload``, say ready, then run each ``(fn, args)`` and send back its outcome."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which stops us
    tasks, results = Connection(tasks_fd, writable=False), Connection(results_fd, readable=False)
    for name in preload:
        importlib.import_module(name)
    results.send_bytes(_READY)
    while True:
        try:
            fn, args = tasks.recv()
        except (EOFError, OSError):  # the parent is gone or closed the pipe
            return
        try:
            outcome: tuple[bool, Any] = (True, fn(*args))
        except Exception as exc:  # the caller gets it back as it was raised here
            outcome = (False, exc)
        try:
            results.send(outcome)
        except (EOFError, OSError):
            return
        except Exception as exc:  # an outcome that does not pickle (nothing was sent): say so rather than die
            results.send((False, RuntimeError(f"{type(exc).__name__}: {exc} (sending the outcome of {fn!r})")))


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker when its parent dies (even by SIGKILL), busy or not."""
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the prctl: nobody to work for
        os._exit(0)


@dataclass(eq=False)
class _Worker:
    proc: subprocess.Popen[bytes]
    #: where the work goes, and where its outcome comes back
    tasks: Connection
    results: Connection

    def kill(self) -> None:
        """SIGKILL, never waiting for it to be reaped (``reaped`` does that, without blocking).

        The pipes stay open: a call waiting on this worker wakes up to the end of its results pipe.
        """
        with contextlib.suppress(Exception):
            self.proc.kill()

    def discard(self) -> None:
        """Killed, and its pipes closed: nobody waits on it any more."""
        self.kill()
        for conn in (self.tasks, self.results):
            with contextlib.suppress(Exception):
                conn.close()

    def reaped(self) -> bool:
        """Whether the process is gone (``poll`` reaps an exited child without waiting)."""
        return self.proc.poll() is not None


@dataclass(eq=False)
class Offload:
    """At most ``workers`` worker processes; see the module's docstring."""

    workers: int = 1
    #: modules each worker imports before it takes work (the functions it will run)
    preload: tuple[str, ...] = ()
    _idle: list[_Worker] = field(default_factory=list)
    _running: set[_Worker] = field(default_factory=set)
    _starting: int = 0
    _waiters: deque[asyncio.Future[None]] = field(default_factory=deque)
    #: killed workers not reaped yet (zombies until then)
    _dying: list[_Worker] = field(default_factory=list)
    _closed: bool = False

    @property
    def started(self) -> int:
        """How many worker processes are up."""
        return len(self._idle) + len(self._running)

    @property
    def pids(self) -> list[int]:
        """The worker processes' ids (idle and busy)."""
        return sorted(w.proc.pid for w in [*self._idle, *self._running])

    async def run(self, fn: Callable[..., T], *args: Any, deadline_s: float, what: str = "the work") -> T:
        """``fn(*args)`` in a worker process; ``OffloadTimeout`` past ``deadline_s`` of work."""
        worker = await self._acquire()
        ok = False
        try:
            try:
                worker.tasks.send((fn, args))
                async with asyncio.timeout(deadline_s):
                    await _readable(worker.results)
                good, value = worker.results.recv()
            except TimeoutError:
                raise OffloadTimeout(what, deadline_s) from None
            except (EOFError, OSError):
                if self._closed:
                    raise OffloadClosed("the offload pool was closed during the work") from None
                raise OffloadFailed(f"the worker process running {what} ended before it answered") from None
            ok = True
        finally:
            self._release(worker, keep=ok)
        if not good:
            raise value
        result: T = value
        return result

    async def _acquire(self) -> _Worker:
        self._dying = [w for w in self._dying if not w.reaped()]
        while True:
            if self._closed:
                raise OffloadClosed("the offload pool is closed")
            if self._idle:
                worker = self._idle.pop()
                if not worker.reaped():
                    self._running.add(worker)
                    return worker
                worker.discard()  # ended while idle (killed from outside): start another
                continue
            if self.started + self._starting < self.workers:
                self._starting += 1
                try:
                    worker = await self._start()
                finally:
                    self._starting -= 1
                if self._closed:
                    worker.discard()
                    continue
                self._running.add(worker)
                return worker
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)

    async def _start(self) -> _Worker:
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        code = f"from shared.offload import _child; _child({task_r}, {result_w}, {list(self.preload)!r})"
        # the worker imports what this process imports: the same paths (a test's or a bench's modules too)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            # an interpreter of its own (fork, with this process's threads, is not safe), started on the
            # loop's thread: the kernel kills the worker when the thread that started it ends
            # (_die_with_parent). Popen is a vfork and an exec here, well under a millisecond; asyncio's
            # subprocesses would add a watcher thread per worker for nothing
            proc = subprocess.Popen(  # noqa: S603, ASYNC220 - our own interpreter and code
                [sys.executable, "-c", code], pass_fds=(task_r, result_w), env=env, stdin=subprocess.DEVNULL
            )
        finally:
            os.close(task_r)
            os.close(result_w)
        worker = _Worker(proc, Connection(task_w, readable=False), Connection(result_r, writable=False))
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                await _readable(worker.results)
            if worker.results.recv_bytes() != _READY:
                raise OffloadFailed("a worker process started wrong")
        except (EOFError, OSError):
            worker.discard()
            raise OffloadFailed(f"a worker process could not start (exit status {proc.poll()})") from None
        except BaseException:
            worker.discard()
            raise
        log.info("offload worker %s started (%s)", proc.pid, ", ".join(self.preload) or "no preload")
        return worker

    def _release(self, worker: _Worker, *, keep: bool) -> None:
        self._running.discard(worker)
        if keep and not self._closed:
            self._idle.append(worker)
        else:
            # cut off, cancelled or broken: its work may still be running; the only stop is to kill it
            worker.discard()
            self._dying.append(worker)
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                break

    def close(self) -> None:
        """Kill every worker (their work with them); calls waiting for one fail with ``OffloadClosed``."""
        self._closed = True
        for worker in self._idle:
            worker.discard()
        for worker in self._running:
            worker.kill()  # its caller wakes to the end of the pipe, fails, and discards it
        for worker in [*self._idle, *self._running, *self._dying]:
            with contextlib.suppress(subprocess.TimeoutExpired):
                worker.proc.wait(timeout=1.0)  # killed: gone in milliseconds; a bound all the same
        self._idle.clear()
        self._dying.clear()
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)


async def _readable(conn: Connection) -> None:
    """Until ``conn`` has something to read (or is closed), without blocking the loop."""
    if conn.poll(0):
        return
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    fd = conn.fileno()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
