"""The webmaster's view of each fetch: every problem, structured, in the feed's history (cubes/parser/status.py).

Before: only the first refused item was reported ("2 item(s) refused; first: ..."), conflicts
reached the losing side as a log line, failed and unchanged fetches left no trace, and upload task
results were plain strings.
"""

from __future__ import annotations

import orjson

from shared.messages import CrawlResult, DocumentDeleted, FetchStatus, PartnerUpload, UploadFormat
from shared.problems import Severity, problem
from shared.stores import Feed, PageProblems, Task
from tests.unit.cubes.parser.test_parser_handler import T0, Env, docs, env, item, turbo_feed

__all__ = ["env"]  # the fixture, shared with the handler's tests


def bad(n: int, *, title: str | None = None, link: str | None = None) -> str:
    return (
        f'<item turbo="true"><title>{title if title is not None else f"Item {n}"}</title>'
        f"<link>{link or f'https://news.test/{n}'}</link>"
        f"<turbo:content><![CDATA[<p>text {n}</p>]]></turbo:content></item>"
    )


async def test_every_refused_item_is_in_the_report_with_its_code_and_hint(env: Env) -> None:
    body = turbo_feed(item(1), bad(2, title=""), bad(3, link="https://elsewhere.test/3"), bad(4, title=" "))
    assert [d.url for d in docs(await env.feed(body))] == ["https://news.test/1"]
    (report,) = await env.stores.problems.reports("f1")
    assert (report.result, report.items, report.changed, report.refused) == ("partial", 4, 1, 3)
    assert report.counts == {"item.foreign_host": 1, "item.no_title": 2}
    assert [(p.code, p.where.item, p.where.feed) for p in report.problems] == [
        ("item.no_title", 1, "f1"),
        ("item.foreign_host", 2, "f1"),
        ("item.no_title", 3, "f1"),
    ]
    assert all(p.hint and p.severity is Severity.error for p in report.problems)
    status = (await env.stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert status.last_error is not None
    assert status.last_error.startswith("3 item(s) refused (item.no_title x2, item.foreign_host x1); first: ")


def failed(env: Env, status: FetchStatus, **kw: object) -> CrawlResult:
    return env.result(None).model_copy(update={"status": status, **kw})


async def test_the_history_keeps_each_fetch_unchanged_and_failed_ones_too(env: Env) -> None:
    body = turbo_feed(item(1))
    await env.feed(body)
    await env.feed(body)  # byte for byte the same: nothing parsed, but the fetch happened
    await env.handle(failed(env, FetchStatus.http_4xx, http_status=404, error="HTTP 404"))
    await env.handle(failed(env, FetchStatus.blocked_address, error="127.0.0.1 is a loopback address"))
    await env.handle(failed(env, FetchStatus.not_modified, http_status=304))
    history = await env.stores.problems.reports("f1")
    assert [r.result for r in history] == ["not_modified", "blocked_address", "http_4xx", "unchanged", "parsed"]
    assert [[p.code for p in r.problems] for r in history] == [
        [],
        ["fetch.blocked_address"],
        ["fetch.not_found"],
        [],
        [],
    ]
    blocked = history[1].problems[0]
    assert "http.allowlist" in blocked.hint  # The refusal named no setting
    assert "127.0.0.1 is a loopback address" in blocked.message
    assert history[3].unchanged == 1


async def test_a_fetch_now_order_is_named_in_its_report(env: Env) -> None:
    await env.feed(turbo_feed(item(1)), requesters=["feed:f1", "fetch:order-1"])
    (report,) = await env.stores.problems.reports("f1")
    assert report.fetch_ids == ("order-1",)
    assert await env.stores.problems.report_for_fetch("f1", "order-1") == report


async def test_the_losing_feed_is_told_who_took_its_url(env: Env) -> None:
    await env.feed(turbo_feed(item(1)))
    up = PartnerUpload(
        task_id="t1",
        tenant_id="ten",
        host="news.test",
        format=UploadFormat.json,
        body=orjson.dumps([{"url": "https://news.test/1", "title": "Pushed"}]),
        received_at=T0,
    )
    await env.stores.tasks.create(Task(task_id="t1", tenant_id="ten", host="news.test"))
    assert docs(await env.handle(up))
    taken = (await env.stores.problems.reports("f1"))[0]
    assert taken.result == "conflict"
    (p,) = taken.problems
    assert (p.code, p.where.link) == ("conflict.taken_over", "https://news.test/1")
    assert "tenant:ten" in p.message
    # the feed's next edit of that item is refused: the page is the tenant's now (shared.webmaster.rights: the page
    # rule)
    await env.feed(turbo_feed(item(1, "edited")))
    refused = (await env.stores.problems.reports("f1"))[0]
    assert [(q.code, q.where.link) for q in refused.problems] == [("conflict.other_tenant", "https://news.test/1")]
    assert "another tenant's source" in refused.problems[0].message


async def test_upload_task_items_carry_their_problems(env: Env) -> None:
    await env.stores.tasks.create(Task(task_id="t9", tenant_id="ten", host="news.test"))
    up = PartnerUpload(
        task_id="t9",
        tenant_id="ten",
        host="news.test",
        format=UploadFormat.turbo,
        body=turbo_feed(item(1), bad(2, title="")),
        received_at=T0,
    )
    await env.handle(up)
    task = await env.stores.tasks.get("t9")
    assert task is not None
    by_url = {i.url: i for i in task.items}
    assert by_url["https://news.test/1"].problems == ()
    (p,) = by_url["https://news.test/2"].problems
    assert p.code == "item.no_title"
    assert [q.code for q in task.problems] == ["item.no_title"]
    assert task.errors == (p.describe(),)


async def test_a_not_modified_fetch_still_shows_what_the_body_refused(env: Env) -> None:
    """A feed polled every few minutes answers 304 most of the time: its refused items are still refused."""
    await env.feed(turbo_feed(item(1), bad(2, title="")))
    await env.handle(failed(env, FetchStatus.not_modified, http_status=304))
    await env.feed(turbo_feed(item(1), bad(2, title="")))  # the same body again
    await env.handle(failed(env, FetchStatus.http_5xx, http_status=503))
    history = await env.stores.problems.reports("f1")
    assert [r.result for r in history] == ["http_5xx", "unchanged", "not_modified", "partial"]
    assert [[p.code for p in r.problems] for r in history] == [
        ["fetch.server_error"],
        ["item.no_title"],
        ["item.no_title"],
        ["item.no_title"],
    ]
    assert [r.refused for r in history] == [0, 1, 1, 1]


async def test_a_capped_crawl_delay_is_told_in_every_report_of_the_fetch(env: Env) -> None:
    body = turbo_feed(item(1))
    await env.feed(body, crawl_delay_capped=86_400.0)  # parsed
    await env.feed(body, crawl_delay_capped=86_400.0)  # the same body: the last report's problems carried
    await env.handle(failed(env, FetchStatus.http_5xx, http_status=503, crawl_delay_capped=86_400.0))
    await env.feed(body)  # robots.txt asks for less now: nothing to tell
    history = await env.stores.problems.reports("f1")
    assert [[p.code for p in r.problems] for r in history] == [
        [],
        ["robots.crawl_delay_capped", "fetch.server_error"],
        ["robots.crawl_delay_capped"],  # once, though the report it carries over had it too
        ["robots.crawl_delay_capped"],
    ]
    told = history[1].problems[0]
    assert "86400 s" in told.message
    assert "crawler.max_crawl_delay_s" in told.hint
    assert history[2].counts == {"robots.crawl_delay_capped": 1}


async def test_fetch_now_publishes_again_the_pages_that_lost_something_whatever_the_body(env: Env) -> None:
    """A webmaster put a missing image back at the same URL and pressed "fetch now": the item was
    unchanged (nothing published), and its page stayed held back for the 7 days of media.failure_retry_s.
    Now the pages that lost something are published again, and their documents ask for the failed images
    to be fetched again at once (``retry_failed_before``); a routine poll still skips an unchanged body."""
    body = turbo_feed(item(1), item(2))
    first = docs(await env.feed(body))
    assert [d.retry_failed_before for d in first] == [None, None]
    held = first[1]
    lost = problem("page.incomplete", "held back", feed="f1", link=held.url)
    await env.stores.problems.put_page_problems(
        [PageProblems(held.url, held.version, "news.test", "turbo", "f1", (lost,), held=True)]
    )
    assert docs(await env.feed(body)) == []  # a routine poll: the same body, nothing to do
    again = env.result(body, requesters=["feed:f1", "fetch:order-2"])
    (rebuilt,) = docs(await env.handle(again))
    assert rebuilt.url == held.url
    assert rebuilt.version > held.version  # a version the kvwriter writes over what it has
    assert rebuilt.retry_failed_before == again.fetched_at
    (report,) = await env.stores.problems.reports("f1", limit=1)
    assert (report.changed, report.unchanged, report.fetch_ids) == (1, 1, ("order-2",))


async def test_a_turbo_removal_of_another_tenants_page_names_no_tenant_and_follows_the_page_rule(env: Env) -> None:
    """A second holder's Turbo feed removed (``turbo="false"``) a page another tenant had uploaded: the
    refusal named that tenant's source (``belongs to source tenant:ten``), and once the uploader's right
    had ended the upload's priority still refused it, where the page rule frees the page
    (shared/webmaster/rights.py)."""
    await env.stores.tenants.create_tenant("other", tenant_id="other")
    await env.stores.tenants.add_host("other", "news.test")
    await env.stores.tenants.set_verified("other", "news.test")
    await env.stores.feeds.upsert_feed(
        Feed(feed_id="f3", url="https://news.test/f3.xml", host="news.test", format="turbo", tenant_id="other")
    )
    up = PartnerUpload(
        task_id="t1",
        tenant_id="ten",
        host="news.test",
        format=UploadFormat.json,
        body=orjson.dumps([{"url": "https://news.test/1", "title": "Pushed"}]),
        received_at=T0,
    )
    await env.stores.tasks.create(Task(task_id="t1", tenant_id="ten", host="news.test"))
    assert docs(await env.handle(up))
    gone = turbo_feed(item(1, turbo="false"))

    assert [o.message for o in await env.feed(gone, "f3")] == []  # the uploader holds its right: it stays
    (refused,) = (await env.stores.problems.reports("f3"))[0].problems
    assert refused.code == "conflict.other_tenant"
    assert "ten" not in refused.message.replace("another tenant", "")

    await env.stores.tenants.set_verified("ten", "news.test", False)  # the uploader's right ended
    (removed,) = await env.feed(turbo_feed(item(1, "again", turbo="false")), "f3")  # a new body, not unchanged
    assert isinstance(removed.message, DocumentDeleted)
    assert removed.message.url == "https://news.test/1"
    assert not [p for r in await env.stores.problems.reports("f3") for p in r.problems if "tenant:" in p.message]


async def test_a_check_sharing_the_feeds_own_fetch_leaves_the_feed_its_fetch(env: Env) -> None:
    """The crawler fetches a URL once for all who asked: a check and the feed's poll of the same URL got
    one result, and the parser handled the check only -- the registered feed never saw its fetch."""
    await env.stores.tasks.create(Task(task_id="t1", tenant_id="ten", host="news.test"))
    shared = env.result(turbo_feed(item(1)), feed_id="", requesters=["check:t1", "feed:f1"])
    out = docs(await env.handle(shared.model_copy(update={"feed_id": None})))
    assert sorted(d.preview for d in out) == [False, True]  # a preview for the check, the page for the feed
    task = await env.stores.tasks.get("t1")
    assert task is not None
    assert task.status.value == "done"
    (report,) = await env.stores.problems.reports("f1")
    assert (report.result, report.changed) == ("parsed", 1)
    # and a copy of the check's remembered result, answering the feed's poll alone, names it by its requester
    alone = env.result(turbo_feed(item(1), item(2)), requesters=["feed:f1"]).model_copy(update={"feed_id": None})
    assert [d.url for d in docs(await env.handle(alone))] == ["https://news.test/2"]
    assert len(await env.stores.problems.reports("f1")) == 2


async def test_a_check_resolves_relative_links_against_the_feeds_own_url(env: Env) -> None:
    """A check parsed the fetched feed as an upload of its host (``https://host/``), so a relative image
    of a feed served at http://host:8080/ pointed elsewhere than the registered feed's (the check then
    judged another image)."""
    await env.stores.tasks.create(Task(task_id="t3", tenant_id="ten", host="news.test"))
    body = turbo_feed(item(1, '<img src="/img/a.png" alt="A">'))
    served = env.result(body, requesters=["check:t3"]).model_copy(
        update={"feed_id": None, "url": "http://news.test:8080/feeds/turbo.xml"}
    )
    (preview,) = docs(await env.handle(served))
    assert preview.preview
    assert "http://news.test:8080/img/a.png" in preview.content_html
    registered = env.result(body).model_copy(update={"url": "http://news.test:8080/feeds/turbo.xml"})
    (live,) = docs(await env.handle(registered))
    assert "http://news.test:8080/img/a.png" in live.content_html  # the same image as the registered feed's
