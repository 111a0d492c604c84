"""How a cube is declared (docs/conventions.md rules 1-3; docs/architecture.md section 3; docs/adding-a-cube.md).

A cube package has ``cube.py``, which declares the cube once, and a ``handler.py``
with plain async code that never touches the bus::

    CUBE = Cube(
        name="parser",
        inputs=("crawl.feeds", "partner.uploads"),
        outputs=("documents.parsed", "documents.deleted"),
        replicable=True,
    )

    async def build(settings: Settings, deps: Deps) -> Cube:
        handler = ParserHandler((await deps.stores()).hashes, settings.parser)
        return replace(CUBE, handler=handler.handle)

The declaration is what the registry, the workers and the tests read without
building anything (which topics, whether it may run in several processes);
``build`` adds what runs and changes none of it (``cubes/registry.py`` checks).
Each topic's message model is the catalog's (``schemas/topics.toml``).

A handler takes the validated message and a ``Context`` and returns the
``Output``s to publish. The runtime publishes them, awaits every broker
acknowledgement, and only then commits the input. To refuse a message the
handler raises ``shared.errors.Reject(reason)`` (-> DLQ at once); a
``TransientError`` (or any other exception) is retried with backoff.

Cubes without inputs (api, frontend) declare ``services``: long-running
coroutines started and stopped with the cube. ``timers`` run periodically
(the delay cube's sweep, the scheduler's tick) and are written like handlers:
a timer takes a ``TimerContext`` and returns its ``Output``s, which the runtime
publishes and waits for (``timers.py``); state that may go only once they are
durable goes in ``after_commit``, and what assumed they would be goes back in
``on_failure``. Neither a handler nor a timer touches the bus; only the HTTP
services publish themselves (``Deps.publish``), since a request is their input.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from shared.bus.base import Consumed, TopicPartition
from shared.messages import Message

__all__ = ["Context", "Cube", "Handler", "Hook", "Output", "Service", "Timer", "TimerContext", "TimerFn"]

#: something to run once, later: after the outputs are durable, or after they failed
Hook = Callable[[], Awaitable[None]]


@dataclass(slots=True)  # one per published message: not frozen (a frozen __init__ costs ~3x)
class Output:
    """One message to publish. ``key`` defaults to the topic's key field of the message."""

    topic: str
    message: Message
    key: str | None = None
    headers: tuple[tuple[str, bytes], ...] = ()


@dataclass(slots=True)
class _Outputs:
    """What handlers and timers share: hooks after their outputs are durable, and ``emit``."""

    #: hooks to run once the outputs are acknowledged (and, for a message, its offset committed)
    committed_hooks: list[Hook] | None = field(default=None, kw_only=True)
    #: the runtime's way to publish part of the outputs early (``emit``); None outside a runner
    emitter: Callable[[Sequence[Output]], Awaitable[int]] | None = field(default=None, kw_only=True)
    #: the runtime's ear for ``progress``; None outside a runner (and for timers)
    progressed: Callable[[], None] | None = field(default=None, kw_only=True)

    def progress(self) -> None:
        """Say that the work is getting on (a batch of a catalog done): the handler's time limit
        (``runtime.handler_timeout_s``, or its cube's) counts from now. A handler whose work grows
        with its message says so after each step, and is then cut off only when a step takes longer
        than the limit, never for its total (``watchdog.py``). ``emit`` says it too."""
        if self.progressed is not None:
            self.progressed()

    def after_commit(self, hook: Hook) -> None:
        """Run ``hook`` after the outputs are durable (and, for a message, the input is committed).

        For state that may only be dropped once the work it stands for is safely
        published (the delay store releases a parked document this way). A hook that
        never runs (a crash in between) must be harmless: a message is delivered again,
        a timer's next round finds the work still to do.
        """
        if self.committed_hooks is None:
            self.committed_hooks = []
        self.committed_hooks.append(hook)

    @property
    def can_emit(self) -> bool:
        return self.emitter is not None

    async def emit(self, outputs: Sequence[Output]) -> None:
        """Publish ``outputs`` now and return once the broker has acknowledged every one of them.

        For work whose outputs grow with its input (the first load of a shop's catalog of a
        million offers) or that must know them durable before it goes on (the scheduler leases
        a feed only once its request is out): it emits them a batch at a time instead of
        returning them all at once, so its memory stays bounded. A message's input is still
        committed only after the handler returns and its returned outputs are acknowledged; a
        crash in between delivers the input again and the emitted outputs go out again
        (at-least-once, as for returned ones). So what a handler records as done *after* an
        ``emit`` returns (the offers' hashes) must be what makes the redelivery skip them: then a
        crash resumes instead of starting over. Validation and errors are those of returned
        outputs (``PublishContractError``; ``BusUnavailable`` is an outage). Only with
        ``can_emit`` (a runner); elsewhere return the outputs.
        """
        if self.emitter is None:
            raise RuntimeError("emit needs a runner; return the outputs instead (see can_emit)")
        await self.emitter(outputs)
        self.progress()


@dataclass(slots=True)  # built once per message: not frozen, which costs ~3x in __init__
class Context(_Outputs):
    """Where the message being handled came from, and what its commit waits for besides its outputs."""

    topic: str
    partition: int
    offset: int
    key: str | None
    #: 1 on the first delivery; grows with each retry (carried in headers, survives restarts)
    attempt: int
    received_at: datetime
    headers: Sequence[tuple[str, bytes]] = ()
    #: what the input's commit waits for besides the outputs (``commit_after``)
    commit_waits: list[asyncio.Future[Any]] | None = field(default=None, kw_only=True)

    def commit_after(self, durable: asyncio.Future[Any]) -> None:
        """Commit the input only once ``durable`` is done; if it fails, the input is read again.

        For a handler that hands its work to something that makes it durable later, for
        many messages at once (the wordstat cube sums thousands of searches in memory and
        writes them in one transaction): the handler returns at once, its lane goes on, and
        the commit round waits for ``durable`` as it waits for the outputs' acknowledgements
        (``commits.py``, step 2). A failure of ``durable`` fails the round like a bus failure:
        the runner reads again from the last commits, so the work must be idempotent (the
        wordstat store counts an event id once). A crash before ``durable`` is done loses
        nothing: the input was not committed.
        """
        if self.commit_waits is None:
            self.commit_waits = []
        self.commit_waits.append(durable)


Handler = Callable[[Any, Context], Awaitable[Sequence[Output]]]


@dataclass(slots=True)
class TimerContext(_Outputs):
    """One round of a timer: ``after_commit`` and ``emit`` as a handler's, and ``on_failure``.

    A timer has no input to read again when its outputs are lost, so what it
    changed on the assumption that they would go out (the scheduler moves a feed's
    next fetch ahead before it emits it) is put back by an ``on_failure`` hook: run
    when the round fails, its own code or the publish of its outputs.
    """

    timer: str
    failed_hooks: list[Hook] | None = field(default=None, kw_only=True)

    def on_failure(self, hook: Hook) -> None:
        if self.failed_hooks is None:
            self.failed_hooks = []
        self.failed_hooks.append(hook)


TimerFn = Callable[[TimerContext], Awaitable[Sequence[Output]]]


@dataclass(frozen=True, slots=True)
class Timer:
    """A periodic task of a cube. Its outputs are published like a handler's (``timers.py``)."""

    name: str
    interval_s: float
    fn: TimerFn


@dataclass(frozen=True, slots=True)
class Service:
    """A long-running part of a cube (an HTTP server). ``start`` returns once it serves; ``stop`` ends it."""

    name: str
    start: Callable[[], Awaitable[None]]
    stop: Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Cube:
    name: str
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    handler: Handler | None = None
    #: concurrent key-lanes; None = settings.runtime.concurrency
    concurrency: int | None = None
    #: "hashed": a key's lane is hash(key) % concurrency — cheapest per message, but keys that share
    #: a lane wait for each other; "per_key": every distinct key gets its own lane (at most
    #: `concurrency` handlers run at once) — for handlers that wait per key, like the crawler's
    #: per-host politeness, where a host sharing a lane with another would run at half its rate
    lanes: Literal["hashed", "per_key"] = "hashed"
    #: per_key lanes whose records need no order among themselves: how many of one key's records
    #: (the key's bytes) may run at once; None = one at a time, in order (the crawler: the host
    #: lane's concurrency cap, which its own lane enforces; one worker per host never reached it)
    key_width: Callable[[bytes | None], int] | None = None
    #: wide lanes (``key_width``): the class of a record (the crawler: its request's kind); one
    #: key's classes take turns, so a few records of one class never wait behind thousands of
    #: another's (shared/runtime/rotation.py). None: one class, arrival order
    key_class: Callable[[Consumed], Hashable] | None = None
    timers: tuple[Timer, ...] = ()
    services: tuple[Service, ...] = ()
    on_start: Callable[[], Awaitable[None]] | None = None
    on_stop: Callable[[], Awaitable[None]] | None = None
    #: given, once the consumer has joined, the function that tells which input partitions this
    #: process holds right now (the scheduler ticks only the feeds of the hosts in its partitions)
    on_assignment: Callable[[Callable[[], set[TopicPartition]]], None] | None = None
    #: free-form facts for the status page (e.g. the crawler's lanes)
    status: Callable[[], dict[str, Any]] | None = field(default=None)
    #: this cube's handler timeout; None = settings.runtime.handler_timeout_s (for handlers whose
    #: time grows with the message, like the parser's first load of a big catalog)
    handler_timeout_s: float | None = None
    #: several processes may run it at once, members of its consumer group that split its
    #: partitions (``up --workers``, replicas in docker-compose): true when the bus and the stores
    #: are its only shared state. Not so for a cube that binds a port (api, frontend), nor for one
    #: with no partitions to split (the indexer: a timer that drains one queue in the store)
    replicable: bool = False
