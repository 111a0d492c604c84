"""The feed store, written once for both engines (docs/architecture.md sections 3 and 4).

It sees a few writes per second at most, so it is plain SQL over the
``SqlRunner``: each method is one statement, or a read followed by one
guarded statement, so no transaction spans an ``await``.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import orjson

from shared.errors import NotFound
from shared.notify.events import EventKind
from shared.stores.codec import dumps, from_us, now_us, to_us
from shared.stores.feeds import AUTOPARSER_FIELDS, PARSE_FIELDS, SCHEDULE_FIELDS, Feed, FeedStatus
from shared.stores.pages import UpsertOutcome
from shared.stores.sql.notify import emit_feed_event
from shared.stores.sql.runner import SqlRunner

__all__ = ["FEED_COLUMNS", "FEED_STATUS_FIELDS", "SqlFeedStore", "feed_from_row", "update_values"]

#: FeedStatus field -> whether it holds a datetime (stored as microseconds)
FEED_STATUS_FIELDS: dict[str, bool] = {name: name.endswith("_at") for name in FeedStatus.__dataclass_fields__}
FEED_COLUMNS = (
    "feed_id, url, host, format, tenant_id, services, autoparser, created_at, deleted, "
    + ", ".join(FEED_STATUS_FIELDS)
    + ", options, secret"
)
#: where the registration's ``options`` and ``secret`` are in a row of ``FEED_COLUMNS``
_OPTIONS_AT = 9 + len(FEED_STATUS_FIELDS)


def feed_from_row(row: Sequence[Any]) -> Feed:
    status_values: dict[str, Any] = {}
    for offset, (name, is_time) in enumerate(FEED_STATUS_FIELDS.items(), start=9):
        value = row[offset]
        status_values[name] = from_us(value) if is_time else value
    status_values["consecutive_failures"] = status_values["consecutive_failures"] or 0
    return Feed(
        feed_id=row[0],
        url=row[1],
        host=row[2],
        format=row[3],
        tenant_id=row[4],
        services=tuple(orjson.loads(row[5] or "[]")),
        autoparser=bool(row[6]),
        created_at=from_us(row[7]),
        deleted=bool(row[8]),
        status=FeedStatus(**status_values),
        options=row[_OPTIONS_AT],
        secret=row[_OPTIONS_AT + 1],
    )


class SqlFeedStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def upsert_feed(self, feed: Feed) -> UpsertOutcome:
        prev = await self._db.fetchone("SELECT 1 FROM feeds WHERE feed_id = ?", feed.feed_id)
        rows = await self._db.execute_returning(
            "INSERT INTO feeds"
            " (feed_id, url, host, format, tenant_id, services, autoparser, created_at, deleted, options, secret)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, FALSE, ?, ?)"
            " ON CONFLICT (feed_id) DO UPDATE SET url = excluded.url, host = excluded.host,"
            " format = excluded.format, tenant_id = excluded.tenant_id, services = excluded.services,"
            " autoparser = excluded.autoparser, deleted = FALSE, options = excluded.options,"
            " secret = excluded.secret"
            " WHERE feeds.url <> excluded.url OR feeds.host <> excluded.host"
            " OR feeds.format <> excluded.format"
            " OR feeds.tenant_id IS DISTINCT FROM excluded.tenant_id OR feeds.services <> excluded.services"
            " OR feeds.autoparser <> excluded.autoparser OR feeds.deleted"
            " OR feeds.options IS DISTINCT FROM excluded.options OR feeds.secret IS DISTINCT FROM excluded.secret"
            " RETURNING feed_id",
            feed.feed_id,
            feed.url,
            feed.host,
            str(feed.format),
            feed.tenant_id,
            dumps(list(feed.services)),
            bool(feed.autoparser),
            now_us(feed.created_at),
            feed.options,
            feed.secret,
        )
        if not rows:
            return UpsertOutcome.unchanged
        return UpsertOutcome.inserted if prev is None else UpsertOutcome.updated

    async def delete_feed(self, feed_id: str) -> bool:
        count = await self._db.execute("UPDATE feeds SET deleted = TRUE WHERE feed_id = ? AND NOT deleted", feed_id)
        return count > 0

    async def get(self, feed_id: str) -> Feed | None:
        row = await self._db.fetchone(f"SELECT {FEED_COLUMNS} FROM feeds WHERE feed_id = ?", feed_id)
        return None if row is None else feed_from_row(row)

    async def list(
        self, tenant_id: str | None = None, *, include_deleted: bool = False, autoparser_only: bool = False
    ) -> builtins.list[Feed]:
        where = ["TRUE"]
        args: builtins.list[Any] = []
        if tenant_id is not None:
            where.append("tenant_id = ?")
            args.append(tenant_id)
        if not include_deleted:
            where.append("NOT deleted")
        if autoparser_only:
            where.append("autoparser")
        rows = await self._db.fetch(
            f"SELECT {FEED_COLUMNS} FROM feeds WHERE {' AND '.join(where)} ORDER BY feed_id", *args
        )
        return [feed_from_row(row) for row in rows]

    async def due(
        self, now: datetime, limit: int = 100, *, partitions: Collection[int] | None = None
    ) -> builtins.list[Feed]:
        if partitions is None:
            rows = await self._db.fetch(
                f"SELECT {FEED_COLUMNS} FROM feeds"
                " WHERE NOT deleted AND (next_fetch_at IS NULL OR next_fetch_at <= ?)"
                " ORDER BY next_fetch_at ASC NULLS FIRST, feed_id LIMIT ?",
                to_us(now),
                limit,
            )
            return [feed_from_row(row) for row in rows]
        owned = sorted({int(p) for p in partitions})
        if not owned:
            return []
        # a scheduled feed always has a next fetch time (the scheduler sets it with the partition), so
        # this is a range on the index feeds_due (schedule_partition, next_fetch_at) WHERE NOT deleted
        marks = ", ".join("?" for _ in owned)  # integers, counted: safe to splice
        rows = await self._db.fetch(
            f"SELECT {FEED_COLUMNS} FROM feeds"
            f" WHERE schedule_partition IN ({marks}) AND NOT deleted AND next_fetch_at <= ?"
            " ORDER BY next_fetch_at, feed_id LIMIT ?",
            *owned,
            to_us(now),
            limit,
        )
        return [feed_from_row(row) for row in rows]

    async def unscheduled(self, limit: int) -> builtins.list[Feed]:
        rows = await self._db.fetch(
            f"SELECT {FEED_COLUMNS} FROM feeds WHERE schedule_partition IS NULL AND NOT deleted"
            " ORDER BY created_at, feed_id LIMIT ?",
            limit,
        )
        return [feed_from_row(row) for row in rows]

    async def scheduled_sample(self, limit: int) -> builtins.list[tuple[str, int]]:
        rows = await self._db.fetch(
            "SELECT host, schedule_partition FROM feeds WHERE schedule_partition IS NOT NULL AND NOT deleted LIMIT ?",
            limit,
        )
        return [(str(h), int(p)) for h, p in rows]

    async def clear_partitions(self) -> int:
        return await self._db.execute("UPDATE feeds SET schedule_partition = NULL WHERE schedule_partition IS NOT NULL")

    async def host_due_times(self, host: str, after: datetime, *, exclude: str, limit: int) -> builtins.list[datetime]:
        rows = await self._db.fetch(
            "SELECT next_fetch_at FROM feeds"
            " WHERE host = ? AND NOT deleted AND next_fetch_at >= ? AND feed_id <> ?"
            " ORDER BY next_fetch_at LIMIT ?",
            host,
            to_us(after),
            exclude,
            limit,
        )
        return [t for (value,) in rows if (t := from_us(value)) is not None]

    async def host_size(self, host: str) -> int:
        row = await self._db.fetchone("SELECT COUNT(*) FROM feeds WHERE host = ? AND NOT deleted", host)
        return int(row[0]) if row else 0

    async def place(self, feed_id: str, partition: int, due: datetime) -> bool:
        # the due time is the row's own unless it has none: COALESCE in the statement, not a value
        # read before it (another replica may have leased the feed meanwhile)
        count = await self._db.execute(
            "UPDATE feeds SET schedule_partition = ?, next_fetch_at = COALESCE(next_fetch_at, ?)"
            " WHERE feed_id = ? AND NOT deleted"
            " AND (schedule_partition IS DISTINCT FROM ? OR next_fetch_at IS NULL)",
            partition,
            to_us(due),
            feed_id,
            partition,
        )
        return count > 0

    async def lease(self, feed_id: str, expected: datetime | None, next_fetch_at: datetime) -> bool:
        count = await self._db.execute(
            "UPDATE feeds SET next_fetch_at = ? WHERE feed_id = ? AND next_fetch_at IS NOT DISTINCT FROM ?",
            to_us(next_fetch_at),
            feed_id,
            to_us(expected),
        )
        return count > 0

    async def update_schedule(self, feed_id: str, **fields: Any) -> None:
        await self._update(SCHEDULE_FIELDS, "update_schedule", feed_id, fields)

    async def update_parse_status(self, feed_id: str, **fields: Any) -> None:
        await self._update(PARSE_FIELDS, "update_parse_status", feed_id, fields)

    async def set_autoparser_unavailable(
        self, feed_id: str, reason: str | None, *, now: datetime | None = None
    ) -> None:
        was = await self._db.fetchone("SELECT autoparser_unavailable_reason FROM feeds WHERE feed_id = ?", feed_id)
        await self._update(
            AUTOPARSER_FIELDS, "set_autoparser_unavailable", feed_id, {"autoparser_unavailable_reason": reason}
        )
        if reason is not None and was is not None and was[0] is None:
            # it turned unavailable now: an event for the feed's tenant (shared/notify/events.py)
            at = now_us(now)
            when = from_us(at)
            assert when is not None
            await emit_feed_event(
                self._db,
                f"{feed_id}/autoparser/{at}",
                feed_id,
                EventKind.autoparser_unavailable,
                when,
                {"message": reason},
            )

    async def _update(self, allowed: frozenset[str], method: str, feed_id: str, fields: dict[str, Any]) -> None:
        """One writer's UPDATE: only the fields that writer owns (``shared/stores/feeds.py``)."""
        names, values = update_values(allowed, method, fields)
        if not names:
            return
        assignments = ", ".join(f"{name} = ?" for name in names)
        count = await self._db.execute(f"UPDATE feeds SET {assignments} WHERE feed_id = ?", *values, feed_id)
        if count == 0:
            raise NotFound(f"feed {feed_id!r} does not exist")


def update_values(allowed: frozenset[str], method: str, fields: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """The column names and stored values of one writer's update (``ValueError`` for a field it does
    not own, or a None failure count); the names are checked, so safe to splice into a statement."""
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise ValueError(f"{method} does not write {unknown}; it writes {sorted(allowed)}")
    if "consecutive_failures" in fields and fields["consecutive_failures"] is None:
        raise ValueError("consecutive_failures must be an integer, not None")
    names = list(fields)
    return names, [to_us(fields[n]) if FEED_STATUS_FIELDS[n] else fields[n] for n in names]
