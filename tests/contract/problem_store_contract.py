"""The problem store's contract (shared/stores/problems.py), run against every engine with ``StoreContract``.

Also the other rows the webmaster's views read: the problems of upload tasks, and the documents a
host has waiting for images (``DelayStore.waiting_on``).
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from shared.hashing import TOMBSTONE
from shared.problems import problem
from shared.stores import FetchReport, PageProblems, PageState, Stores, Task, TaskItem
from tests.contract.store_contract import T0, page


def report(feed_id: str, minutes: int, **kw: object) -> FetchReport:
    values: dict[str, object] = {
        "feed_id": feed_id,
        "fetched_at": T0 + timedelta(minutes=minutes),
        "result": "parsed",
        "http_status": 200,
        "items": 3,
        "changed": 2,
    }
    values.update(kw)
    return FetchReport(**values)  # type: ignore[arg-type]


NO_TITLE = problem("item.no_title", "item has no title", feed="f1", item=1, line=9)
LATE = problem("image.late", "image https://a.example/i.png was left out", link="https://a.example/news/1")


class ProblemStoreContract:
    async def test_reports_round_trip_and_keep_the_newest(self, stores: Stores) -> None:
        p = stores.problems
        first = report("f1", 0, problems=(NO_TITLE,), counts={"item.no_title": 3}, more=2, refused=3)
        await p.add_report(first, keep=3)
        assert await p.reports("f1") == [first]
        for m in range(1, 5):
            await p.add_report(report("f1", m, fetch_ids=(f"fx{m}",)), keep=3)
        got = await p.reports("f1")
        assert [r.fetched_at for r in got] == [T0 + timedelta(minutes=m) for m in (4, 3, 2)]
        assert await p.reports("f1", limit=1) == got[:1]
        assert await p.reports("other") == []

    async def test_a_redelivered_report_replaces_itself(self, stores: Stores) -> None:
        await stores.problems.add_report(report("f1", 0, result="parsed"))
        await stores.problems.add_report(report("f1", 0, result="partial"))
        (only,) = await stores.problems.reports("f1")
        assert only.result == "partial"

    async def test_a_retry_of_a_fetch_never_rewrites_what_it_published(self, stores: Stores) -> None:
        """A catalog's first fetch published 100,000 offers; its commit was lost (a crash), the crawl
        result came again, and this attempt found every offer published already: the history used to
        say "0 published, 100,000 unchanged" for the fetch that published them all."""
        p = stores.problems
        first = report("shop", 0, items=100_000, changed=100_000, unchanged=0, fetch_ids=("fx1",))
        await p.add_report(first)
        await p.add_report(report("shop", 0, items=100_000, changed=0, unchanged=100_000))
        (only,) = await p.reports("shop")
        assert (only.result, only.changed, only.unchanged, only.fetch_ids) == ("parsed", 100_000, 0, ("fx1",))
        # an attempt that published 40,000 (the rest unchanged since the last fetch), and a retry of it
        await p.add_report(report("shop", 1, items=100_000, changed=40_000, unchanged=60_000))
        await p.add_report(report("shop", 1, items=100_000, changed=0, unchanged=100_000))
        (latest, _) = await p.reports("shop")
        assert (latest.changed, latest.unchanged) == (40_000, 60_000)
        # the body recorded whole after a commit the runtime lost: the attempt that read it stays
        await p.add_report(report("shop", 2, items=5, changed=5, unchanged=0, problems=(NO_TITLE,)))
        await p.add_report(report("shop", 2, result="unchanged", items=5, changed=0, unchanged=5))
        latest = (await p.reports("shop"))[0]
        assert (latest.result, latest.changed, latest.problems) == ("parsed", 5, (NO_TITLE,))

    async def test_latest_reports_and_report_for_fetch(self, stores: Stores) -> None:
        p = stores.problems
        await p.add_report(report("f1", 0))
        await p.add_report(report("f1", 5, result="parse_error", fetch_ids=("fetch-a", "fetch-b")))
        await p.add_report(report("f2", 1, result="not_modified"))
        latest = await p.latest_reports(["f1", "f2", "f3"])
        assert {k: v.result for k, v in latest.items()} == {"f1": "parse_error", "f2": "not_modified"}
        found = await p.report_for_fetch("f1", "fetch-b")
        assert found is not None
        assert found.fetched_at == T0 + timedelta(minutes=5)
        assert await p.report_for_fetch("f1", "fetch-c") is None
        assert await p.report_for_fetch("f2", "fetch-a") is None

    async def test_page_problems_show_only_for_the_live_version(self, stores: Stores) -> None:
        url = "https://a.example/news/1"
        row = PageProblems(url, 2, "a.example", "rss", "f1", (LATE,))
        await stores.problems.put_page_problems([row], now=T0)
        assert await stores.problems.page_problems(source_id="f1") == []  # no page yet
        await stores.pages.upsert(page(2, url))
        (got,) = await stores.problems.page_problems(source_id="f1")
        assert (got.url, got.version, got.problems, got.updated_at) == (url, 2, (LATE,), T0)
        assert await stores.problems.page_problems(host="a.example") == [got]
        assert await stores.problems.page_problems(url=url) == [got]
        assert await stores.problems.page_problems(host="b.example") == []
        # an older version's late write changes nothing
        await stores.problems.put_page_problems([PageProblems(url, 1, "a.example", "rss", "f1", (NO_TITLE,))])
        assert (await stores.problems.page_problems(url=url))[0].problems == (LATE,)
        # the page is rebuilt without the problem (version 3, nothing lost): the old row stops counting
        await stores.pages.upsert(page(3, url))
        assert await stores.problems.page_problems(source_id="f1") == []
        # and a tombstone hides it too
        await stores.problems.put_page_problems([PageProblems(url, 3, "a.example", "rss", "f1", (LATE,))])
        assert len(await stores.problems.page_problems(source_id="f1")) == 1
        await stores.pages.delete(url, 4)
        assert await stores.problems.page_problems(source_id="f1") == []

    async def test_a_page_held_back_shows_its_problems_until_a_version_as_new_is_stored(self, stores: Stores) -> None:
        """A page not published (held back) was invisible to its webmaster."""
        url, old = "https://a.example/news/held", "https://a.example/news/older"
        held = PageProblems(url, 5, "a.example", "autoparser", "a.example", (LATE,), held=True)
        await stores.problems.put_page_problems([held], now=T0)
        (got,) = await stores.problems.page_problems(host="a.example")  # no page at all: still shown
        assert (got.url, got.version, got.held) == (url, 5, True)
        await stores.pages.upsert(page(3, url))  # an older version is live: the new one was held
        assert [r.url for r in await stores.problems.page_problems(source_id="a.example")] == [url]
        await stores.pages.upsert(page(6, url))  # published since: the hold is over
        assert await stores.problems.page_problems(host="a.example") == []
        # a live page's row is as before: shown at its version only
        await stores.problems.put_page_problems([PageProblems(old, 2, "a.example", "rss", "f1", (LATE,))])
        assert await stores.problems.page_problems(url=old) == []
        await stores.pages.upsert(page(2, old))
        assert [(r.url, r.held) for r in await stores.problems.page_problems(url=old)] == [(old, False)]

    async def test_each_page_of_a_source_has_one_state_and_the_counts_agree(self, stores: Stores) -> None:
        """One rule for a page's state (``STATE_SQL``): the list and the counts apply it alike."""
        src, other = "feed:f1", "feed:f2"
        base = "https://a.example/"
        urls = {s: base + s for s in ("live", "lost", "held", "held-old", "wait", "wait-old", "gone", "taken", "new")}
        for name, url in urls.items():
            await stores.hashes.check_and_set(src, url, TOMBSTONE if name == "gone" else f"h-{name}", now=T0)
        await stores.hashes.check_and_set(src, "https://a.example/feed.xml#body", "b", now=T0)  # not a page
        for name in ("live", "lost", "held-old", "wait-old", "taken", "gone"):
            await stores.pages.upsert(page(2, urls[name]))
        await stores.pages.delete(urls["gone"], 3)
        for name in ("held", "held-old", "lost"):
            held = name != "lost"
            row = PageProblems(urls[name], 2 if name == "lost" else 5, "a.example", "rss", "f1", (LATE,), held=held)
            await stores.problems.put_page_problems([row], now=T0)
        for name in ("wait", "wait-old"):
            await stores.delay.park(urls[name], 5, b"{}", [f"{base}img/{name}.png"], T0 + timedelta(minutes=10),
                                    host="a.example", now=T0)  # fmt: skip
        await stores.hashes.claim(urls["taken"], src, 1)
        await stores.hashes.claim(urls["taken"], other, 9)  # a source of higher priority took it over
        rows = await stores.problems.page_rows(source_id=src)
        states = {r.key.removeprefix(base): (r.state, r.live) for r in rows}
        assert states == {
            "gone": (PageState.removed, False),
            "held": (PageState.held, False),
            "held-old": (PageState.held, True),
            "live": (PageState.published, True),
            "lost": (PageState.incomplete, True),
            "new": (PageState.on_its_way, False),
            "taken": (PageState.outranked, True),
            "wait": (PageState.waiting, False),
            "wait-old": (PageState.waiting, True),
        }
        by_key = {r.key: r for r in rows}
        assert by_key[urls["wait"]].pending == frozenset({f"{base}img/wait.png"})
        assert by_key[urls["wait"]].deadline == T0 + timedelta(minutes=10)
        held_problems = by_key[urls["held"]].problems
        assert held_problems is not None
        assert held_problems.problems == (LATE,)
        assert by_key[urls["taken"]].owner == other
        assert by_key[urls["live"]].title == "Title 2"
        counts = await stores.problems.state_counts(src)
        assert {s: n for s, (n, _) in counts.items()} == dict(Counter(state for state, _ in states.values()))
        # served: a version of its own on Turbo (the taken-over page is served from the other source)
        assert sum(live for _, live in counts.values()) == sum(
            1 for name, (state, live) in states.items() if live and name != "taken"
        )
        assert await stores.problems.state_counts(src, host="b.example") == {}
        assert [r.key for r in await stores.problems.page_rows(source_id=src, limit=2, after=urls["held-old"])] == [
            urls["live"], urls["lost"]]  # fmt: skip
        # by keys (a check's previews), in the order asked; a key with no row at all is on its way
        keyed = await stores.problems.page_rows(keys=[urls["wait"], urls["live"], base + "nothing"])
        assert [(r.key, r.state) for r in keyed] == [
            (urls["wait"], PageState.waiting), (urls["live"], PageState.published),
            (base + "nothing", PageState.on_its_way)]  # fmt: skip
        # the held page is published since: the hold is over
        await stores.pages.upsert(page(6, urls["held"]))
        (after,) = await stores.problems.page_rows(keys=[urls["held"]])
        assert (after.state, after.live, after.problems) == (PageState.published, True, None)

    async def test_task_problems_round_trip(self, stores: Stores) -> None:
        item = TaskItem(url="https://a.example/x", status="rejected", error="item has no title", problems=(NO_TITLE,))
        task = await stores.tasks.create(Task(task_id="t1", tenant_id="ten", host="a.example"), now=T0)
        assert (task.problems, task.items) == ((), ())
        done = await stores.tasks.update("t1", items=[item], problems=[NO_TITLE, LATE], now=T0)
        assert done.items == (item,)
        assert done.problems == (NO_TITLE, LATE)
        assert await stores.tasks.get("t1") == done

    async def test_waiting_on_lists_a_hosts_parked_documents_with_their_missing_media(self, stores: Stores) -> None:
        d = stores.delay
        await d.park("https://a.example/1", 1, b"{}", ["https://a.example/i1", "https://a.example/i2"],
                     T0 + timedelta(minutes=10), host="a.example", now=T0)  # fmt: skip
        await d.park("https://a.example/2", 1, b"{}", ["https://a.example/i3"],
                     T0 + timedelta(minutes=5), host="a.example", now=T0)  # fmt: skip
        await d.park("https://b.example/1", 1, b"{}", ["https://b.example/i"],
                     T0 + timedelta(minutes=1), host="b.example", now=T0)  # fmt: skip
        got = await d.waiting_on("a.example")
        assert [(w.url, w.pending, w.deadline) for w in got] == [
            ("https://a.example/2", frozenset({"https://a.example/i3"}), T0 + timedelta(minutes=5)),
            (
                "https://a.example/1",
                frozenset({"https://a.example/i1", "https://a.example/i2"}),
                T0 + timedelta(minutes=10),
            ),
        ]
        assert await d.waiting_on("a.example", limit=1) == got[:1]
        await d.resolve("https://a.example/i3", now=T0)  # released: no longer waiting
        assert [w.url for w in await d.waiting_on("a.example")] == ["https://a.example/1"]

    async def test_a_host_claim_keeps_its_origin(self, stores: Stores) -> None:
        t = await stores.tenants.create_tenant("t", tenant_id="t1")
        first = await stores.tenants.add_host(t.tenant_id, "shop.example", origin="http://shop.example:8080")
        assert first.origin == "http://shop.example:8080"
        again = await stores.tenants.add_host(t.tenant_id, "shop.example")  # no origin: the stored one stays
        assert (again.origin, again.verification_token) == (first.origin, first.verification_token)
        moved = await stores.tenants.add_host(t.tenant_id, "shop.example", origin="https://shop.example:8443")
        assert (moved.origin, moved.verification_token) == ("https://shop.example:8443", first.verification_token)
        (listed,) = await stores.tenants.hosts_of(t.tenant_id)
        assert listed == moved

    async def test_sessions_store_only_a_hash_and_expire(self, stores: Stores, store_url: str) -> None:
        sid, session = await stores.sessions.create_session("ten", ttl_s=60, now=T0)
        assert (session.tenant_id, session.expires_at) == ("ten", T0 + timedelta(seconds=60))
        assert session.csrf
        assert await stores.sessions.get_session(sid, now=T0 + timedelta(seconds=59)) == session
        assert await stores.sessions.get_session(sid, now=T0 + timedelta(seconds=60)) is None
        assert await stores.sessions.get_session("made-up", now=T0) is None
        rows = await self.raw_rows(store_url, "console_sessions")  # type: ignore[attr-defined]
        assert sid not in repr(rows)  # only its sha256 is kept
        assert await stores.sessions.delete_session(sid) is True
        assert await stores.sessions.get_session(sid, now=T0) is None
        await stores.sessions.create_session("ten", ttl_s=1, now=T0)
        assert await stores.sessions.prune_sessions(T0 + timedelta(seconds=2)) == 1

    async def test_recent_tasks_of_a_tenant(self, stores: Stores) -> None:
        for i in range(3):
            await stores.tasks.create(Task(task_id=f"t{i}", tenant_id="ten", host="a.example"), now=T0 + timedelta(i))
        await stores.tasks.create(Task(task_id="x", tenant_id="other", host="b.example"), now=T0)
        assert [t.task_id for t in await stores.tasks.recent("ten", limit=2)] == ["t2", "t1"]

    async def test_urls_of_source_with_a_limit(self, stores: Stores) -> None:
        for i in range(3):
            await stores.hashes.check_and_set("feed:f", f"https://a.example/{i}", "h", now=T0)
        assert await stores.hashes.urls_of_source("feed:f", limit=2) == ["https://a.example/0", "https://a.example/1"]
        assert len(await stores.hashes.urls_of_source("feed:f")) == 3
        # a page at a time, past the last URL of the page before
        assert await stores.hashes.urls_of_source("feed:f", 2, after="https://a.example/1") == ["https://a.example/2"]
        assert await stores.hashes.urls_of_source("feed:f", after="https://a.example/0") == [
            "https://a.example/1",
            "https://a.example/2",
        ]
        assert await stores.hashes.urls_of_source("feed:f", 2, after="https://a.example/2") == []


class ProblemHistoryContract:
    """A feed's problems over time (shared/problems/history.py), through the reports the store takes."""

    async def test_a_problem_opens_is_seen_again_resolves_and_comes_back_as_a_new_occurrence(
        self, stores: Stores
    ) -> None:
        p = stores.problems
        title = {"item.no_title": 2}
        await p.add_report(report("f1", 0, counts={**title, "image.not_found": 1}))
        await p.add_report(report("f1", 1, counts=title))  # the image is back
        await p.add_report(report("f1", 1, counts=title))  # a redelivery counts once
        await p.add_report(report("f1", 2, result="unchanged", counts=title))  # a body unchanged: still there
        got = {(o.code, o.open): o for o in await p.history("f1")}
        image = got[("image.not_found", False)]
        assert (image.first_seen, image.last_seen, image.resolved_at, image.seen) == (
            T0,
            T0,
            T0 + timedelta(minutes=1),
            1,
        )
        no_title = got[("item.no_title", True)]
        assert (no_title.first_seen, no_title.last_seen, no_title.seen) == (T0, T0 + timedelta(minutes=2), 3)
        await p.add_report(report("f1", 3, counts={}))  # fixed
        await p.add_report(report("f1", 4, counts={"image.not_found": 1}))  # back again
        history = await p.history("f1")
        assert [(o.code, o.open) for o in history] == [
            ("image.not_found", True),
            ("item.no_title", False),
            ("image.not_found", False),
        ]
        assert history[0].first_seen == T0 + timedelta(minutes=4)  # a new occurrence
        assert history[1].resolved_at == T0 + timedelta(minutes=3)
        assert await p.history("other") == []

    async def test_a_late_report_and_a_conflict_change_nothing_they_do_not_say(self, stores: Stores) -> None:
        p = stores.problems
        await p.add_report(report("f2", 5, counts={"item.no_title": 1}))
        await p.add_report(report("f2", 1, counts={}))  # older than what was seen: changes nothing
        await p.add_report(report("f2", 6, result="conflict", counts={"conflict.taken_over": 1}))
        assert sorted((o.code, o.open) for o in await p.history("f2")) == [
            ("conflict.taken_over", True),
            ("item.no_title", True),
        ]
