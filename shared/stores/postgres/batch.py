"""The calls of one event-loop turn, run as one statement (docs/architecture.md section 4: "PostgreSQL calls are
pipelined").

The SQLite engine groups the writes of one loop turn into one transaction
(``sqlite/db.py``). The PostgreSQL engine does more with the same idea: the
calls of one *kind* asked for in one turn (every ``mark_ordered`` of the 64
documents the media cube has in flight, say) become ONE statement over arrays
(``unnest``), so a turn costs one round trip per kind of call, whatever the
number of callers, and a single statement is its own transaction: there is no
``BEGIN`` / ``COMMIT`` to pay for. Calls of different kinds go out at once, on
connections of their own, so one never waits behind another.

The rules a ``TurnBatch`` keeps (``tests/contract`` checks them on both engines):

* **One by one, as far as any caller can tell.** Calls with the same ``key``
  (the row they write) go in separate statements, in the order they were made
  (*rounds*: the first call of each key, then the second, ...), so a statement
  never touches a row twice, and each caller sees what it would have seen
  alone. A round is sent in chunks of at most ``limit`` calls.
* **A failing statement fails only its own caller.** When a statement fails for
  a reason of its data (a value out of range, say), its calls are run again one
  by one, so only the caller whose data it was gets the error.
* **An outage fails the whole group**, as ``StoreUnavailable``: the runtime
  retries every message involved, in place (``shared/errors.py``).
* **One statement of a kind at a time.** Calls made while a statement is in
  flight wait for it and go together in the next one (a group commit), so a
  later turn's call never overtakes an earlier turn's on another connection
  (``mark_ordered_many`` asks in the turn after its caller's: its statement
  raced the first one's for the same rows, and sometimes won).
* **Nothing is acknowledged before its commit.** A caller's result is set only
  when the statement that carried its call has returned: committed.
* A caller cancelled before its turn ends is dropped from the statement; once
  the statement is sent, it runs (the caller just does not hear the answer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any, Generic, TypeVar

import asyncpg

from shared.errors import StoreUnavailable

__all__ = ["BATCH_LIMIT", "Inflight", "TurnBatch"]

I = TypeVar("I")  # noqa: E741 - the item type, as in the typing docs
R = TypeVar("R")

#: calls per statement at most: a statement over 500 rows is still one quick round trip, and a
#: bigger turn (a rare burst) only costs more of them
BATCH_LIMIT = 500

#: a statement's runner: the items of its calls, in order -> their results, in the same order
Run = Callable[[asyncpg.Connection, Sequence[Any]], Awaitable[Sequence[Any]]]
#: a pooled connection as ``PgDb.connection()`` gives it (counted, errors translated)
Connect = Callable[[], Any]


class Inflight:
    """The statements a pool's batches have sent and not yet heard back: ``close`` waits for them."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


class TurnBatch(Generic[I, R]):
    """``await batch(item)``: ``item`` is run with the other items of this loop turn, in one statement."""

    def __init__(
        self,
        connect: Connect,
        run: Callable[[asyncpg.Connection, Sequence[I]], Awaitable[Sequence[R]]],
        inflight: Inflight,
        *,
        key: Callable[[I], Hashable] | None = None,
        limit: int = BATCH_LIMIT,
    ) -> None:
        self._connect = connect
        self._run = run
        self._inflight = inflight
        self._key = key
        self._limit = limit
        self._pending: list[tuple[I, asyncio.Future[R]]] = []
        #: the task sending this batch's statements, one after another, while calls keep coming
        self._sender: asyncio.Task[None] | None = None
        #: statements sent, and how many calls they carried (tests and benchmarks read these)
        self.statements = 0
        self.calls = 0

    async def __call__(self, item: I) -> R:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[R] = loop.create_future()
        self._pending.append((item, fut))
        if len(self._pending) == 1 and self._sender is None:
            # after every caller that runs in this turn of the loop has added its item (while a
            # statement is in flight, the sender takes what came meanwhile when it is back)
            loop.call_soon(self._start)
        return await fut

    def _start(self) -> None:
        if self._sender is None and self._pending:
            self._sender = asyncio.ensure_future(self._send_all())
            self._inflight.add(self._sender)

    async def _send_all(self) -> None:
        try:
            while calls := [(item, fut) for item, fut in self._pending if not fut.done()]:
                self._pending = []
                await self._drain(calls)
            self._pending = []
        except BaseException as exc:  # cancelled at shutdown: what waits behind it is abandoned too
            for _, fut in self._pending:
                _fail(fut, StoreUnavailable(f"postgresql: batch abandoned: {exc!r}"))
            self._pending = []
            raise
        finally:
            self._sender = None

    async def _drain(self, calls: list[tuple[I, asyncio.Future[R]]]) -> None:
        try:
            for round_ in _rounds(calls, self._key):
                for start in range(0, len(round_), self._limit):
                    await self._send(round_[start : start + self._limit])
        except BaseException as exc:  # cancelled at shutdown: nobody may wait forever
            for _, fut in calls:
                if not fut.done():
                    fut.set_exception(StoreUnavailable(f"postgresql: batch abandoned: {exc!r}"))
            raise

    async def _send(self, calls: Sequence[tuple[I, asyncio.Future[R]]]) -> None:
        self.statements += 1
        self.calls += len(calls)
        try:
            async with self._connect() as conn:
                results = await self._run(conn, [item for item, _ in calls])
        except StoreUnavailable as exc:
            for _, fut in calls:  # an outage: every caller retries
                _fail(fut, exc)
            return
        except Exception as exc:  # the statement's data: find whose, one by one
            if len(calls) == 1:
                _fail(calls[0][1], exc)
                return
            for call in calls:
                await self._send([call])
            return
        for (_, fut), result in zip(calls, results, strict=True):
            if not fut.done():
                fut.set_result(result)


def _fail(fut: asyncio.Future[Any], exc: BaseException) -> None:
    if not fut.done():
        fut.set_exception(exc)


def _rounds(calls: list[tuple[I, asyncio.Future[R]]], key: Callable[[I], Hashable] | None) -> list[list[Any]]:
    """Split ``calls`` so that no round holds two calls of one key; each key's calls keep their order."""
    if key is None:
        return [calls]
    rounds: list[list[Any]] = []
    seen: dict[Hashable, int] = {}
    for call in calls:
        k = key(call[0])
        n = seen.get(k, 0)
        seen[k] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append(call)
    return rounds
