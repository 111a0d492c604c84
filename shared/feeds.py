"""Feed registration facts shared by the webmaster API and the operator CLI (DESIGN.md sections 1, 3).

Both register feeds the same way — into the FeedStore and onto ``feeds.registry`` —
so the id rule and the message built from a stored feed live here, once.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from shared.clock import utcnow
from shared.messages import FeedFormat, FeedRegistration
from shared.stores.rows import Feed

__all__ = ["feed_id_for", "registration"]


def feed_id_for(tenant_id: str | None, url: str) -> str:
    """A feed's id: stable for one tenant and canonical URL, so registering twice is one feed."""
    return hashlib.sha256(f"{tenant_id or ''}\n{url}".encode()).hexdigest()[:24]


def registration(
    feed: Feed, *, action: Literal["upsert", "delete"] = "upsert", registered_at: datetime | None = None
) -> FeedRegistration:
    """The ``feeds.registry`` message announcing ``feed`` (or its removal)."""
    return FeedRegistration(
        action=action,
        feed_id=feed.feed_id,
        url=feed.url,
        host=feed.host,
        format=FeedFormat(feed.format),
        services=list(feed.services),
        tenant_id=feed.tenant_id,
        autoparser=feed.autoparser,
        registered_at=registered_at or feed.created_at or utcnow(),
    )
