"""WebSub subscriptions survive a restart: the secret needed to verify pushes lives in the FeedStore."""

from __future__ import annotations

from pathlib import Path

from cubes.scheduler.websub import Subscription, Subscriptions, SubState
from shared.stores import Feed, open_stores


async def test_a_restarted_scheduler_still_knows_the_secret(tmp_path: Path) -> None:
    stores = await open_stores(f"sqlite:///{tmp_path}/s.db")
    try:
        await stores.feeds.upsert_feed(Feed(feed_id="f1", url="https://a.example/feed", host="a.example", format="rss"))
        book = Subscriptions(stores.feeds)
        book.put(Subscription("f1", "https://hub.example/", "https://a.example/feed", "s3cret", SubState.pending, 1.0))
        await book.flush()
        await stores.feeds.update_schedule("f1", websub_expires_at=None)

        after_restart = Subscriptions(stores.feeds)
        assert await after_restart.load() == 1
        sub = after_restart.get("f1")
        assert sub is not None
        assert (sub.hub, sub.topic, sub.secret) == ("https://hub.example/", "https://a.example/feed", "s3cret")

        after_restart.discard("f1")
        await after_restart.flush()
        assert await Subscriptions(stores.feeds).load() == 0
    finally:
        await stores.close()
