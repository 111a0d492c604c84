"""The bus interface (docs/architecture.md section 4): one Protocol, engines chosen by URL scheme.

Semantics every engine keeps (the contract suite in tests/contract checks them):

* ``Producer.send`` appends one record and returns a future that resolves
  when the record is durable (Kafka: acknowledged by all in-sync replicas;
  embedded log: committed to the SQLite file). Records with one key land in
  one partition, in send order.
* A ``Consumer`` joins a consumer group; partitions of its topics are split
  among the group's live members. Each group sees every record (one fetch
  feeds several services). ``commit`` stores, per partition, the offset of the
  *next* record to read; a member that joins or restarts resumes there, so a
  record handled but not committed is delivered again (at-least-once).
* ``pause``/``resume`` stop and restart fetching from given partitions without
  leaving the group.
* ``lag`` gives, per assigned partition, how many records are behind the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

__all__ = [
    "Bus",
    "Consumed",
    "Consumer",
    "Delivered",
    "Headers",
    "Producer",
    "Record",
    "TopicPartition",
    "TopicSpec",
    "header",
    "tp_of",
]

Headers = tuple[tuple[str, bytes], ...]


class TopicPartition(NamedTuple):
    """A tuple, not a dataclass: it is hashed on every poll and commit, and a tuple hashes in C."""

    topic: str
    partition: int


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs ~3x, once per record
class Record:
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    headers: Headers = ()
    timestamp_ms: int = 0

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


class Consumed(Protocol):
    """What ``Consumer.getmany`` yields: a ``Record``, or an engine's own record with the same
    attributes (the Kafka engine hands aiokafka's records through instead of copying them)."""

    @property
    def topic(self) -> str: ...
    @property
    def partition(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes: ...
    @property
    def headers(self) -> Sequence[tuple[str, bytes]]: ...


def header(headers: Sequence[tuple[str, bytes]], name: str) -> bytes | None:
    """The first of ``headers`` called ``name``, or None: the one header look-up (a record's, a message's)."""
    for k, v in headers:
        if k == name:
            return v
    return None


def tp_of(record: Consumed) -> TopicPartition:
    return TopicPartition(record.topic, record.partition)


class Delivered(NamedTuple):
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: int
    compact: bool = False
    retention_ms: int | None = None


#: called with the partitions a consumer is about to lose; awaited before they go
RevokeCallback = Callable[[set[TopicPartition]], Awaitable[None]]


class Producer(Protocol):
    async def send(
        self, topic: str, value: bytes, *, key: bytes | None = None, headers: Headers = ()
    ) -> asyncio.Future[Any]:
        """Queue one record; the future resolves once it is durable, to an object with
        ``.partition`` and ``.offset`` (a ``Delivered``, or the engine's own metadata)."""
        ...

    async def send_batch(self, records: Sequence[tuple[str, bytes | None, bytes, Headers]]) -> asyncio.Future[Any]:
        """Queue ``records`` (topic, key, value, headers) in order; one future that resolves once every
        one of them is durable (the embedded log: one transaction for them all)."""
        ...

    async def flush(self) -> None:
        """Wait until every record sent so far is durable."""
        ...

    async def reset(self) -> None:
        """Start again after a delivery failure that may break later sends for good (Kafka: an idempotent
        producer left with sequence numbers a restarted broker refuses); engines with nothing to reset
        do nothing."""
        ...


class Consumer(Protocol):
    async def getmany(self, timeout_s: float, max_records: int) -> Sequence[Consumed]:
        """Records from the assigned, unpaused partitions; [] after ``timeout_s`` with none (or
        sooner, after ``wakeup``)."""
        ...

    def wakeup(self) -> None:
        """End a ``getmany`` in progress now, with nothing (a runner that stops does not wait out an
        idle poll). Losing nothing: whatever it had not returned is read by the next one."""
        ...

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        """Store, per partition, the offset of the next record to read."""
        ...

    async def committed(self, tp: TopicPartition) -> int | None: ...

    def assignment(self) -> set[TopicPartition]: ...

    def pause(self, tps: Sequence[TopicPartition]) -> None: ...

    def resume(self, tps: Sequence[TopicPartition]) -> None: ...

    async def seek(self, tp: TopicPartition, offset: int) -> None:
        """Read ``tp`` from ``offset`` on (used to re-read records that were not committed)."""
        ...

    async def lag(self) -> dict[TopicPartition, int]: ...

    async def stop(self) -> None:
        """Leave the group (without committing anything not yet committed)."""
        ...


class Bus(Protocol):
    url: str

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def producer(self) -> Producer:
        """The process's shared producer (started with the bus)."""
        ...

    async def consumer(
        self,
        group: str,
        topics: Sequence[str],
        *,
        on_revoke: RevokeCallback | None = None,
    ) -> Consumer:
        """Join ``group`` on ``topics``; a group with no committed offset starts at the beginning."""
        ...

    async def create_topics(self, specs: Sequence[TopicSpec]) -> list[str]:
        """Create the topics that do not exist yet; returns the names created."""
        ...

    async def end_offsets(self, topic: str) -> dict[int, int]:
        """Per partition of ``topic``: the offset the next record will get."""
        ...

    async def partitioner(self, topic: str) -> Callable[[bytes], int]:
        """``key -> partition`` for ``topic`` as this engine places keyed records (its own hash over the
        topic's partitions now): who owns a key can be known without a record of it (the scheduler
        owns the hosts of its ``crawl.feeds`` partitions)."""
        ...

    async def read(self, topic: str, partition: int, offset: int, limit: int) -> list[Record]:
        """Read records without a group (DLQ listing, tests)."""
        ...
