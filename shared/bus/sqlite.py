"""The embedded durable log, as a Bus: ``sqlite:///var/bus.db`` (docs/architecture.md section 4).

A small Kafka on one SQLite file, for laptops, the demo and unit tests. Its parts, one concept
a module:

* ``sqlite_log.py`` — the file: schema, connections (inline on the event loop, a worker thread
  when the lock is taken), topics and records;
* ``sqlite_producer.py`` — sends gathered for ``linger_ms`` into one transaction, each future
  resolved after it commits;
* ``sqlite_consumer.py`` — consumer groups: partitions split among live members by lease,
  committed offsets that survive restarts.

This module is the ``Bus`` protocol on them: it opens the file, hands out the one producer and
the consumers, and closes them all in order (consumers stop, the producer flushes, the file
closes).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from shared.bus.base import Record, RevokeCallback, TopicSpec
from shared.bus.sqlite_consumer import SqliteConsumer
from shared.bus.sqlite_log import EmbeddedLog, partition_for
from shared.bus.sqlite_producer import SqliteProducer

__all__ = ["SqliteBus"]


class SqliteBus(EmbeddedLog):
    """The embedded log. ``sqlite:///relative/path.db``, ``sqlite:////abs/path.db``;
    query options: ``partitions`` (default for auto-created topics), ``sync`` (normal|full)."""

    def __init__(self, url: str, *, linger_ms: int = 5) -> None:
        super().__init__(url, linger_ms=linger_ms)
        self._producer: SqliteProducer | None = None
        self._consumers: list[SqliteConsumer] = []

    async def close(self) -> None:
        if self._closed:
            return
        for c in list(self._consumers):
            await c.stop()
        if self._producer is not None:
            await self._producer.flush()
        await self._close_file()

    async def create_topics(self, specs: Sequence[TopicSpec]) -> list[str]:
        await self.start()
        return list(await self._call(self._create_topics, list(specs)))

    def producer(self) -> SqliteProducer:
        if self._producer is None:
            self._producer = SqliteProducer(self)
        return self._producer

    async def consumer(
        self, group: str, topics: Sequence[str], *, on_revoke: RevokeCallback | None = None
    ) -> SqliteConsumer:
        await self.start()
        for t in topics:
            await self._call(self._partitions_of, t)
        c = SqliteConsumer(self, group, list(topics), on_revoke, self._forget)
        await c.join()
        self._consumers.append(c)
        return c

    def _forget(self, consumer: SqliteConsumer) -> None:
        if consumer in self._consumers:
            self._consumers.remove(consumer)

    async def read(self, topic: str, partition: int, offset: int, limit: int) -> list[Record]:
        await self.start()
        return list(await self._call(self._read, topic, partition, offset, limit))

    async def partitioner(self, topic: str) -> Callable[[bytes], int]:
        await self.start()
        n = int(await self._call(self._partitions_of, topic))
        rr = itertools.count()  # unused: a key is always given
        return lambda key: partition_for(key, n, rr)
