"""The feed store's contract: registered feeds, their status, the scheduler's state (docs/architecture.md section 3).

One implementation for both engines: ``sql/feeds.py``.

Each field of a feed's row has one writer (docs/conventions.md rule 18), and the store
offers each writer its own method, which refuses the fields of the others:

=====================  ===============================  ============================================
fields                 writer                           method
=====================  ===============================  ============================================
registration           ``shared.webmaster.feeds.FeedRegistry``    ``upsert_feed``, ``delete_feed``
``REGISTRATION``       (the API, the operator, the demo)
schedule and fetch     the scheduler                    ``update_schedule``
``SCHEDULE_FIELDS``    (learns from ``crawl.feeds``)
parse status           the parser                       ``update_parse_status``
``PARSE_FIELDS``
autoparser status      the autoparser                   ``set_autoparser_unavailable``
=====================  ===============================  ============================================

``tests/unit/shared/stores/test_feed_writers.py`` keeps each method called from
its writer's package only. ``FeedStatus.last_result`` / ``last_error`` are the
feed as it is now, *read* from both the fetch's and the parse's fields.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from shared.stores.pages import UpsertOutcome

__all__ = [
    "AUTOPARSER_FIELDS",
    "PARSE_FIELDS",
    "REGISTRATION",
    "SCHEDULE_FIELDS",
    "Feed",
    "FeedStatus",
    "FeedStore",
]

#: the registration fields: what a webmaster or the operator asked for
REGISTRATION = (
    "url",
    "host",
    "format",
    "tenant_id",
    "services",
    "autoparser",
    "created_at",
    "deleted",
    "options",
    "secret",
)
#: the scheduler's: when and how the next fetch goes, what the last one answered, the WebSub lease
SCHEDULE_FIELDS = frozenset(
    {
        "last_fetch_at",
        "last_http_status",
        "fetch_result",
        "fetch_error",
        "etag",
        "last_modified",
        "last_hash",
        "next_fetch_at",
        "interval_s",
        "consecutive_failures",
        "schedule_reason",
        "declared_schedule",
        "schedule_partition",
        "websub_hub",
        "websub_topic",
        "websub_secret",
        "websub_expires_at",
    }
)
#: the parser's: what the last parse of a fetched body found
PARSE_FIELDS = frozenset({"items", "parse_result", "parse_error", "error_line", "error_column"})
#: the autoparser's: why the host's pages cannot be autoparsed (robots.txt forbids their images, ...)
AUTOPARSER_FIELDS = frozenset({"autoparser_unavailable_reason"})

#: fetch outcomes that say the feed answered (FetchStatus values; anything else is a failed fetch)
_ANSWERED = frozenset({"ok", "not_modified"})


@dataclass(frozen=True, slots=True)
class FeedStatus:
    """What the scheduler, the parser and the autoparser learned about a feed. All optional."""

    # the scheduler, from crawl.feeds: the last fetch
    last_fetch_at: datetime | None = None
    last_http_status: int | None = None
    fetch_result: str | None = None  # a FetchStatus value
    fetch_error: str | None = None  # why the last fetch failed; None when it answered
    # the parser: the last parse of a fetched body
    items: int | None = None
    parse_result: str | None = None  # parsed / partial / parse_error / conflict
    parse_error: str | None = None
    error_line: int | None = None
    error_column: int | None = None
    # the scheduler: the next fetch
    etag: str | None = None
    last_modified: str | None = None
    last_hash: str | None = None
    next_fetch_at: datetime | None = None  # None: due now
    interval_s: float | None = None
    consecutive_failures: int = 0
    #: what chose the next fetch when the origin did ("the feed's ttl", "the feed's skipHours", ...,
    #: ``cubes/scheduler/origin.py``); None: the adaptive schedule (or a failure's backoff)
    schedule_reason: str | None = None
    #: what the feed's last body declared of its schedule (ttl, sy:update*, skip hours and days), as JSON:
    #: a 304 brings no body, and its feed still declares it
    declared_schedule: str | None = None
    #: the partition of the scheduler's input (``crawl.feeds``, keyed by host) the feed's host falls
    #: in: the replica holding that partition schedules the feed. None: not scheduled (new, removed)
    schedule_partition: int | None = None
    websub_hub: str | None = None
    websub_expires_at: datetime | None = None
    #: the topic (self URL) and HMAC secret of the live WebSub subscription (migration 2)
    websub_topic: str | None = None
    websub_secret: str | None = None
    # the autoparser
    autoparser_unavailable_reason: str | None = None

    @property
    def last_result(self) -> str | None:
        """The feed as it is now: a failed fetch's outcome; after a 304 ``not_modified``; after a
        body, what its parse found (``ok`` until the parser has read it)."""
        if self.fetch_result is not None and self.fetch_result not in _ANSWERED:
            return self.fetch_result
        if self.fetch_result == "not_modified":
            return self.fetch_result
        return self.parse_result or self.fetch_result

    @property
    def last_error(self) -> str | None:
        """Why the feed does not come through now: the fetch's failure, else its last parse's problem."""
        return self.fetch_error if self.fetch_error is not None else self.parse_error


@dataclass(frozen=True, slots=True)
class Feed:
    feed_id: str
    url: str
    host: str
    format: str  # a FeedFormat value
    tenant_id: str | None = None
    services: tuple[str, ...] = ()
    autoparser: bool = False
    created_at: datetime | None = None  # set by the store on first insert when None
    deleted: bool = False
    status: FeedStatus = field(default_factory=FeedStatus)  # read-only through upsert_feed
    #: the webmaster's fetch options and filters, public (``shared.webmaster.feed_options.FeedOptions`` as JSON)
    options: str | None = None
    #: the sealed token of the options' secrets (a password, header values: ``shared/secretbox.py``)
    secret: str | None = None


class FeedStore(Protocol):
    """Registered feeds, their status and the scheduler's state."""

    async def upsert_feed(self, feed: Feed) -> UpsertOutcome:
        """Insert or update the registration fields (``feed.status`` is ignored; a deleted feed revives).

        inserted / updated / unchanged (nothing differs). ``created_at`` is kept from the first insert.
        """
        ...

    async def delete_feed(self, feed_id: str) -> bool:
        """Soft delete; True when a live feed was deleted."""
        ...

    async def get(self, feed_id: str) -> Feed | None:
        """The feed with its status, deleted or not."""
        ...

    async def list(
        self, tenant_id: str | None = None, *, include_deleted: bool = False, autoparser_only: bool = False
    ) -> builtins.list[Feed]:
        """Feeds (of ``tenant_id`` when given; registered with ``autoparser`` when asked) by feed_id."""
        ...

    # ------------------------------------------------------------------ the scheduler's index

    async def due(
        self, now: datetime, limit: int = 100, *, partitions: Collection[int] | None = None
    ) -> builtins.list[Feed]:
        """Live feeds with ``next_fetch_at`` None or <= ``now``, the most overdue first (None first).

        With ``partitions``: only feeds scheduled in those (``schedule_partition``), read through the
        index on (partition, next fetch), so a tick costs what is due there, not what is registered.
        """
        ...

    async def unscheduled(self, limit: int) -> builtins.list[Feed]:
        """Live feeds with no ``schedule_partition`` yet (new, or registered again), oldest first."""
        ...

    async def scheduled_sample(self, limit: int) -> builtins.list[tuple[str, int]]:
        """(host, schedule_partition) of up to ``limit`` scheduled feeds: enough to see whether the
        partitions were computed with the bus's current rule."""
        ...

    async def clear_partitions(self) -> int:
        """Unschedule every feed (the partitioning rule changed); returns how many were scheduled."""
        ...

    async def host_due_times(self, host: str, after: datetime, *, exclude: str, limit: int) -> builtins.list[datetime]:
        """The next fetch times >= ``after`` of the host's other live feeds, earliest first, at most ``limit``."""
        ...

    async def host_size(self, host: str) -> int:
        """How many live feeds ``host`` has."""
        ...

    async def place(self, feed_id: str, partition: int, due: datetime) -> bool:
        """Schedule a live feed in ``partition``, due at ``due`` only if it has no due time yet, in one
        statement: a placement from a row read earlier never undoes a replica's lease made since.
        True when the row changed."""
        ...

    async def lease(self, feed_id: str, expected: datetime | None, next_fetch_at: datetime) -> bool:
        """The scheduler's compare-and-set of ``next_fetch_at``: set only if it still is ``expected``
        (a result learned meanwhile is newer and wins). True when it was set."""
        ...

    # ------------------------------------------------------------------ the writers

    async def update_schedule(self, feed_id: str, **fields: Any) -> None:
        """The scheduler's write: some ``SCHEDULE_FIELDS``. Another field -> ``ValueError``;
        unknown feed -> ``NotFound``."""
        ...

    async def update_parse_status(self, feed_id: str, **fields: Any) -> None:
        """The parser's write: some ``PARSE_FIELDS`` (same errors as ``update_schedule``)."""
        ...

    async def set_autoparser_unavailable(
        self, feed_id: str, reason: str | None, *, now: datetime | None = None
    ) -> None:
        """The autoparser's write: why the feed's host cannot be autoparsed (None: it can); ``now`` (the writer's
        clock) stamps the event told when it turns unavailable."""
        ...
