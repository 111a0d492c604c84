"""``turbocubes dlq list|replay TOPIC``: the operator's view of dead letters.

``TOPIC`` is a catalog topic (``schemas/topics.toml``) or its ``.dlq``; anything else is
refused as unknown, with the catalog's names (``dlq list bogus.topic`` once answered
"0 dead letters", as if a typo were an empty queue).
"""

from __future__ import annotations

import functools
import sys

from shared.bus import open_configured
from shared.bus.base import Record, header
from shared.clock import at
from shared.config import Settings
from shared.contracts import DLQ_SUFFIX, catalog
from shared.runtime.dlq import dead_letters, replay
from shared.runtime.headers import HEADERS

__all__ = ["list_dead_letters", "replay_dead_letters"]


def _header_text(record: Record, name: str) -> str:
    v = header(record.headers, name)
    return v.decode("utf-8", "replace") if v is not None else "-"


def _unknown(topic: str) -> bool:
    """True (and says so) when ``topic`` is neither a catalog topic nor one's dead-letter queue."""
    names = catalog()
    if topic.removesuffix(DLQ_SUFFIX) in names:
        return False
    print(
        f"turbocubes: no such topic {topic!r}; dead letters are kept for: {', '.join(sorted(names))}", file=sys.stderr
    )
    return True


async def list_dead_letters(settings: Settings, topic: str, limit: int) -> int:
    if _unknown(topic):
        return 2
    bus = open_configured(settings.bus)
    await bus.start()
    try:
        records = await dead_letters(bus, topic, limit)
    finally:
        await bus.close()
    for r in records:
        h = functools.partial(_header_text, r)
        when = at(r.timestamp_ms / 1000).isoformat(timespec="seconds")
        key = r.key.decode("utf-8", "replace") if r.key else "-"
        print(
            f"{r.topic}:{r.partition}:{r.offset} {when} key={key} from={h(HEADERS.origin_topic)}:"
            f"{h(HEADERS.origin_partition)}:{h(HEADERS.origin_offset)} group={h(HEADERS.group)} "
            f"attempts={h(HEADERS.attempt)} {h(HEADERS.error_class)}: {h(HEADERS.error)}"
        )
    print(f"{len(records)} dead letter(s)")
    return 0


async def replay_dead_letters(settings: Settings, topic: str, limit: int) -> int:
    if _unknown(topic):
        return 2
    bus = open_configured(settings.bus)
    await bus.start()
    try:
        n = await replay(bus, topic, limit)
    finally:
        await bus.close()
    print(f"replayed {n} dead letter(s) of {topic}")
    return 0
