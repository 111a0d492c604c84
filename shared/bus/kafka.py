"""The Apache Kafka engine: ``kafka://host:9092[,host2:9092]`` on aiokafka (docs/architecture.md section 4).

* Producer: idempotent, ``acks=all``, ``compression`` (``bus.compression``: zstd by default, see
  ``shared/config/sections.py`` for the figures; aiokafka's default gzip level costs ~20x the CPU
  per document here), ``linger_ms`` batching, each key's partition hashed once (``kafka_keys.py``).
  ``send`` returns the broker-acknowledgement future; the runtime awaits every
  one before it commits.
* Outages: the client's own errors begin a ``bus`` outage, told once, and a metadata
  probe ends it (``kafka_health.py``); the client's log is held back meanwhile.
* Consumer (``kafka_consumer.py``): manual commits only, earliest offset for a new
  group, one owner at a time on a rebalance.

No aiokafka type leaves this module and its two neighbours.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as KTP
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import (
    KafkaError,
    TopicAlreadyExistsError,
)

from shared.bus.base import Headers, Record, RevokeCallback, TopicSpec
from shared.bus.kafka_consumer import KafkaConsumer, record_of
from shared.bus.kafka_health import KafkaHealth, install_gate
from shared.bus.kafka_keys import KeyPartitioner
from shared.errors import BusUnavailable, ConfigError

__all__ = ["KafkaBus"]

#: several cubes of one process may fail at once: one producer reset serves them all
RESET_EVERY_S = 5.0
#: up to 1 MiB batches: a handler's outputs for one input batch usually fit one request
MAX_BATCH_BYTES = 1024 * 1024
#: largest record: bodies above 256 KB travel as blob references, so 4 MiB is ample headroom
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: What a consumer sends while it has nothing to do, each of a process's consumers (a cube each):
#: a heartbeat every HEARTBEAT_MS (a third of the 10 s session, as Kafka's own default; a rebalance
#: reaches a member at its next one), a fetch the broker holds for FETCH_WAIT_MS while no record comes
#: (it answers as soon as one does, so records wait for nothing; a partition resumed or sought while a
#: fetch is held is fetched when it returns), and fresh metadata every METADATA_MAX_AGE_MS (aiokafka
#: asks at once when a leader moves). At 1 s, 500 ms and 5 s, two processes of seven cubes sent 45
#: requests a second doing nothing, and the broker spent 92 ms of CPU a second answering them
HEARTBEAT_MS = 3_000
FETCH_WAIT_MS = 3_000
METADATA_MAX_AGE_MS = 30_000


def _servers(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme != "kafka" or not parts.netloc:
        raise ConfigError("bus.url", url, "kafka://HOST:PORT[,HOST:PORT...]")
    return parts.netloc


class KafkaBus:
    def __init__(
        self, url: str, *, linger_ms: int = 5, client_id: str = "turbocubes", compression: str = "zstd"
    ) -> None:
        self.url = url
        self.servers = _servers(url)
        q = parse_qs(urlsplit(url).query)
        self.replication = int(q.get("replication", ["1"])[0])
        #: ?prefix=env1. puts every topic and consumer group of this bus under a namespace
        #: (several environments on one cluster; tests on one shared broker)
        self.prefix = q.get("prefix", [""])[0]
        self.linger_ms = linger_ms
        self.client_id = client_id
        #: aiokafka's codec name; "none" sends batches as they are
        self.compression: str | None = None if compression == "none" else compression
        self._producer: KafkaProducer | None = None
        self._consumers: list[KafkaConsumer] = []
        #: the client ``end_offsets`` reads with (made at its first reading), and who may make it
        self._offsets: AIOKafkaConsumer | None = None
        self._offsets_lock = asyncio.Lock()
        #: the broker's reachability, from the client's own errors and a probe (``kafka_health.py``)
        self.health = KafkaHealth(self.servers, self._probe)
        self._ungate = install_gate(self.health)

    async def _probe(self) -> bool:
        """Whether the broker answers a metadata request now (the producer's client)."""
        if self._producer is None:
            return False
        return bool(await self._producer.raw.client.force_metadata_update())

    def _new_raw_producer(self) -> AIOKafkaProducer:
        return AIOKafkaProducer(
            bootstrap_servers=self.servers,
            client_id=self.client_id,
            enable_idempotence=True,
            acks="all",
            compression_type=self.compression,
            linger_ms=self.linger_ms,
            partitioner=KeyPartitioner(),
            max_batch_size=MAX_BATCH_BYTES,
            max_request_size=MAX_REQUEST_BYTES,
            request_timeout_ms=30_000,
        )

    async def start(self) -> None:
        if self._producer is None:
            raw = await _started(self._new_raw_producer(), self.servers)
            self._producer = KafkaProducer(raw, self.prefix, self._new_raw_producer)

    async def close(self) -> None:
        self._ungate()
        await self.health.close()
        for c in list(self._consumers):
            await c.stop()
        if self._offsets is not None:
            offsets, self._offsets = self._offsets, None
            await offsets.stop()
        if self._producer is not None:
            await self._producer.raw.stop()
            self._producer = None

    def producer(self) -> KafkaProducer:
        if self._producer is None:
            raise BusUnavailable("Kafka bus not started")
        return self._producer

    async def consumer(
        self, group: str, topics: Sequence[str], *, on_revoke: RevokeCallback | None = None
    ) -> KafkaConsumer:
        raw = AIOKafkaConsumer(
            bootstrap_servers=self.servers,
            client_id=self.client_id,
            group_id=self.prefix + group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            # fetch sizes stay at aiokafka's defaults (1 MiB per partition; the broker still returns
            # a larger single batch whole): 4 MiB / 64 MiB made a consume->produce loop ~3.8x slower
            session_timeout_ms=10_000,
            heartbeat_interval_ms=HEARTBEAT_MS,
            fetch_max_wait_ms=FETCH_WAIT_MS,
            # a batch may take a while (crawls); the runtime bounds handler time separately
            max_poll_interval_ms=300_000,
            metadata_max_age_ms=METADATA_MAX_AGE_MS,
        )
        consumer = KafkaConsumer(raw, group, on_revoke, self.prefix)
        raw.subscribe([self.prefix + t for t in topics], listener=consumer.listener)
        await _started(raw, self.servers)
        self._consumers.append(consumer)
        consumer._on_stop = lambda: self._consumers.remove(consumer) if consumer in self._consumers else None
        return consumer

    async def _admin(self) -> AIOKafkaAdminClient:
        admin = AIOKafkaAdminClient(bootstrap_servers=self.servers, client_id=self.client_id)
        started: AIOKafkaAdminClient = await _started(admin, self.servers)
        return started

    async def create_topics(self, specs: Sequence[TopicSpec]) -> list[str]:
        admin = await self._admin()
        try:
            existing = set(await admin.list_topics())
            todo = []
            for s in specs:
                name = self.prefix + s.name
                if name in existing:
                    continue
                cfg: dict[str, str] = {"cleanup.policy": "compact" if s.compact else "delete"}
                if s.retention_ms is not None:
                    cfg["retention.ms"] = str(s.retention_ms)
                todo.append(NewTopic(name, s.partitions, self.replication, topic_configs=cfg))
            created = []
            for nt in todo:
                try:
                    await admin.create_topics([nt])
                    created.append(nt.name[len(self.prefix) :])
                except TopicAlreadyExistsError:
                    pass
            return created
        finally:
            await admin.close()

    async def _plain_consumer(self) -> AIOKafkaConsumer:
        c = AIOKafkaConsumer(bootstrap_servers=self.servers, client_id=self.client_id, enable_auto_commit=False)
        started: AIOKafkaConsumer = await _started(c, self.servers)
        return started

    async def end_offsets(self, topic: str) -> dict[int, int]:
        """One ListOffsets request on a client kept for it (``_offsets_client``)."""
        topic = self.prefix + topic
        c = await self._offsets_client()
        parts = c.partitions_for_topic(topic)
        if parts is None:  # a topic this client has not seen yet (made since its last metadata)
            await c._client.force_metadata_update()
            parts = c.partitions_for_topic(topic) or set()
        ends = await c.end_offsets([KTP(topic, p) for p in parts]) if parts else {}
        return {k.partition: int(v) for k, v in ends.items()}

    async def _offsets_client(self) -> AIOKafkaConsumer:
        """The client that reads end offsets, started once: a client per reading cost a connection, its
        handshake and two metadata requests each time, and every process reads the dead-letter topics'
        ends every status round (``shared/status.py``): most of an idle process's Kafka requests."""
        async with self._offsets_lock:
            if self._offsets is None:
                self._offsets = await self._plain_consumer()
            return self._offsets

    async def partitioner(self, topic: str) -> Callable[[bytes], int]:
        try:
            parts = sorted(await self.producer().raw.partitions_for(self.prefix + topic))
        except KafkaError as exc:
            raise BusUnavailable(f"Kafka at {self.servers}: {exc}") from exc
        # the producer's own rule (murmur2, the Java client's), so the answer is where our producers
        # put the key
        place = KeyPartitioner()
        return lambda key: int(place(key, parts, parts))

    async def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        admin = await self._admin()
        try:
            got = await admin.list_consumer_group_offsets(self.prefix + group)
            name = self.prefix + topic
            return {k.partition: int(v.offset) for k, v in got.items() if k.topic == name and v.offset >= 0}
        finally:
            await admin.close()

    async def read(self, topic: str, partition: int, offset: int, limit: int) -> list[Record]:
        c = await self._plain_consumer()
        try:
            ktp = KTP(self.prefix + topic, partition)
            c.assign([ktp])
            c.seek(ktp, offset)
            end = (await c.end_offsets([ktp]))[ktp]
            out: list[Record] = []
            while len(out) < limit and (await c.position(ktp)) < end:
                got = await c.getmany(ktp, timeout_ms=2000, max_records=limit - len(out))
                batch = got.get(ktp, [])
                if not batch:
                    break
                out += [record_of(m, self.prefix) for m in batch]
            return out
        finally:
            await c.stop()


async def _started(raw: Any, servers: str) -> Any:
    """``raw.start()`` (a producer, consumer or admin client), or ``raw`` stopped again.

    A start that fails *or is cancelled* half-way has connections open already: without the
    stop they leak, and warn (ResourceWarning) when collected -- a status reader cancelled at
    shutdown while it opened its consumer did that. The stop runs even when the
    start was cancelled; the cancellation goes on after it.
    """
    try:
        await raw.start()
    except BaseException as exc:
        with contextlib.suppress(Exception):
            await (raw.close() if isinstance(raw, AIOKafkaAdminClient) else raw.stop())
        if isinstance(exc, KafkaError):
            raise BusUnavailable(f"Kafka at {servers}: {exc}") from exc
        raise
    return raw


class KafkaProducer:
    def __init__(
        self, raw: AIOKafkaProducer, prefix: str = "", factory: Callable[[], AIOKafkaProducer] | None = None
    ) -> None:
        self.raw = raw
        self.prefix = prefix
        self._factory = factory
        self._reset_lock = asyncio.Lock()
        self._reset_at = 0.0

    async def reset(self) -> None:
        """Replace the underlying producer after a delivery failure.

        After a broker restart an idempotent producer can be left with sequence numbers the
        broker no longer accepts (``OutOfOrderSequenceNumber`` on every send, for good): a new
        producer gets a new producer id. Everyone holding this object keeps using it, so every
        cube of a process recovers at once; resets within a few seconds of each other are one.
        """
        if self._factory is None:
            return
        async with self._reset_lock:
            if time.monotonic() - self._reset_at < RESET_EVERY_S:
                return
            old = self.raw
            self.raw = await _started(self._factory(), "the broker")
            self._reset_at = time.monotonic()
            with contextlib.suppress(Exception):
                await old.stop()

    def send(
        self, topic: str, value: bytes, *, key: bytes | None = None, headers: Headers = ()
    ) -> Coroutine[Any, Any, asyncio.Future[Any]]:
        # aiokafka's own coroutine and future are handed through (its RecordMetadata has
        # .partition and .offset): a wrapper frame and a second future cost ~10 % of a
        # pass-through message. Its KafkaErrors are mapped to BusUnavailable by the runtime.
        coro: Coroutine[Any, Any, asyncio.Future[Any]] = self.raw.send(
            self.prefix + topic if self.prefix else topic, value, key=key, headers=list(headers) if headers else None
        )
        return coro

    async def send_batch(self, records: Sequence[tuple[str, bytes | None, bytes, Headers]]) -> asyncio.Future[Any]:
        """Each record sent as ``send`` does (aiokafka batches them itself); one future for them all."""
        futs = [await self.send(topic, value, key=key, headers=headers) for topic, key, value, headers in records]
        return asyncio.gather(*futs)

    async def flush(self) -> None:
        await self.raw.flush()
