"""cubes.parser.handler on the embedded store: dedupe, deletions, conflicts, GUIDs, status, tasks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest

from cubes.parser.handler import ParserHandler
from cubes.parser.status import MAX_TASK_ITEMS
from shared.blobs import open_blobs
from shared.blobs.base import BlobStore
from shared.clock import ManualClock
from shared.errors import Reject
from shared.messages import (
    CrawlKind,
    CrawlRequest,
    CrawlResult,
    Document,
    DocumentDeleted,
    FetchStatus,
    PartnerUpload,
    SourceKind,
    UploadFormat,
)
from shared.runtime.cube import Context, Output
from shared.stores import Feed, Stores, Task, TaskStatus, open_stores
from shared.stores.sql.tasks import task_items_json

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def ctx(attempt: int = 1) -> Context:
    return Context(topic="crawl.feeds", partition=0, offset=0, key=None, attempt=attempt, received_at=T0)


def item(n: int, text: str = "text", *, link: str | None = None, guid: str | None = None, turbo: str = "true") -> str:
    g = f"<guid>{guid}</guid>" if guid else ""
    return (
        f'<item turbo="{turbo}"><title>Item {n}</title><link>{link or f"https://news.test/{n}"}</link>{g}'
        f"<pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>"
        f"<turbo:content><![CDATA[<header><h1>Item {n}</h1></header><p>{text}</p>]]></turbo:content></item>"
    )


def turbo_feed(*items: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:turbo="http://turbo.yandex.ru">'
        f"<channel><title>News</title><link>https://news.test/</link>{''.join(items)}</channel></rss>"
    ).encode()


class Env:
    def __init__(self, stores: Stores, blobs: BlobStore) -> None:
        self.stores = stores
        self.blobs = blobs
        self.clock = ManualClock(start=T0.timestamp())

        async def get_blobs() -> BlobStore:
            return blobs

        self.handler = ParserHandler(stores, get_blobs, clock=self.clock)

    def result(
        self,
        body: bytes | None,
        feed_id: str = "f1",
        *,
        url: str = "https://news.test/turbo.xml",
        content_type: str = "application/rss+xml",
        **kw: Any,
    ) -> CrawlResult:
        self.clock.advance(60)
        return CrawlResult(
            kind=CrawlKind.feed,
            url=url,
            host=urlsplit(url).hostname or "",
            status=FetchStatus.ok,
            body=body,
            feed_id=feed_id,
            content_type=content_type,
            fetched_at=self.clock.now(),
            **kw,
        )

    async def hashes_owner(self, url: str) -> str | None:
        owner = await self.stores.hashes.owner(url)
        return owner.source_id if owner else None

    async def feed(self, body: bytes | None, feed_id: str = "f1", *, commit: bool = True, **kw: Any) -> list[Output]:
        return await self.handle(self.result(body, feed_id, **kw), commit=commit)

    async def handle(self, msg: CrawlResult | PartnerUpload, *, commit: bool = True) -> list[Output]:
        """The handler, then (as the runtime does once the outputs are durable) its after-commit hooks."""
        c = ctx()
        out = list(await self.handler.handle(msg, c))
        if commit:
            for hook in c.committed_hooks or ():
                await hook()
        return out


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    blobs = await open_blobs(f"file://{tmp_path}/blobs")
    for fid in ("f1", "f2"):
        await stores.feeds.upsert_feed(
            Feed(feed_id=fid, url=f"https://news.test/{fid}.xml", host="news.test", format="turbo")
        )
    # the uploads' tenant: the parser reads its verified hosts when it parses (shared.webmaster.hosts)
    await stores.tenants.create_tenant("ten", tenant_id="ten")
    await stores.tenants.add_host("ten", "news.test")
    await stores.tenants.set_verified("ten", "news.test")
    try:
        yield Env(stores, blobs)
    finally:
        await stores.close()
        await blobs.close()


def docs(outputs: list[Output]) -> list[Document]:
    return [o.message for o in outputs if o.topic == "documents.parsed"]  # type: ignore[misc]


def deletions(outputs: list[Output]) -> list[DocumentDeleted]:
    return [o.message for o in outputs if o.topic == "documents.deleted"]  # type: ignore[misc]


async def test_dedupe_twice_edit_and_turbo_false(env: Env) -> None:
    body = turbo_feed(item(1), item(2), item(3))
    first = await env.feed(body)
    assert [d.url for d in docs(first)] == [f"https://news.test/{n}" for n in (1, 2, 3)]
    assert all(o.key == o.message.url for o in first if o.topic == "documents.parsed")  # type: ignore[attr-defined]
    # the first item published as the feed has it is checked against its page (cubes/parser/fulltext.py)
    (check,) = [o.message for o in first if o.topic == "crawl.requests"]
    assert isinstance(check, CrawlRequest)
    assert (check.url, check.requesters, check.document) == (docs(first)[0].url, ["parity:f1"], docs(first)[0])
    d1 = docs(first)[0]
    assert d1.source.kind is SourceKind.turbo
    assert d1.source.id == "f1"
    assert d1.seen_at == env.clock.now()
    assert await env.feed(body) == []  # same feed again: nothing

    edited = await env.feed(turbo_feed(item(1), item(2, "edited"), item(3)))
    [doc] = docs(edited)
    assert doc.url == "https://news.test/2"
    assert doc.version > docs(first)[1].version

    removed = await env.feed(turbo_feed(item(1), item(2, "edited"), item(3, turbo="false")))
    assert docs(removed) == []
    [tomb] = deletions(removed)
    assert tomb.url == "https://news.test/3"
    assert tomb.version > docs(first)[2].version
    assert await env.feed(turbo_feed(item(1), item(2, "edited"), item(3, turbo="false"))) == []

    status = (await env.stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert status.last_result == "parsed"
    assert status.last_error is None
    assert status.items == 3


async def test_parse_error_goes_to_the_feed_status_with_position(env: Env) -> None:
    assert await env.feed(b'<?xml version="1.0"?>\n<rss>\n<channel><title>t</title>\n</chanel></rss>') == []
    status = (await env.stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert status.last_result == "parse_error"
    assert status.last_error
    assert "well-formed" in status.last_error
    assert status.error_line == 4
    assert status.error_column is not None


async def test_hostile_feed_status(env: Env) -> None:
    bomb = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><rss><channel/></rss>'
    assert await env.feed(bomb) == []
    status = (await env.stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert status.last_error
    assert "entit" in status.last_error
    assert status.error_line == 1


async def test_off_host_item_is_refused_with_reason_and_others_kept(env: Env) -> None:
    out = await env.feed(turbo_feed(item(1), item(2, link="https://evil.test/2")))
    assert [d.url for d in docs(out)] == ["https://news.test/1"]
    status = (await env.stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert status.last_result == "partial"
    assert status.last_error
    assert "evil.test" in status.last_error
    assert "1 item(s) refused" in status.last_error


async def test_guid_follows_a_moved_item(env: Env) -> None:
    await env.feed(turbo_feed(item(1, guid="g1")))
    out = await env.feed(turbo_feed(item(1, guid="g1", link="https://news.test/renamed")))
    assert [d.url for d in docs(out)] == ["https://news.test/renamed"]
    [tomb] = deletions(out)
    assert tomb.url == "https://news.test/1"
    assert "moved" in tomb.reason
    assert await env.hashes_owner("https://news.test/1") is None


async def test_priority_decides_conflicts_and_both_sides_know(env: Env) -> None:
    await env.feed(turbo_feed(item(1)))
    # a plain RSS feed (lower priority) with the same URL: refused, its status says why
    rss = (
        b'<rss version="2.0"><channel><title>c</title><item><title>Other</title>'
        b"<link>https://news.test/1</link></item></channel></rss>"
    )
    out = await env.feed(rss, feed_id="f2")
    assert out == []
    status = (await env.stores.feeds.get("f2")).status  # type: ignore[union-attr]
    assert status.last_error
    assert "conflict" in status.last_error
    assert "feed:f1" in status.last_error

    # the partner API (higher priority) takes the URL over; the Turbo feed's status records it
    await env.stores.tasks.create(Task(task_id="t1", tenant_id="ten", host="news.test"))
    up = PartnerUpload(
        task_id="t1",
        tenant_id="ten",
        host="news.test",
        format=UploadFormat.json,
        body=orjson.dumps([{"url": "https://news.test/1", "title": "Pushed"}]),
        received_at=T0,
    )
    [pushed] = docs(await env.handle(up))
    assert pushed.source.kind is SourceKind.upload
    assert pushed.source.id == "t1"
    status = (await env.stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert status.last_result == "conflict"
    assert "tenant:ten" in (status.last_error or "")
    # and the Turbo feed no longer publishes it, even when it changes
    assert await env.feed(turbo_feed(item(1, "changed"))) == []


async def test_upload_task_results(env: Env) -> None:
    await env.stores.tasks.create(Task(task_id="t2", tenant_id="ten", host="news.test"))
    payload = {
        "documents": [
            {"url": "https://news.test/p1", "title": "P1", "content_html": "<p>x</p><script>x</script>"},
            {"url": "https://evil.test/p2", "title": "P2"},
            {"url": "https://news.test/p3"},
        ]
    }
    body = orjson.dumps(payload)
    ref = "uploads/ten/t2"
    await env.blobs.put(ref, body)
    up = PartnerUpload(
        task_id="t2",
        tenant_id="ten",
        host="news.test",
        format=UploadFormat.json,
        body_ref=ref,
        size=len(body),
        received_at=T0,
    )
    out = await env.handle(up)
    [doc] = docs(out)
    assert "<script>" not in doc.content_html
    task = await env.stores.tasks.get("t2")
    assert task is not None
    assert task.status is TaskStatus.done
    statuses = {i.url: i.status for i in task.items}
    assert statuses["https://news.test/p1"] == "ok"
    assert statuses["https://evil.test/p2"] == "rejected"
    assert any("title" in (i.error or "") for i in task.items if i.status == "rejected")


async def test_debug_upload_makes_previews_and_touches_no_hash(env: Env) -> None:
    await env.stores.tasks.create(Task(task_id="t3", tenant_id="ten", host="news.test"))
    up = PartnerUpload(
        task_id="t3",
        tenant_id="ten",
        host="news.test",
        format=UploadFormat.turbo,
        mode="debug",
        body=turbo_feed(item(7)),
        received_at=T0,
    )
    [doc] = docs(await env.handle(up))
    assert doc.preview
    assert await env.stores.hashes.get("tenant:ten", doc.url) is None
    task = await env.stores.tasks.get("t3")
    assert task is not None
    assert task.preview_urls == (doc.url,)


async def test_missing_blob_is_rejected(env: Env) -> None:
    with pytest.raises(Reject, match="does not exist"):
        await env.feed(None, body_ref="nope/missing")


async def test_nothing_is_recorded_before_the_outputs_are_durable(env: Env) -> None:
    """A crash between the handler and the publish: the redelivery produces the documents again."""
    body = turbo_feed(item(1, guid="g1"), item(2, turbo="false"))
    lost = await env.feed(body, commit=False)
    assert len(docs(lost)) == 1
    assert len(deletions(lost)) == 1
    assert await env.stores.hashes.get("feed:f1", "https://news.test/1") is None
    again = await env.feed(body)
    assert [d.url for d in docs(again)] == ["https://news.test/1"]
    assert docs(again)[0].version > docs(lost)[0].version
    assert [d.url for d in deletions(again)] == ["https://news.test/2"]
    stored = await env.stores.hashes.get("feed:f1", "https://news.test/1")
    assert stored is not None
    assert stored.version == docs(again)[0].version  # the version published is the version stored
    assert await env.stores.hashes.url_for_guid("feed:f1", "g1") == "https://news.test/1"
    assert await env.feed(body) == []


async def test_not_modified_is_ignored(env: Env) -> None:
    res = env.result(None).model_copy(update={"status": FetchStatus.not_modified})
    assert await env.handle(res) == []


def _sample(name: str, source: str) -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value(name, {"source": source}) or 0.0


async def test_counters_and_same_body_shortcut(env: Env) -> None:
    before = {
        n: _sample(f"turbocubes_parser_{n}_total", "turbo")
        for n in ("parsed", "changed", "unchanged", "deleted", "rejected")
    }
    await env.feed(turbo_feed(item(1), item(2), item(3, link="https://evil.test/3")))
    await env.feed(turbo_feed(item(1), item(2, "edited"), item(4, turbo="false")))
    same_before = _sample("turbocubes_parser_same_body_total", "turbo")
    assert await env.feed(turbo_feed(item(1), item(2, "edited"), item(4, turbo="false"))) == []
    assert _sample("turbocubes_parser_same_body_total", "turbo") == same_before + 1
    after = {n: _sample(f"turbocubes_parser_{n}_total", "turbo") - before[n] for n in before}
    assert after == {"parsed": 6, "changed": 3, "unchanged": 1, "deleted": 1, "rejected": 1}


async def test_a_feed_whose_right_ended_since_publishes_nothing(env: Env) -> None:
    """The scope is read at parse time (shared.webmaster.hosts): a right lost after registration counts; another
    tenant proving the host meanwhile takes nothing (several tenants hold rights on one origin)."""
    await env.stores.feeds.upsert_feed(
        Feed(feed_id="f3", url="https://news.test/f3.xml", host="news.test", format="turbo", tenant_id="ten")
    )
    assert docs(await env.feed(turbo_feed(item(1)), feed_id="f3"))  # published while "ten" holds the host
    await env.stores.tenants.create_tenant("other", tenant_id="other")
    await env.stores.tenants.add_host("other", "news.test")
    await env.stores.tenants.set_verified("other", "news.test")  # a second holder: "ten" keeps its right
    assert docs(await env.feed(turbo_feed(item(2)), feed_id="f3"))
    await env.stores.tenants.set_verified("ten", "news.test", False)  # its proof lapsed past its grace

    # the body is not even read: a blob that does not exist would be a Reject
    assert await env.feed(None, feed_id="f3", body_ref="feeds/never-written") == []
    status = (await env.stores.feeds.get("f3")).status  # type: ignore[union-attr]
    assert status.last_result == "parse_error"
    assert "not verified for this tenant any more" in (status.last_error or "")


async def test_a_feed_of_a_tenant_publishes_its_www_alias_only_when_both_are_verified(env: Env) -> None:
    await env.stores.feeds.upsert_feed(
        Feed(feed_id="f4", url="https://news.test/f4.xml", host="news.test", format="turbo", tenant_id="ten")
    )
    body = turbo_feed(item(1, link="https://www.news.test/1"))
    assert docs(await env.feed(body, feed_id="f4")) == []
    status = (await env.stores.feeds.get("f4")).status  # type: ignore[union-attr]
    assert "claim and verify www.news.test too" in (status.last_error or "")

    await env.stores.tenants.add_host("ten", "www.news.test")
    await env.stores.tenants.set_verified("ten", "www.news.test")
    [doc] = docs(await env.feed(body + b" ", feed_id="f4"))  # a changed body: the same one is skipped whole
    assert doc.url == "https://www.news.test/1"


async def test_a_big_upload_of_broken_items_keeps_a_bounded_task_and_counts_every_problem(env: Env) -> None:
    """One upload of 60,000 items stored 59,000 problem objects in its task: now the first
    items carry their problems, the next their code, none past ``MAX_TASK_ITEMS`` is listed, and
    the task counts them all, by code and by result."""
    n, good = 3_000, 50
    items = [f"<item><title>T{i}</title><link>https://news.test/p{i}</link></item>" for i in range(good)]
    items += [f"<item><link>https://news.test/broken{i}</link></item>" for i in range(n - good)]  # no title
    body = f'<rss version="2.0"><channel><title>c</title>{"".join(items)}</channel></rss>'.encode()
    await env.stores.tasks.create(Task(task_id="big", tenant_id="ten", host="news.test"))
    upload = PartnerUpload(
        task_id="big", tenant_id="ten", host="news.test", format=UploadFormat.rss, body=body, received_at=T0
    )
    assert len(docs(await env.handle(upload))) == good
    task = await env.stores.tasks.get("big")
    assert task is not None
    assert len(task.items) == MAX_TASK_ITEMS  # the first results are listed ...
    assert task.item_counts == {"ok": good, "rejected": n - good}  # ... and every one is counted
    assert all(i.status == "rejected" for i in task.items)  # the refusals come first
    assert sum(bool(i.problems) for i in task.items) == 100  # in full: the first hundred only
    rest = {i.error for i in task.items if i.status == "rejected" and not i.problems}
    assert rest == {"item.no_title", "item.too_many"}  # the others listed: the code of their problem
    # parser.max_items (1,000) read, the other 2,000 refused as too many: every one counted
    assert task.problem_counts == {"item.no_title": 1_000 - good, "item.too_many": n - 1_000}
    assert len(task.problems) == 50
    assert task.problems_more == n - good - 50
    assert task.errors[-1].startswith(f"{n - good - 50:,} more problems not listed")
    stored = len(task_items_json(task.items))
    assert stored < 200_000, f"the task's items take {stored:,} bytes"  # a few hundred KB whatever the upload


async def test_a_catalog_orders_no_page_crawl_for_its_listings(env: Env) -> None:
    # a category listing is our own page (cubes/parser/categories.py), not an article with an original: a
    # parity check fetched the shop's home page with ?turbo_category= and compared it to the listing
    await env.stores.feeds.upsert_feed(
        Feed(feed_id="shop", url="https://shop.test/yml.xml", host="shop.test", format="yml")
    )
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-01-01 10:00"><shop><name>S</name>'
        '<url>https://shop.test/</url><currencies><currency id="RUR" rate="1"/></currencies>'
        '<categories><category id="1">Кухня</category></categories><offers>'
        + "".join(
            f'<offer id="{n}"><url>https://shop.test/p/{n}</url><price>10</price><currencyId>RUR</currencyId>'
            f"<categoryId>1</categoryId><name>Offer {n}</name></offer>"
            for n in range(3)
        )
        + "</offers></shop></yml_catalog>"
    ).encode()
    out = await env.feed(body, "shop", url="https://shop.test/yml.xml", content_type="application/xml")
    assert sorted(d.url for d in docs(out)) == [
        "https://shop.test/?turbo_category=1",
        *(f"https://shop.test/p/{n}" for n in range(3)),
    ]
    assert [o.topic for o in out if o.topic not in ("documents.parsed", "documents.deleted")] == []
