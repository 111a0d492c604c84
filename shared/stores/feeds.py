"""The feed store's contract: registered feeds, their status, the scheduler's state (DESIGN.md section 3).

One implementation for both engines: ``sql/feeds.py``.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from shared.stores.pages import UpsertOutcome

__all__ = ["Feed", "FeedStatus", "FeedStore"]


@dataclass(frozen=True, slots=True)
class FeedStatus:
    """What the scheduler and the crawler learned about a feed. All optional."""

    last_fetch_at: datetime | None = None
    last_http_status: int | None = None
    last_result: str | None = None  # a FetchStatus / parser outcome name
    items: int | None = None
    last_error: str | None = None
    error_line: int | None = None
    error_column: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    last_hash: str | None = None
    next_fetch_at: datetime | None = None  # None: due now
    interval_s: float | None = None
    consecutive_failures: int = 0
    websub_hub: str | None = None
    websub_expires_at: datetime | None = None
    autoparser_unavailable_reason: str | None = None
    #: the topic (self URL) and HMAC secret of the live WebSub subscription (migration 2)
    websub_topic: str | None = None
    websub_secret: str | None = None


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

    async def list(self, tenant_id: str | None = None, *, include_deleted: bool = False) -> builtins.list[Feed]:
        """Feeds (of ``tenant_id`` when given) ordered by feed_id."""
        ...

    async def due(self, now: datetime, limit: int = 100) -> builtins.list[Feed]:
        """Live feeds with ``next_fetch_at`` None or <= ``now``, the most overdue first (None first)."""
        ...

    async def update_status(self, feed_id: str, **fields: Any) -> None:
        """Set some ``FeedStatus`` fields. Unknown names -> ``ValueError``; unknown feed -> ``NotFound``."""
        ...
