"""What the scheduler's tests share: a registration as the registration service makes it, and a tick
run as the runtime runs a timer's round."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from cubes.scheduler.handler import SchedulerHandler
from shared.messages import FeedRegistration
from shared.runtime.cube import Context, Output
from shared.runtime.timers import run_round
from shared.stores import Feed, FeedStore

__all__ = ["Ticking", "announce"]


class Ticking:
    """A ``SchedulerHandler`` whose ``tick()`` is one timer round as the runtime runs it: the tick's
    outputs go to ``publish`` (the test's collector), then the round's hooks run (``after_commit``,
    or ``on_failure`` when ``publish`` raised, which ``tick()`` then raises too)."""

    def __init__(self, handler: SchedulerHandler, publish: Callable[[Sequence[Output]], Awaitable[object]]) -> None:
        self.handler = handler
        self.publish = publish

    async def tick(self) -> int:
        return await run_round("scheduler", "tick", self.handler.tick, self.publish)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.handler, name)


def _ctx() -> Context:
    return Context(topic="feeds.registry", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


async def announce(handler: SchedulerHandler | Ticking, feeds: FeedStore, msg: FeedRegistration) -> None:
    """Do what ``shared.webmaster.feeds.FeedRegistry`` does (the row, then the announcement; a removal the other
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
