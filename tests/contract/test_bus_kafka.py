"""The bus contract on Apache Kafka (the broker from ops/kafka/start)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from shared.bus.base import Bus, TopicSpec, tp_of
from shared.bus.kafka import KafkaBus
from shared.bus.kafka_consumer import KafkaConsumer
from tests.contract.bus_contract import BusContract, drain, produce

pytestmark = pytest.mark.kafka


class TestKafkaBus(BusContract):
    @pytest.fixture
    async def bus(self, kafka_url: str) -> AsyncIterator[Bus]:
        b = KafkaBus(kafka_url, linger_ms=5)
        await b.start()
        yield b
        await b.close()

    async def test_lag_asks_the_group_once_for_a_partition_nobody_committed(self, bus: Bus, uid: str) -> None:
        # every lag reading (5 s) used to ask the coordinator again for each owned partition without a
        # commit (an OffsetFetch each: most retry-topic partitions never get one), ~0.3 requests per document
        t, g = f"lag-once-{uid}", f"g-{uid}"
        await self.make_topics(bus, t, partitions=1)
        await produce(bus, t, [("k", b"1")])
        c = await bus.consumer(g, [t])
        assert isinstance(c, KafkaConsumer)
        got = await drain(c, 1)
        tp = tp_of(got[0])
        asked = 0
        ask = c.raw.committed

        async def counted(k: Any) -> Any:
            nonlocal asked
            asked += 1
            return await ask(k)

        c.raw.committed = counted
        for _ in range(3):
            assert (await c.lag())[tp] == 1
        assert asked == 1
        await c.commit({tp: got[0].offset + 1})
        assert (await c.lag())[tp] == 0
        assert asked == 1  # our own commit is known without asking
        # a revoke forgets: the partition's next owner commits it, so what we knew goes stale
        await c.listener.on_partitions_revoked(list(c.raw.assignment()))
        assert (await c.lag())[tp] == 0
        assert asked == 2
        await c.stop()


#: an idle consumer's requests a second allowed: a heartbeat and a held fetch every 3 s, metadata every 30 s
#: (shared/bus/kafka.py); at 1 s, 500 ms and 5 s it sent 3.2 a second, and a process of nine cubes 35
IDLE_REQUESTS_PER_S = 1.2
#: how long the idle consumer is watched (a count over a span: a slow machine sends fewer, not more)
IDLE_SPAN_S = 9.0


async def test_an_idle_consumer_sends_about_a_request_a_second_at_most(
    kafka_url: str, uid: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aiokafka.conn import AIOKafkaConnection

    bus = KafkaBus(kafka_url)
    await bus.start()
    try:
        t = f"idle-{uid}"
        await bus.create_topics([TopicSpec(t, 3)])
        c = await bus.consumer(f"g-{uid}", [t])
        await produce(bus, t, [("k", b"1")])
        await drain(c, 1)  # joined, assigned, fetching
        sent: list[str] = []
        send = AIOKafkaConnection.send

        def counted(self: Any, request: Any, expect_response: bool = True) -> Any:
            sent.append(type(request).__name__)
            return send(self, request, expect_response)

        monkeypatch.setattr(AIOKafkaConnection, "send", counted)
        loop = asyncio.get_running_loop()
        start = loop.time()
        while loop.time() - start < IDLE_SPAN_S:
            assert await c.getmany(1.0, 100) == []  # an idle runner's polls
        span, requests = loop.time() - start, list(sent)
        await c.stop()
    finally:
        await bus.close()
    assert len(requests) / span <= IDLE_REQUESTS_PER_S, f"{len(requests)} requests in {span:.1f} s: {sorted(requests)}"


@pytest.mark.parametrize("codec", ["lz4", "zstd", "none"])
async def test_records_cross_the_broker_whole_with_each_codec(kafka_url: str, uid: str, codec: str) -> None:
    # bus.compression: what the producer compresses, the consumer reads back byte for byte
    bus = KafkaBus(kafka_url, compression=codec)
    await bus.start()
    try:
        t = f"codec-{codec}-{uid}"
        await bus.create_topics([TopicSpec(t, 2)])
        sent = [(f"k{i}", (f"record {i} " * (1 + i * 40)).encode()) for i in range(30)]
        await produce(bus, t, sent)
        c = await bus.consumer(f"g-{uid}", [t])
        got = await drain(c, len(sent))
        assert sorted((r.key, r.value) for r in got) == sorted((k.encode(), v) for k, v in sent)
        await c.stop()
    finally:
        await bus.close()
