"""WebSub subscriptions live in the feed's row only: a restart, or another replica, sees them at once."""

from __future__ import annotations

from pathlib import Path

from cubes.scheduler.websub import Subscription, Subscriptions, SubState
from shared.stores import Feed, open_stores


async def test_a_subscription_written_by_one_replica_is_read_by_another(tmp_path: Path) -> None:
    async with await open_stores(f"sqlite:///{tmp_path}/s.db") as stores:
        await stores.feeds.upsert_feed(Feed(feed_id="f1", url="https://a.example/feed", host="a.example", format="rss"))
        await stores.feeds.update_schedule("f1", schedule_partition=3, next_fetch_at=None)
        one = Subscriptions(stores.feeds)
        await one.put(
            Subscription("f1", "https://hub.example/", "https://a.example/feed", "s3cret", SubState.pending, 1.0)
        )

        other = Subscriptions(stores.feeds)  # another replica, or this one restarted: nothing in memory
        sub = await other.get("f1")
        assert sub is not None
        assert (sub.hub, sub.topic, sub.secret, sub.state) == (
            "https://hub.example/",
            "https://a.example/feed",
            "s3cret",
            SubState.pending,
        )
        await other.activate("f1", 2_000_000_000.0)
        sub = await one.get("f1")
        assert sub is not None
        assert (sub.state, sub.expires_at) == (SubState.active, 2_000_000_000.0)

        await stores.feeds.delete_feed("f1")
        sub = await other.get("f1")
        assert sub is not None
        assert sub.state is SubState.unsubscribing  # the feed is gone: only its unsubscription is verified
        await other.discard("f1")
        assert await one.get("f1") is None
        assert await one.get("nope") is None
