"""Frontend routes on a real server on 127.0.0.1 (cubes/frontend/app.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from cubes.frontend.app import preview_key as frontend_preview_key
from cubes.frontend.cdn import safe_key
from cubes.kvwriter.handler import KvwriterHandler
from cubes.kvwriter.render import preview_key as kvwriter_preview_key
from shared.blobs import open_blobs
from shared.config import Settings
from shared.messages import Document, Media, SourceKind, SourceRef
from shared.stores import open_stores

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
URL = "https://news.example/a/rockets"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def make_doc(url: str, title: str, body: str, version: int = 1, **kw: object) -> Document:
    return Document.model_validate(
        {
            "url": url,
            "host": "news.example",
            "source": SourceRef(kind=SourceKind.rss, id="feed-1"),
            "title": title,
            "content_html": body,
            "content_hash": f"h{version}",
            "version": version,
            "seen_at": T0,
            "parsed_at": T0,
            **kw,
        }
    )


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"}, cdn={"url": f"file://{tmp_path}/cdn"}
    )
    stores = await open_stores(settings.store.url)
    cdn = await open_blobs(settings.cdn.url, public_base_url=settings.cdn.public_base_url)
    await cdn.put("img/ab/rocket.png", PNG)
    (tmp_path / "secret.txt").write_text("top secret")
    writer = KvwriterHandler(stores.pages, settings)
    await writer.handle(
        make_doc(
            URL,
            "Rockets over the lake",
            '<p>Rockets launched at dawn.</p><img src="https://news.example/pic.png">',
            media=[Media(url="https://news.example/pic.png", cdn_url="/cdn/img/ab/rocket.png")],
        )
    )
    await writer.handle(make_doc("https://news.example/b", "Quiet lake", "<p>Nothing happened on the lake.</p>"))
    await writer.handle(
        make_doc(
            URL,
            "Preview rocket",
            "<p>draft</p>",
            preview=True,
            source=SourceRef(kind=SourceKind.upload, id="t1"),
        )
    )
    await stores.index_queue.catch_up()  # what the indexer cube does within its period
    client = TestClient(TestServer(create_app(settings, stores, cdn), host="127.0.0.1", port=0))
    await client.start_server()
    yield client
    await client.close()
    await stores.close()


async def test_turbo_page_with_etag_and_304(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/turbo", params={"url": "HTTPS://NEWS.example:443/a/rockets#top"})
    assert r.status == 200
    body = await r.text()
    assert "Rockets over the lake" in body
    assert '<img src="/cdn/img/ab/rocket.png"' in body
    assert r.headers["Cache-Control"] == "public, max-age=60"
    assert r.headers["Content-Type"] == "text/html; charset=utf-8"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    csp = r.headers["Content-Security-Policy"]
    assert csp.startswith("default-src 'none'; img-src 'self'; style-src 'self' 'unsafe-inline'; media-src 'self';")
    assert "frame-src https://www.youtube.com" in csp
    etag = r.headers["ETag"]
    r2 = await client.get("/turbo", params={"url": URL}, headers={"If-None-Match": etag})
    assert r2.status == 304
    assert await r2.read() == b""
    r3 = await client.get("/turbo", params={"url": URL}, headers={"If-None-Match": f'"other", W/{etag}'})
    assert r3.status == 304
    r4 = await client.get("/turbo", params={"url": URL}, headers={"If-None-Match": '"stale"'})
    assert r4.status == 200


async def test_every_page_links_one_stylesheet_cached_for_a_year(
    client: TestClient[web.Request, web.Application],
) -> None:
    """Every page carried the whole stylesheet inline (5.6 KB, 1.9 KB gzipped, in each of them)."""
    from shared.pages.style import FIRST_PAINT_CSS, PAGE_CSS, STYLESHEET_PATH

    pages = [await (await client.get("/turbo", params={"url": u})).text() for u in (URL, "https://news.example/b")]
    for body in pages:
        assert f'<link rel="stylesheet" href="{STYLESHEET_PATH}">' in body
        assert f"<style>{FIRST_PAINT_CSS}</style>" in body  # only the first paint's rules inline
        assert PAGE_CSS not in body
    sheet = await client.get(STYLESHEET_PATH)
    assert sheet.status == 200
    assert sheet.headers["Content-Type"].startswith("text/css")
    assert sheet.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert await sheet.text() == PAGE_CSS
    # its name is its digest: another name is nobody's stylesheet
    assert (await client.get("/static/turbo-0000000000000000.css")).status == 404
    assert (await client.get("/static/..%2Fsecret.txt")).status == 404


async def test_turbo_404_and_400_are_friendly(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/turbo", params={"url": "https://news.example/missing"})
    assert r.status == 404
    body = await r.text()
    assert "No Turbo page for this address" in body
    assert 'href="https://news.example/missing"' in body
    r = await client.get("/turbo", params={"url": "javascript:alert(1)"})
    assert r.status == 400
    assert "That address does not work" in await r.text()
    r = await client.get("/turbo")
    assert r.status == 400
    r = await client.get("/no/such/path")
    assert r.status == 404
    assert "Page not found" in await r.text()
    assert r.headers["Content-Security-Policy"].startswith("default-src 'none'")


async def test_api_json_form(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/api/v1/pages", params={"url": URL})
    assert r.status == 200
    form = orjson.loads(await r.read())
    assert form["title"] == "Rockets over the lake"
    assert form["media"][0]["url"] == "/cdn/img/ab/rocket.png"
    assert r.headers["ETag"] == form["etag"]
    r = await client.get("/api/v1/pages", params={"url": "https://news.example/missing"})
    assert r.status == 404
    assert orjson.loads(await r.read())["error"] == "not_found"
    r = await client.get("/api/v1/pages", params={"url": "nonsense"})
    assert r.status == 400
    assert orjson.loads(await r.read())["error"] == "bad_url"


async def test_search_results_carry_the_rocket_badge(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/search", params={"q": "rockets"})
    assert r.status == 200
    body = await r.text()
    assert body.count('class="hit"') == 1
    assert 'href="/turbo?url=https%3A%2F%2Fnews.example%2Fa%2Frockets"' in body
    assert 'class="badge"' in body
    assert "<mark>" in body
    body = await (await client.get("/search", params={"q": "lake"})).text()
    assert body.count('class="hit"') == 2
    assert "Preview rocket" not in body
    body = await (await client.get("/search", params={"q": "rockkets", "type": "article"})).text()
    assert 'Did you mean <a href="/search?q=rockets&amp;type=article">rockets</a>?' in body  # from the index
    body = await (await client.get("/search", params={"q": "<script>zzz"})).text()
    assert "Nothing matches <b>&lt;script&gt;zzz</b>" in body
    assert (await client.get("/search")).status == 200


async def test_home_status_health(client: TestClient[web.Request, web.Application]) -> None:
    body = await (await client.get("/")).text()
    assert "Rockets over the lake" in body
    assert "Quiet lake" in body
    assert "Preview rocket" not in body
    assert '<form class="search" action="/search"' in body
    r = await client.get("/status")
    assert r.status == 200
    assert "Pipeline status" in await r.text()
    r = await client.get("/healthz")
    assert orjson.loads(await r.read()) == {"status": "ok"}
    r = await client.get("/favicon.svg")
    assert r.headers["Content-Type"].startswith("image/svg+xml")


async def test_preview_page(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/preview", params={"task": "t1", "url": URL})
    assert r.status == 200
    assert "Preview rocket" in await r.text()
    assert r.headers["Cache-Control"] == "no-store"
    assert r.headers["X-Robots-Tag"] == "noindex"
    assert (await client.get("/preview", params={"task": "t2", "url": URL})).status == 404


async def test_cdn_serves_files_and_refuses_traversal(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/cdn/img/ab/rocket.png")
    assert r.status == 200
    assert await r.read() == PNG
    assert r.headers["Content-Type"] == "image/png"
    assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    for path in (
        "/cdn/../secret.txt",
        "/cdn/%2e%2e/secret.txt",
        "/cdn/img/%2e%2e/%2e%2e/secret.txt",
        "/cdn/..%2fsecret.txt",
        "/cdn/%2fetc%2fpasswd",
        "/cdn/img/ab/.hidden",
        "/cdn/img/ab/missing.png",
    ):
        r = await client.get(path)
        assert r.status == 404, path
        assert b"top secret" not in await r.read()


async def test_cdn_traversal_refused_on_the_raw_wire(client: TestClient[web.Request, web.Application]) -> None:
    """Paths sent byte for byte (a client library would normalize the dot segments away)."""
    for raw in (
        "/cdn/../secret.txt",
        "/cdn/img/../../secret.txt",
        "/cdn/%2e%2e/secret.txt",
        "/cdn/..%5csecret.txt",
    ):
        reader, writer = await asyncio.open_connection("127.0.0.1", client.port)
        writer.write(f"GET {raw} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        response = await asyncio.wait_for(reader.read(), timeout=10)
        writer.close()
        await writer.wait_closed()
        assert response.startswith(b"HTTP/1.1 404"), (raw, response[:40])
        assert b"top secret" not in response


def test_safe_key() -> None:
    assert safe_key("img/ab/abc.jpg")
    for bad in ("../x", "img/../../x", "/etc/passwd", "img//x", "img/.x", "img\\..\\x", "a\x00b", ""):
        assert not safe_key(bad), bad


def test_preview_key_agrees_with_the_kvwriter() -> None:
    assert frontend_preview_key("t", URL) == kvwriter_preview_key("t", URL)


async def test_search_highlights_whole_words_only(tmp_path: Path) -> None:
    # A query "the lights" marked "the" inside "nor<mark>the</mark>rn"
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    writer = KvwriterHandler(stores.pages, settings)
    await writer.handle(
        make_doc("https://news.example/c", "Northern lights", "<p>The northern lights over the bay.</p>")
    )
    await stores.index_queue.catch_up()
    client = TestClient(TestServer(create_app(settings, stores), host="127.0.0.1", port=0))
    await client.start_server()
    try:
        body = await (await client.get("/search", params={"q": "the lights"})).text()
    finally:
        await client.close()
        await stores.close()
    assert "nor<mark>" not in body
    assert "<mark>lights</mark>" in body
