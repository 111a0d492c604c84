"""Dead-letter tools: list and replay ``<topic>.dlq`` (``turbocubes dlq list|replay``)."""

from __future__ import annotations

import asyncio

from shared.bus.base import Bus, Record, header, tp_of
from shared.contracts import DLQ_SUFFIX
from shared.runtime.headers import HEADERS

__all__ = ["dead_letters", "replay"]


def _dlq(topic: str) -> str:
    return topic if topic.endswith(DLQ_SUFFIX) else topic + DLQ_SUFFIX


async def dead_letters(bus: Bus, topic: str, limit: int) -> list[Record]:
    """Every dead letter of ``topic`` still retained, up to ``limit``, partition by partition."""
    name = _dlq(topic)
    out: list[Record] = []
    for partition in sorted(await bus.end_offsets(name)):
        offset = 0
        while len(out) < limit:
            got = await bus.read(name, partition, offset, min(500, limit - len(out)))
            if not got:
                break
            out += got
            offset = got[-1].offset + 1
    return out


async def replay(bus: Bus, topic: str, limit: int, *, group: str = "dlq-replay") -> int:
    """Re-publish dead letters to their original topic, once: progress is a consumer group's commit.

    The records keep their key and value; the runtime's failure headers are dropped
    so the message starts again at attempt 1.
    """
    name = _dlq(topic)
    consumer = await bus.consumer(group, [name])
    producer = bus.producer()
    sent = 0
    try:
        while sent < limit:
            records = await consumer.getmany(1.0, min(500, limit - sent))
            if not records:
                break
            futs = []
            commits = {}
            for r in records:
                origin = (header(r.headers, HEADERS.origin_topic) or name[: -len(DLQ_SUFFIX)].encode()).decode()
                headers = tuple((k, v) for k, v in r.headers if k not in HEADERS.ALL)
                futs.append(await producer.send(origin, r.value, key=r.key, headers=headers))
                commits[tp_of(r)] = r.offset + 1
            await producer.flush()
            await asyncio.gather(*futs)
            await consumer.commit(commits)
            sent += len(records)
    finally:
        await consumer.stop()
    return sent
