"""What the scheduler's tests share: a registration as the registration service makes it."""

from __future__ import annotations

from datetime import UTC, datetime

from cubes.scheduler.handler import SchedulerHandler
from shared.messages import FeedRegistration
from shared.runtime.cube import Context
from shared.stores import Feed, FeedStore

__all__ = ["announce"]


def _ctx() -> Context:
    return Context(topic="feeds.registry", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


async def announce(handler: SchedulerHandler, feeds: FeedStore, msg: FeedRegistration) -> None:
    """Do what ``shared.feeds.FeedRegistry`` does (the row, then the announcement; a removal the other
    way round) and let ``handler`` follow the announcement. The row is written as given, with no DNS:
    the service's own rules are tested in tests/unit/shared/test_feeds.py."""
    if msg.action == "upsert":
        await feeds.upsert_feed(
            Feed(
                feed_id=msg.feed_id,
                url=msg.url,
                host=msg.host,
                format=msg.format.value,
                tenant_id=msg.tenant_id,
                services=tuple(msg.services),
                autoparser=msg.autoparser,
            )
        )
    await handler.handle(msg, _ctx())
    if msg.action == "delete":
        await feeds.delete_feed(msg.feed_id)
