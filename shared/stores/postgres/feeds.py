"""PostgreSQL feed store: the scheduler's per-fetch read and write batched per loop turn (docs/architecture.md s.4).

The scheduler learns from every fetch of a feed: it reads the feed (``get``), places its next due
time among its host's (``host_due_times``) and writes its schedule (``update_schedule``), about
3.4 round trips a fetch result, each its own statement. A fleet of 1M feeds polled every 15 min
is ~1,100 fetch results a second (docs/capacity.md). Here the reads of one loop turn are one
``= ANY`` query and the schedule writes one ``UPDATE … FROM unnest(…)`` per set of fields written
(``batch.py``: calls for the same feed go in separate statements, in order; a failing statement
fails only its caller). Every set of fields goes through ONE batch, so the order holds across them
too: a fetch's write and a later write of other fields to the same feed (a removal's, the same
turn's second result) never run on two connections at once, where the later could commit first
and the earlier overwrite it. The rest is ``sql/feeds.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import asyncpg

from shared.errors import NotFound
from shared.stores.feeds import SCHEDULE_FIELDS, Feed
from shared.stores.postgres.batch import TurnBatch
from shared.stores.postgres.db import PgDb, unnest_columns
from shared.stores.sql.feeds import FEED_COLUMNS, SqlFeedStore, feed_from_row, update_values

__all__ = ["SCHEDULE_TYPES", "PgFeedStore"]

#: the PostgreSQL type of each schedule field's column (migrations.py; a contract test compares
#: them with the table), for the arrays an ``unnest`` update takes
SCHEDULE_TYPES: dict[str, str] = {
    "last_fetch_at": "bigint",
    "last_http_status": "bigint",
    "fetch_result": "text",
    "fetch_error": "text",
    "etag": "text",
    "last_modified": "text",
    "last_hash": "text",
    "next_fetch_at": "bigint",
    "interval_s": "double precision",
    "consecutive_failures": "bigint",
    "schedule_reason": "text",
    "declared_schedule": "text",
    "schedule_partition": "bigint",
    "websub_hub": "text",
    "websub_topic": "text",
    "websub_secret": "text",
    "websub_expires_at": "bigint",
}
assert set(SCHEDULE_TYPES) == SCHEDULE_FIELDS, "every schedule field needs its column type"

_GET = f"SELECT {FEED_COLUMNS} FROM feeds WHERE feed_id = ANY($1::text[])"

#: the fields written, the feed, then the values of those fields
_Write = tuple[tuple[str, ...], str, tuple[Any, ...]]


def _feed_id(item: _Write) -> str:
    return item[1]


async def _write_schedules(conn: asyncpg.Connection, items: Sequence[_Write]) -> list[bool]:
    """One ``UPDATE`` per set of fields among ``items`` (each feed at most once: ``TurnBatch`` rounds),
    in one transaction when there are several; each item: did its feed exist."""
    kinds: dict[tuple[str, ...], list[_Write]] = {}
    for item in items:
        kinds.setdefault(item[0], []).append(item)
    written: set[str] = set()

    async def run() -> None:
        for kind, writes in kinds.items():
            rows = [(feed_id, *values) for _, feed_id, values in writes]
            written.update(
                r[0] for r in await conn.fetch(_update_statement(kind), *unnest_columns(rows, len(kind) + 1))
            )

    if len(kinds) == 1:
        await run()  # one statement is its own transaction
    else:
        async with conn.transaction():
            await run()
    return [item[1] in written for item in items]


@functools.cache  # a few sets of fields: the scheduler writes a fetch's, a removal's, ...
def _update_statement(names: tuple[str, ...]) -> str:
    arrays = ", ".join(f"${i + 2}::{SCHEDULE_TYPES[n]}[]" for i, n in enumerate(names))
    sets = ", ".join(f"{n} = u.{n}" for n in names)
    return (
        f"UPDATE feeds AS f SET {sets} FROM unnest($1::text[], {arrays}) AS u(feed_id, {', '.join(names)})"
        " WHERE f.feed_id = u.feed_id RETURNING f.feed_id"
    )


async def _get_many(conn: asyncpg.Connection, ids: Sequence[str]) -> list[Feed | None]:
    """One query for the feeds of every caller; each gets its own (None: no such feed)."""
    found = {row[0]: feed_from_row(row) for row in await conn.fetch(_GET, list(dict.fromkeys(ids)))}
    return [found.get(feed_id) for feed_id in ids]


class PgFeedStore(SqlFeedStore):
    """``get`` and ``update_schedule`` of one loop turn as one statement each; the rest is ``SqlFeedStore``."""

    def __init__(self, db: PgDb) -> None:
        super().__init__(db)
        self._get = TurnBatch(db.connection, _get_many, db.inflight)
        #: every schedule write, whatever its fields (one statement per set of fields in a round)
        self._writes: TurnBatch[_Write, bool] = TurnBatch(db.connection, _write_schedules, db.inflight, key=_feed_id)

    async def get(self, feed_id: str) -> Feed | None:
        return await self._get(feed_id)

    async def update_schedule(self, feed_id: str, **fields: Any) -> None:
        names, values = update_values(SCHEDULE_FIELDS, "update_schedule", fields)
        if not names:
            return
        if not await self._writes((tuple(names), feed_id, tuple(values))):
            raise NotFound(f"feed {feed_id!r} does not exist")
