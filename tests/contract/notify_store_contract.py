"""The notification store's contract (``shared/stores/notify.py``), run against every engine with
``StoreContract``: the outbox the other stores write, the deliveries taken once under a lease, the log,
the digest."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from shared.notify.events import Event, EventKind
from shared.notify.settings import Channel, NotifySettings, When
from shared.problems import problem
from shared.stores import (
    Delivery,
    DeliveryStatus,
    Feed,
    FetchReport,
    Notice,
    PageProblems,
    RightChange,
    RightsEvent,
    Stores,
    Task,
    TaskStatus,
)
from tests.contract.store_contract import T0


def _delivery(event: Event, channel: Channel, status: DeliveryStatus) -> Delivery:
    return Delivery(f"{event.event_id}/{channel.value}", event.tenant_id, event, channel, "x", status, 0, T0, T0)


class NotifyStoreContract:
    async def test_the_stores_that_decide_a_fact_add_its_event_once_for_the_feeds_tenant(self, stores: Stores) -> None:
        await stores.feeds.upsert_feed(Feed("f1", "https://a.example/feed.xml", "a.example", "rss", tenant_id="ta"))
        await stores.feeds.upsert_feed(Feed("f0", "https://o.example/feed.xml", "o.example", "rss"))  # the operator's
        for feed in ("f1", "f0"):
            for minutes, result, counts in (
                (0, "parsed", {}),
                (1, "http_5xx", {"fetch.server_error": 1}),
                (2, "parsed", {}),
            ):
                for _ in range(2):  # a redelivered report adds nothing
                    await stores.problems.add_report(
                        FetchReport(feed, T0 + timedelta(minutes=minutes), result, counts=counts)
                    )
        await stores.tasks.create(Task(task_id="t1", tenant_id="ta", host="a.example"), now=T0)
        for _ in range(2):
            await stores.tasks.update("t1", status=TaskStatus.done, now=T0 + timedelta(minutes=3))
        got = [(e.tenant_id, e.kind, e.subject) for e in await stores.notify.untold(limit=100)]
        # by time, then id: a fetch's state change before its codes' occurrences
        assert got == [
            ("ta", EventKind.feed_failing, "https://a.example/feed.xml"),
            ("ta", EventKind.problem_new, "https://a.example/feed.xml"),
            ("ta", EventKind.feed_recovered, "https://a.example/feed.xml"),
            ("ta", EventKind.problem_resolved, "https://a.example/feed.xml"),
            ("ta", EventKind.task_done, "t1"),
        ]

    async def test_settings_a_due_delivery_taken_once_the_log_and_the_digest(self, stores: Stores) -> None:
        s = NotifySettings("ta", "https://a.example/hook", "w@a.example", {EventKind.task_done: When.off}, "sealed")
        await stores.notify.put_settings(s, now=T0)
        assert await stores.notify.settings("ta") == s
        assert await stores.notify.settings("tb") is None
        await stores.tasks.create(Task(task_id="t1", tenant_id="ta", host="a.example"), now=T0)
        await stores.tasks.update("t1", status=TaskStatus.failed, now=T0)
        [event] = await stores.notify.untold(limit=10)
        await stores.notify.tell(
            event.event_id,
            [
                _delivery(event, Channel.webhook, DeliveryStatus.pending),
                _delivery(event, Channel.digest, DeliveryStatus.queued),
            ],
        )
        assert await stores.notify.untold(limit=10) == []
        # two sweeps at once: each due delivery is taken by one of them
        a, b = await asyncio.gather(
            stores.notify.due(T0, lease_until=T0 + timedelta(minutes=2), limit=10),
            stores.notify.due(T0, lease_until=T0 + timedelta(minutes=2), limit=10),
        )
        assert sorted(d.channel for d in a + b) == [Channel.webhook]
        [taken] = a + b
        assert taken.event == event
        assert await stores.notify.due(T0 + timedelta(minutes=1), lease_until=T0, limit=10) == []  # leased
        await stores.notify.attempted(
            taken.delivery_id,
            status=DeliveryStatus.pending,
            attempts=1,
            next_at=T0 + timedelta(minutes=5),
            at=T0,
            http_status=503,
            error="answered HTTP 503",
        )
        [again] = await stores.notify.due(T0 + timedelta(minutes=5), lease_until=T0 + timedelta(minutes=7), limit=10)
        assert (again.attempts, again.http_status, again.error) == (1, 503, "answered HTTP 503")
        assert sorted(d.channel for d in await stores.notify.deliveries("ta")) == [Channel.digest, Channel.webhook]
        assert await stores.notify.deliveries("tb") == []
        # the digest: due a day after its first item, then a day after the last digest
        assert await stores.notify.digest_tenants(T0, limit=10) == []
        assert await stores.notify.digest_tenants(T0 + timedelta(seconds=1), limit=10) == ["ta"]
        [queued] = await stores.notify.queued("ta", limit=10)
        await stores.notify.digest_sent("ta", [queued.delivery_id], at=T0 + timedelta(days=1))
        assert await stores.notify.queued("ta", limit=10) == []
        assert await stores.notify.digest_tenants(T0 + timedelta(days=3), limit=10) == []

    async def test_an_event_told_to_nobody_is_dropped(self, stores: Stores) -> None:
        await stores.tasks.create(Task(task_id="t1", tenant_id="tz", host="z.example"), now=T0)
        await stores.tasks.update("t1", status=TaskStatus.done, now=T0)
        [event] = await stores.notify.untold(limit=10)
        await stores.notify.tell(event.event_id, [])
        assert await stores.notify.untold(limit=10) == []

    async def test_a_held_page_an_autoparser_unavailable_and_a_right_that_changed_are_events(
        self, stores: Stores
    ) -> None:
        await stores.feeds.upsert_feed(Feed("f1", "https://a.example/feed.xml", "a.example", "rss", tenant_id="ta"))
        lost = problem("page.incomplete", "the page lost its images", feed="f1")
        held = [
            PageProblems(f"https://a.example/p/{i}", 2, "a.example", "rss", "f1", (lost,), held=True) for i in range(3)
        ]
        await stores.problems.put_page_problems(held, now=T0)  # three pages held: one event for the feed that day
        await stores.problems.put_page_problems(
            [PageProblems("https://a.example/p/9", 1, "a.example", "rss", "f1", (lost,))], now=T0
        )  # a page that lost something but was published: no event
        for reason in ("robots.txt forbids images", "robots.txt forbids images", None, "robots.txt forbids pages"):
            await stores.feeds.set_autoparser_unavailable("f1", reason)  # told when it turns unavailable, twice here
        change = RightsEvent("ev1", "https://a.example", "a.example", RightChange.lapsing, "ta", T0, ends_at=T0)
        await stores.notices.record(change, [Notice("n1", "ta", change, True, "your right lapses")])
        got = [(e.tenant_id, e.kind) for e in await stores.notify.untold(limit=100)]
        assert sorted(got) == sorted(
            [
                ("ta", EventKind.pages_held),
                ("ta", EventKind.autoparser_unavailable),
                ("ta", EventKind.autoparser_unavailable),
                ("ta", EventKind.right_changed),
            ]
        )
        [page] = [e for e in await stores.notify.untold(limit=100) if e.kind is EventKind.pages_held]
        assert (page.detail["url"], page.detail["code"]) == ("https://a.example/p/0", "page.incomplete")
        [right] = [e for e in await stores.notify.untold(limit=100) if e.kind is EventKind.right_changed]
        assert (right.subject, right.detail["change"], right.detail["message"]) == (
            "https://a.example",
            "lapsing",
            "your right lapses",
        )

    async def test_a_failed_fetch_keeps_the_bodys_problems_open_and_tells_no_resolution(self, stores: Stores) -> None:
        await stores.feeds.upsert_feed(Feed("f1", "https://a.example/feed.xml", "a.example", "rss", tenant_id="ta"))
        for minutes, result, counts in (
            (0, "parsed", {"item.no_title": 1}),
            (1, "http_5xx", {"fetch.server_error": 1}),  # an outage: not a fix of the item
            (2, "parsed", {"item.no_title": 1}),
        ):
            await stores.problems.add_report(FetchReport("f1", T0 + timedelta(minutes=minutes), result, counts=counts))
        history = {(o.code, o.state) for o in await stores.problems.history("f1")}
        assert history == {("item.no_title", "ongoing"), ("fetch.server_error", "resolved")}
        told = [(e.kind, e.detail.get("code")) for e in await stores.notify.untold(limit=100)]
        assert (EventKind.problem_resolved, "item.no_title") not in told
        assert told.count((EventKind.problem_new, "item.no_title")) == 1

    async def test_the_log_forgets_finished_deliveries_past_the_keep_except_each_channels_newest(
        self, stores: Stores
    ) -> None:
        for n in range(3):
            await stores.tasks.create(Task(task_id=f"t{n}", tenant_id="ta", host="a.example"), now=T0)
            await stores.tasks.update(f"t{n}", status=TaskStatus.done, now=T0 + timedelta(days=n))
        events = await stores.notify.untold(limit=10)
        assert len(events) == 3
        # day 0: webhook delivered, e-mail delivered, a digest item still queued; day 1: webhook dead, e-mail
        # delivered; day 2: webhook still pending (being retried), e-mail delivered
        states = (
            {Channel.webhook: DeliveryStatus.delivered, Channel.email: DeliveryStatus.delivered},
            {Channel.webhook: DeliveryStatus.dead, Channel.email: DeliveryStatus.delivered},
            {Channel.webhook: DeliveryStatus.pending, Channel.email: DeliveryStatus.delivered},
        )
        for n, (event, state) in enumerate(zip(events, states, strict=True)):
            at = T0 + timedelta(days=n)
            out = [Delivery(f"{event.event_id}/{c.value}", "ta", event, c, "x", s, 1, at, at) for c, s in state.items()]
            if n == 0:
                out.append(
                    Delivery(
                        f"{event.event_id}/digest", "ta", event, Channel.digest, "x", DeliveryStatus.queued, 0, at, at
                    )
                )
            await stores.notify.tell(event.event_id, out)
        before = {d.delivery_id for d in await stores.notify.deliveries("ta")}
        assert await stores.notify.prune(T0, limit=100) == 0  # nothing is older than the first
        # ten days on: day 0's webhook and e-mail and day 1's e-mail go; the dead webhook stays (the newest
        # finished one says the endpoint is down), the pending one and the queued digest item too
        assert await stores.notify.prune(T0 + timedelta(days=10), limit=100) == 3
        kept = {(d.event.event_id, d.channel, d.status) for d in await stores.notify.deliveries("ta")}
        assert kept == {
            (events[0].event_id, Channel.digest, DeliveryStatus.queued),
            (events[1].event_id, Channel.webhook, DeliveryStatus.dead),
            (events[2].event_id, Channel.webhook, DeliveryStatus.pending),
            (events[2].event_id, Channel.email, DeliveryStatus.delivered),
        }
        assert len(before) == 7
        assert await stores.notify.prune(T0 + timedelta(days=10), limit=100) == 0  # idempotent

    async def test_a_page_of_an_upload_held_back_is_told_to_the_tasks_tenant(self, stores: Stores) -> None:
        await stores.tasks.create(Task(task_id="t1", tenant_id="ta", host="a.example"), now=T0)
        lost = problem("page.incomplete", "the page lost its images")
        held = [
            PageProblems(f"https://a.example/p/{i}", 2, "a.example", "upload", "t1", (lost,), held=True)
            for i in range(2)
        ]
        await stores.problems.put_page_problems(held, now=T0)  # two pages of one task held that day: one event
        await stores.problems.put_page_problems(
            [PageProblems("https://a.example/p/9", 1, "a.example", "upload", "t-unknown", (lost,), held=True)], now=T0
        )  # a task the store does not know tells no one
        [event] = await stores.notify.untold(limit=100)
        assert (event.tenant_id, event.kind, event.host, event.subject) == (
            "ta",
            EventKind.pages_held,
            "a.example",
            "t1",
        )
        assert (event.detail["url"], event.detail["code"], event.detail["task_id"]) == (
            "https://a.example/p/0",
            "page.incomplete",
            "t1",
        )

    async def test_an_autoparser_turned_unavailable_is_told_at_its_writers_time(self, stores: Stores) -> None:
        await stores.feeds.upsert_feed(Feed("f1", "https://a.example/feed.xml", "a.example", "rss", tenant_id="ta"))
        await stores.feeds.set_autoparser_unavailable("f1", "robots.txt forbids pages", now=T0)
        [event] = await stores.notify.untold(limit=10)
        assert (event.kind, event.at) == (EventKind.autoparser_unavailable, T0)  # not the wall clock
