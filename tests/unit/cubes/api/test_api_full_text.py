"""A summary-only feed, end to end on the embedded engines and a real partner: the feed registered through
the API, fetched by the real crawler cube, parsed by the real parser cube, each summary item's page fetched
by the crawler through the host's lane and read by the real autoparser cube. The Turbo page carries the
page's article under the feed's title; a page that cannot be read keeps the feed's text and says so; a feed
switched to ``full_text=never`` asks the partner for no page; a Japanese item's page reaches the reader
through the media and kvwriter cubes and the frontend."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import quote

from aiohttp.test_utils import TestClient, TestServer

from cubes.autoparser.cube import build as build_autoparser
from cubes.crawler.cube import build as build_crawler
from cubes.frontend.app import create_app as create_frontend
from cubes.kvwriter.cube import build as build_kvwriter
from cubes.media.cube import build as build_media
from cubes.parser.cube import build as build_parser
from shared.messages import CrawlRequest, Document
from shared.runtime import run_cube
from shared.stores import Page
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness, api_settings
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, article_page
from tests.unit.cubes.autoparser.hard_pages import JAPANESE, JAPANESE_TITLE, japanese_page

HOST = "a.partner.test"


def _feed(base: str) -> bytes:
    """Two items given as one-sentence summaries and "Read more": the articles are on the site."""
    items = "".join(
        f"<item><title>{title}</title><link>{base}/story/{n}</link>"
        f"<pubDate>Tue, 14 May 2024 06:00:00 GMT</pubDate>"
        f"<description>{PARAGRAPHS[0].split('. ')[0]}. Read more…</description></item>"
        for n, title in ((1, "Bridge: the council says yes"), (2, "A page that is gone"))
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()


async def _run(api: ApiHarness, build: object, n: int) -> None:
    """Run a cube until it has handled ``n`` messages, the harness's clock passing meanwhile: the host's
    lane lets one request a second through (the harness's clock otherwise stands still)."""
    cube = await build(api.settings, api.deps)  # type: ignore[operator]

    async def time_passes() -> None:
        while True:
            await asyncio.sleep(0.02)  # simulated time, not a synchronization: the cube's own waits end
            api.clock.advance(0.25)

    ticker = asyncio.create_task(time_passes())
    try:
        await run_cube(cube, api.deps, max_messages=n, idle_timeout=10.0)
    finally:
        ticker.cancel()


async def test_a_summary_item_is_published_with_its_pages_article(tmp_path: Path, partner: PartnerServer) -> None:
    base = f"http://{HOST}:{partner.port}"
    partner.set(HOST, "/feed.xml", _feed(base), headers={"Content-Type": "application/rss+xml"})
    partner.set(
        HOST, "/story/1", article_page(canonical=f"{base}/story/1").encode(), headers={"Content-Type": "text/html"}
    )
    partner.set(HOST, "/story/2", b"gone", status=404)
    async with ApiHarness(tmp_path, settings=api_settings(tmp_path)) as api:
        _, token = await api.tenant(HOST, origin=base)
        r = await api.client.post("/api/v1/feeds", json={"url": f"{base}/feed.xml"}, headers=api.auth(token))
        assert r.status == 201, await r.text()
        feed = await r.json()
        assert feed["options"]["full_text"] == "auto"  # the default
        assert (await api.client.post(f"/api/v1/feeds/{feed['feed_id']}/fetch", headers=api.auth(token))).status == 202

        await _run(api, build_crawler, 1)  # the feed
        await _run(api, build_parser, 1)
        assert [d for d in await api.messages("documents.parsed") if isinstance(d, Document)] == []  # none thin
        orders = [m for m in await api.messages("crawl.requests") if isinstance(m, CrawlRequest) and m.document]
        assert sorted(o.url for o in orders) == [f"{base}/story/1", f"{base}/story/2"]
        assert {o.host for o in orders} == {HOST}  # keyed by host: the host's own lane
        await _run(api, build_crawler, 2)  # the two pages
        assert len(partner.hits(HOST, "/story/1")) == 1  # fetched once
        await _run(api, build_autoparser, 2)

        docs = {d.url: d for d in await api.messages("documents.parsed") if isinstance(d, Document)}
        full, kept = docs[f"{base}/story/1"], docs[f"{base}/story/2"]
        assert full.title == "Bridge: the council says yes"  # the feed's title and source
        assert full.source.kind.value == "rss"
        assert full.source.id == feed["feed_id"]
        assert all(p in full.content_html for p in PARAGRAPHS)  # the page's whole article
        assert "Read more" not in full.content_html
        owner = await api.stores.hashes.owner(full.url)
        assert owner is not None
        assert owner.source_id == f"feed:{feed['feed_id']}"  # the feed owns its page: nothing outranked
        assert "Read more" in kept.content_html  # the feed's text when the page cannot be read
        for doc in (full, kept):  # written as the kvwriter would, so that their problems show
            row = Page(url=doc.url, host=doc.host, version=doc.version, title=doc.title, source_kind="rss")
            await api.stores.pages.upsert(row)
        problems = await api.stores.problems.page_problems(host=HOST)
        told = [(row.url, p.code, p.message) for row in problems for p in row.problems]
        assert [(u, c) for u, c, _ in told] == [(kept.url, "page.full_text_unavailable")]
        assert "answered 404" in told[0][2]


async def test_a_feed_set_to_never_asks_the_partner_for_no_page(tmp_path: Path, partner: PartnerServer) -> None:
    base = f"http://{HOST}:{partner.port}"
    partner.set(HOST, "/feed.xml", _feed(base), headers={"Content-Type": "application/rss+xml"})
    async with ApiHarness(tmp_path, settings=api_settings(tmp_path)) as api:
        _, token = await api.tenant(HOST, origin=base)
        body = {"url": f"{base}/feed.xml", "options": {"full_text": "never"}}
        r = await api.client.post("/api/v1/feeds", json=body, headers=api.auth(token))
        assert r.status == 201, await r.text()
        feed = await r.json()
        assert feed["options"]["full_text"] == "never"
        bad = await api.client.patch(
            f"/api/v1/feeds/{feed['feed_id']}", json={"options": {"full_text": "sometimes"}}, headers=api.auth(token)
        )
        assert bad.status == 422
        assert [f["field"] for f in (await bad.json())["fields"]] == ["options.full_text"]
        assert (await api.client.post(f"/api/v1/feeds/{feed['feed_id']}/fetch", headers=api.auth(token))).status == 202

        await _run(api, build_crawler, 1)
        await _run(api, build_parser, 1)
        docs = [d for d in await api.messages("documents.parsed") if isinstance(d, Document)]
        assert sorted(d.url for d in docs) == [f"{base}/story/1", f"{base}/story/2"]  # as the feed has them
        assert all("Read more" in d.content_html for d in docs)
        assert [m for m in await api.messages("crawl.requests") if isinstance(m, CrawlRequest) and m.document] == []


async def test_a_japanese_summary_item_is_published_with_its_pages_japanese_article(
    tmp_path: Path, partner: PartnerServer
) -> None:
    # the whole way a reader gets it: feed -> parser -> the item's page -> autoparser -> media -> kvwriter ->
    # the frontend. Japanese is written without spaces: its 12 paragraphs were "18 words", no article, and
    # the page kept the feed's one sentence
    base = f"http://{HOST}:{partner.port}"
    url = f"{base}/ja/otters"
    item = (
        f"<item><title>{JAPANESE_TITLE}</title><link>{url}</link><pubDate>Tue, 14 May 2024 06:00:00 GMT</pubDate>"
        f"<description>{JAPANESE[0]}…</description></item>"
    )
    feed = f'<?xml version="1.0"?><rss version="2.0"><channel><title>町の新聞</title>{item}</channel></rss>'
    partner.set(HOST, "/feed.xml", feed.encode(), headers={"Content-Type": "application/rss+xml"})
    partner.set(HOST, "/ja/otters", japanese_page().encode(), headers={"Content-Type": "text/html; charset=utf-8"})
    async with ApiHarness(tmp_path, settings=api_settings(tmp_path)) as api:
        _, token = await api.tenant(HOST, origin=base)
        r = await api.client.post("/api/v1/feeds", json={"url": f"{base}/feed.xml"}, headers=api.auth(token))
        assert r.status == 201, await r.text()
        feed_id = (await r.json())["feed_id"]
        assert (await api.client.post(f"/api/v1/feeds/{feed_id}/fetch", headers=api.auth(token))).status == 202
        await _run(api, build_crawler, 1)
        await _run(api, build_parser, 1)
        await _run(api, build_crawler, 1)
        await _run(api, build_autoparser, 1)
        await _run(api, build_media, 1)
        await _run(api, build_kvwriter, len(await api.records("documents.ready")))

        page = await api.stores.pages.get(url)
        assert page is not None
        assert page.source_kind == "rss"  # the feed's page, with the article of its page
        assert page.title == JAPANESE_TITLE
        for paragraph in JAPANESE:
            assert paragraph in page.text
        assert await api.stores.problems.page_problems(host=HOST) == []  # nothing refused, nothing unavailable
        async with TestClient(TestServer(create_frontend(api.settings, api.stores), host="127.0.0.1")) as reader:
            resp = await reader.get(f"/turbo?url={quote(url, safe='')}")
            assert resp.status == 200
            shown = await resp.text()
        assert all(p in shown for p in JAPANESE)
