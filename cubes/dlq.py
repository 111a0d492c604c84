"""``turbocubes dlq list|replay TOPIC``: the operator's view of dead letters."""

from __future__ import annotations

import functools
from datetime import UTC, datetime

from shared.bus import open_bus
from shared.bus.base import Record
from shared.config import Settings
from shared.runtime.dlq import dead_letters, replay
from shared.runtime.headers import HEADERS

__all__ = ["list_dead_letters", "replay_dead_letters"]


def _header_text(record: Record, name: str) -> str:
    v = record.header(name)
    return v.decode("utf-8", "replace") if v is not None else "-"


async def list_dead_letters(settings: Settings, topic: str, limit: int) -> int:
    bus = open_bus(settings.bus.url)
    await bus.start()
    try:
        records = await dead_letters(bus, topic, limit)
    finally:
        await bus.close()
    for r in records:
        h = functools.partial(_header_text, r)
        when = datetime.fromtimestamp(r.timestamp_ms / 1000, UTC).isoformat(timespec="seconds")
        key = r.key.decode("utf-8", "replace") if r.key else "-"
        print(
            f"{r.topic}:{r.partition}:{r.offset} {when} key={key} from={h(HEADERS.origin_topic)}:"
            f"{h(HEADERS.origin_partition)}:{h(HEADERS.origin_offset)} group={h(HEADERS.group)} "
            f"attempts={h(HEADERS.attempt)} {h(HEADERS.error_class)}: {h(HEADERS.error)}"
        )
    print(f"{len(records)} dead letter(s)")
    return 0


async def replay_dead_letters(settings: Settings, topic: str, limit: int) -> int:
    bus = open_bus(settings.bus.url)
    await bus.start()
    try:
        n = await replay(bus, topic, limit)
    finally:
        await bus.close()
    print(f"replayed {n} dead letter(s) of {topic}")
    return 0
