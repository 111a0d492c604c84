"""The crawler handler against the partner server: topics by kind, blobs, coalescing, robots, SSRF."""

from __future__ import annotations

import asyncio
import hashlib
import io
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from cubes.crawler.fetch_one import fetch_command
from cubes.crawler.handler import CrawlHandler
from shared.blobs import BlobStore, open_blobs
from shared.messages import CrawlKind, FetchStatus
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer
from tests.unit.cubes.crawler.crawlkit import CTX, crawl_result, fast_settings, make_handler, request

A, B = "a.partner.test", "b.partner.test"
#: the blob store each handler of the fixture writes to (for the assertions)
BLOBS: dict[CrawlHandler, BlobStore] = {}


@pytest.fixture
async def handler(partner_resolver: PartnerResolver, tmp_path: Path) -> AsyncIterator[CrawlHandler]:
    blobs = await open_blobs(f"file://{tmp_path}/blobs")

    async def get_blobs() -> BlobStore:
        return blobs

    h = make_handler(fast_settings(inline_body_max=1000), partner_resolver, blobs=get_blobs)
    BLOBS[h] = blobs  # for the assertions
    yield h
    await h.fetcher.close()
    await blobs.close()


@pytest.mark.parametrize(
    ("kind", "path", "topic"),
    [
        (CrawlKind.feed, "/feed.xml", "crawl.feeds"),
        (CrawlKind.image, "/img/a.jpg", "crawl.images"),
        (CrawlKind.video, "/img/v.png", "crawl.images"),
        (CrawlKind.page, "/page/1", "crawl.pages"),
    ],
)
async def test_result_topic_by_kind(
    partner: PartnerServer, handler: CrawlHandler, kind: CrawlKind, path: str, topic: str
) -> None:
    url = partner.url(A, path)
    [out] = await handler.handle(request(url, A, kind, requesters=["x"], feed_id="f1"), CTX)
    assert out.topic == topic
    r = crawl_result(out)
    assert (r.status, r.http_status, r.kind, r.url, r.host, r.feed_id) == (FetchStatus.ok, 200, kind, url, A, "f1")
    assert r.requesters == ["x"]
    assert r.size > 0
    assert (r.body is None) == (r.body_ref is not None)


async def test_large_body_goes_to_the_blob_store(
    partner: PartnerServer, handler: CrawlHandler, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spills = tmp_path / "spills"
    spills.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spills))

    async def no_whole_body_put(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a body over inline_body_max is streamed to disk and put from the file")

    monkeypatch.setattr(BLOBS[handler], "put", no_whole_body_put)
    body = b"<rss>" + b"x" * 5000 + b"</rss>"
    partner.set(A, "/big.xml", body, headers={"Content-Type": "application/rss+xml"})
    [out] = await handler.handle(request(partner.url(A, "/big.xml"), A), CTX)
    r = crawl_result(out)
    assert r.body is None
    assert r.size == len(body)
    assert r.body_ref is not None
    assert await BLOBS[handler].get(r.body_ref) == body
    assert r.body_ref == f"crawl/feed/{hashlib.sha256(body).hexdigest()}"  # content-addressed, as before
    assert list(spills.iterdir()) == []  # the body went to disk on its way in, and the file is gone
    small = await handler.handle(request(partner.url(A, "/ok"), A, requesters=["y"]), CTX)
    assert crawl_result(small[0]).body == b"ok"


async def test_three_requesters_one_server_hit(partner: PartnerServer, handler: CrawlHandler) -> None:
    url = partner.url(A, "/feed.xml")
    reqs = [request(url, A, requesters=[f"feed:{i}"]) for i in range(3)]
    outs = await asyncio.gather(*(handler.handle(r, CTX) for r in reqs))
    assert len(partner.hits(A, "/feed.xml")) == 1
    results = [crawl_result(o) for out in outs for o in out]
    assert sorted(x for r in results for x in r.requesters) == ["feed:0", "feed:1", "feed:2"]
    assert len(results) == 1  # one result carries them all
    # within the freshness window a new asker is served without a hit
    [late] = await handler.handle(request(url, A, requesters=["media:doc"]), CTX)
    assert crawl_result(late).requesters == ["media:doc"]
    assert len(partner.hits(A, "/feed.xml")) == 1
    # ... while an asker already served who asks again (a push, a nudge) gets a fresh fetch
    [again] = await handler.handle(request(url, A, requesters=["feed:1"]), CTX)
    assert crawl_result(again).requesters == ["feed:1"]
    assert len(partner.hits(A, "/feed.xml")) == 2


async def test_etag_304(partner: PartnerServer, handler: CrawlHandler) -> None:
    url = partner.url(A, "/etag")
    [first] = await handler.handle(request(url, A), CTX)
    etag = crawl_result(first).headers["etag"]
    [again] = await handler.handle(request(url, A, requesters=["feed:1"], etag=etag), CTX)
    assert crawl_result(again).status is FetchStatus.not_modified
    assert crawl_result(again).body is None
    assert partner.hits(A, "/etag")[-1].headers["If-None-Match"] == etag


async def test_robots_disallow_means_no_request(partner: PartnerServer, handler: CrawlHandler) -> None:
    partner.set_robots(A, "User-agent: *\nDisallow: /private\n")
    [out] = await handler.handle(request(partner.url(A, "/private/feed.xml"), A), CTX)
    assert crawl_result(out).status is FetchStatus.robots_denied
    assert partner.hits(A, "/private/feed.xml") == []
    [ok] = await handler.handle(request(partner.url(A, "/feed.xml"), A), CTX)
    assert crawl_result(ok).status is FetchStatus.ok
    assert len(partner.hits(A, "/robots.txt")) == 1  # cached per host


async def test_robots_for_our_agent(partner: PartnerServer, handler: CrawlHandler) -> None:
    partner.set_robots(A, "User-agent: TurbocubesBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    [out] = await handler.handle(request(partner.url(A, "/feed.xml"), A), CTX)
    assert crawl_result(out).status is FetchStatus.robots_denied


@pytest.mark.parametrize(
    ("code", "status"),
    [(404, FetchStatus.ok), (403, FetchStatus.ok), (503, FetchStatus.robots_denied), (500, FetchStatus.robots_denied)],
)
async def test_robots_status_codes(
    partner: PartnerServer, handler: CrawlHandler, code: int, status: FetchStatus
) -> None:
    partner.set_robots(A, "User-agent: *\nDisallow: /\n", status=code)  # the body must not matter
    [out] = await handler.handle(request(partner.url(A, "/feed.xml"), A), CTX)
    assert crawl_result(out).status is status
    assert len(partner.hits(A, "/feed.xml")) == (1 if status is FetchStatus.ok else 0)


async def test_robots_crawl_delay_reaches_the_lane(partner: PartnerServer, handler: CrawlHandler) -> None:
    partner.set_robots(B, "User-agent: *\nCrawl-delay: 0.05\n")
    await handler.handle(request(partner.url(B, "/ok"), B), CTX)
    assert handler.lanes.get(B).crawl_delay == 0.05


async def test_ssrf_and_bad_urls_become_results(partner: PartnerServer, partner_resolver: PartnerResolver) -> None:
    from shared.config import Settings
    from tests.unit.cubes.crawler.crawlkit import make_handler as mk

    h = mk(Settings(), partner_resolver)  # no allowlist
    try:
        for url in ("http://127.0.0.1/", "http://169.254.169.254/", "gopher://x/", partner.url(A, "/ok")):
            [out] = await h.handle(request(url, "x"), CTX)
            assert crawl_result(out).status is FetchStatus.blocked_address, url
            assert crawl_result(out).error
        [bad] = await h.handle(request("http:///nohost", "x"), CTX)
        assert crawl_result(bad).status is FetchStatus.bad_url
    finally:
        await h.fetcher.close()
    assert partner.hits(A) == []


async def test_paused_lane_answers_throttled_at_once(partner: PartnerServer, partner_resolver: PartnerResolver) -> None:
    h = make_handler(fast_settings(max_lane_wait_s=0.5), partner_resolver)
    try:
        partner.set(A, "/busy", "no", status=429, headers={"Retry-After": "3600"})
        [first] = await h.handle(request(partner.url(A, "/busy"), A), CTX)
        assert crawl_result(first).status is FetchStatus.throttled
        [second] = await h.handle(request(partner.url(A, "/feed.xml"), A), CTX)
        assert crawl_result(second).status is FetchStatus.throttled
        assert "lane busy" in (crawl_result(second).error or "")
        assert partner.hits(A, "/feed.xml") == []
    finally:
        await h.fetcher.close()


async def test_fetch_command(partner: PartnerServer, partner_resolver: PartnerResolver) -> None:
    from shared.config import Settings

    out, err = io.StringIO(), io.StringIO()
    code = await fetch_command(
        Settings(),
        partner.url(A, "/etag"),
        kind=CrawlKind.feed,
        allow=["127.0.0.1/32"],
        resolver=partner_resolver,
        out=out,
        err=err,
    )
    assert code == 0
    text = out.getvalue()
    assert "status:      ok" in text
    assert 'etag: "v1"' in text

    out, err = io.StringIO(), io.StringIO()
    code = await fetch_command(Settings(), partner.url(A, "/etag"), resolver=partner_resolver, out=out, err=err)
    assert code == 1
    assert "blocked_address" in err.getvalue()
    assert "loopback" in err.getvalue()

    partner.set_robots(A, "User-agent: *\nDisallow: /\n")
    out, err = io.StringIO(), io.StringIO()
    code = await fetch_command(
        Settings(), partner.url(A, "/feed.xml"), allow=["127.0.0.1/32"], resolver=partner_resolver, out=out, err=err
    )
    assert code == 1
    assert "robots_denied" in err.getvalue()


def test_fetch_is_a_turbocubes_command(capsys: pytest.CaptureFixture[str]) -> None:
    from cubes.cli import main

    # refused before any network I/O: the scheme, then a loopback literal without --allow
    assert main(["fetch", "gopher://example.com/"]) == 1
    assert "scheme 'gopher' is not allowed" in capsys.readouterr().err
    assert main(["fetch", "--kind", "feed", "http://[::ffff:127.0.0.1]:1/feed.xml"]) == 1
    assert "loopback" in capsys.readouterr().err


async def test_budget_ends_a_slow_fetch_as_a_result(partner: PartnerServer, partner_resolver: PartnerResolver) -> None:
    import time

    from cubes.crawler.handler import CrawlHandler
    from shared.clock import SystemClock
    from shared.http import Fetcher

    settings = fast_settings()  # http.total_timeout_s = 2.0
    clock = SystemClock()
    h = CrawlHandler(settings, Fetcher(settings, resolver=partner_resolver, clock=clock), clock, budget_s=0.4)
    try:
        start = time.monotonic()
        [out] = await h.handle(request(partner.url(A, "/slow-drip?interval=0.05"), A), CTX)
        assert crawl_result(out).status is FetchStatus.timeout
        assert time.monotonic() - start < 1.5  # the budget, not the 2 s total timeout
        # a robots.txt cut short by the budget is reported but not remembered as "unreachable"
        partner.set_handler(B, "/robots.txt", partner_slow_robots)
        [slow] = await h.handle(request(partner.url(B, "/ok"), B), CTX)
        assert crawl_result(slow).status is FetchStatus.timeout
        assert "deadline" in (crawl_result(slow).error or "")
        assert len(h.robots._entries) == 1  # only A's
    finally:
        await h.fetcher.close()


async def partner_slow_robots(request: web.Request) -> web.StreamResponse:
    from aiohttp import web

    resp = web.StreamResponse()
    await resp.prepare(request)
    try:
        for _ in range(40):
            await resp.write(b"#")
            await asyncio.sleep(0.05)  # the partner misbehaving, not the test synchronising
    except ConnectionError:
        pass  # the crawler hung up, as it should
    return resp


async def test_a_refused_local_feed_names_the_setting_not_robots_txt(
    partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    """The SSRF refusal of a local test feed blamed robots.txt and named no setting."""
    from shared.config import Settings
    from tests.unit.cubes.crawler.crawlkit import make_handler as mk

    h = mk(Settings(), partner_resolver)  # no allowlist; a.partner.test resolves to 127.0.0.1
    try:
        [out] = await h.handle(request(partner.url(A, "/feed.xml"), A), CTX)
    finally:
        await h.fetcher.close()
    assert crawl_result(out).status is FetchStatus.blocked_address
    assert not (crawl_result(out).error or "").startswith("robots.txt")
    assert "127.0.0.1" in (crawl_result(out).error or "")
    assert "http.allowlist" in (crawl_result(out).error or "")


async def test_a_crawl_delay_over_the_cap_is_held_to_it_and_reported(
    partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    partner.set_robots(B, "User-agent: *\nCrawl-delay: 86400\n")
    h = make_handler(fast_settings(max_crawl_delay_s=0.05), partner_resolver)
    try:
        [first] = await h.handle(request(partner.url(B, "/ok"), B), CTX)
        lane = h.lanes.get(B)
        assert lane.crawl_delay == 0.05  # a day between requests would let one poll a day through
        assert crawl_result(first).status is FetchStatus.ok
        assert crawl_result(first).crawl_delay_capped == 86_400.0
        [second] = await h.handle(request(partner.url(B, "/feed.xml"), B), CTX)
        assert crawl_result(second).status is FetchStatus.ok  # within max_lane_wait_s: the cap is what is waited
        partner.set_robots(B, "User-agent: *\nCrawl-delay: 0.01\n")
    finally:
        await h.fetcher.close()
    h2 = make_handler(fast_settings(max_crawl_delay_s=0.05), partner_resolver)
    try:
        [out] = await h2.handle(request(partner.url(B, "/ok"), B), CTX)
        assert crawl_result(out).crawl_delay_capped is None  # it asks for no more than we honour
    finally:
        await h2.fetcher.close()


async def test_a_feed_with_credentials_shares_no_fetch_with_askers_without_them(
    partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    """Coalescing answered every asker of a URL with one fetch: one sent without another tenant's
    credentials must not get what they fetched."""
    from shared.secretbox import SecretBox, new_key
    from shared.webmaster.feed_options import parse_options, seal_options

    settings = fast_settings().replace(secrets={"key": new_key()})
    _, sealed = seal_options(parse_options({"headers": {"X-Api-Key": "k1"}}), SecretBox.from_settings(settings))
    h = make_handler(settings, partner_resolver)
    try:
        url = partner.url(A, "/echo")
        [first] = await h.handle(request(url, A, requesters=["feed:1"], credentials=sealed), CTX)
        [second] = await h.handle(request(url, A, requesters=["feed:2"]), CTX)
        with_key, without = crawl_result(first), crawl_result(second)
        assert [hit.headers.get("X-Api-Key") for hit in partner.hits(A, "/echo")] == ["k1", None]
        assert with_key.requesters == ["feed:1"]
        assert without.requesters == ["feed:2"]
        # a token that does not open (the key changed) is a result naming it, and nothing is fetched
        other = make_handler(fast_settings().replace(secrets={"key": new_key()}), partner_resolver)
        try:
            [out] = await other.handle(request(url, A, requesters=["feed:1"], credentials=sealed), CTX)
            bad = crawl_result(out)
            assert bad.status is FetchStatus.credentials_error
            assert "secrets.key" in (bad.error or "")
            assert len(partner.hits(A, "/echo")) == 2
        finally:
            await other.fetcher.close()
    finally:
        await h.fetcher.close()


async def test_a_feed_items_document_rides_its_page_request_to_the_result(
    partner: PartnerServer, handler: CrawlHandler
) -> None:
    # the page completes the item (cubes/parser/fulltext.py): the result must carry the document back,
    # and never join another requester's fetch that would come back without it
    from datetime import UTC, datetime

    from shared.messages import Document, SourceKind, SourceRef

    now = datetime.now(UTC)
    url = partner.url(A, "/page/2")
    doc = Document(
        url=url,
        host=A,
        source=SourceRef(kind=SourceKind.rss, id="f1"),
        title="An item",
        content_hash="xxh3:0",
        version=7,
        seen_at=now,
        parsed_at=now,
    )
    plain, carried = await asyncio.gather(
        handler.handle(request(url, A, CrawlKind.page, requesters=["autoparser:a"]), CTX),
        handler.handle(request(url, A, CrawlKind.page, requesters=["fulltext:f1"], document=doc), CTX),
    )
    assert [crawl_result(o).document for o in plain] == [None]
    assert [(o.topic, crawl_result(o).document, crawl_result(o).requesters) for o in carried] == [
        ("crawl.pages", doc, ["fulltext:f1"])
    ]
