"""The status page and its JSON form over a store filled here (cubes/frontend/status.py), on a ManualClock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from shared.clock import ManualClock
from shared.config import Settings
from shared.stores import Feed, Page, Stores, open_stores

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def _page(url: str, freshness_s: float) -> Page:
    written = T0 - timedelta(minutes=5)
    return Page(
        url=url,
        host=url.split("/")[2],
        version=1,
        html="<p>x</p>",
        doc_json=b"{}",
        title="t",
        text="x",
        seen_at=written - timedelta(seconds=freshness_s),
        written_at=written,
    )


async def fill(stores: Stores) -> None:
    feeds = stores.feeds
    for feed_id, url, fmt in (
        ("news-rss", "https://news.example/rss.xml", "rss"),
        ("news-broken", "https://news.example/broken.xml", "turbo"),
        ("shop-yml", "https://shop.example/catalog.yml", "yml"),
    ):
        await feeds.upsert_feed(Feed(feed_id=feed_id, url=url, host=url.split("/")[2], format=fmt))
    await feeds.update_status(
        "news-rss",
        last_fetch_at=T0 - timedelta(minutes=2),
        last_http_status=200,
        last_result="parsed",
        items=12,
        next_fetch_at=T0 + timedelta(minutes=10),
    )
    await feeds.update_status(
        "news-broken",
        last_fetch_at=T0 - timedelta(minutes=1),
        last_http_status=200,
        last_result="parse_error",
        last_error="<b>mismatched</b> tag: item",
        error_line=12,
        error_column=5,
    )
    await feeds.update_status(
        "shop-yml",
        last_fetch_at=T0 - timedelta(minutes=3),
        last_http_status=503,
        last_result="http_5xx",
        last_error="http_5xx: HTTP 503",
        consecutive_failures=3,
    )
    for i in range(2):
        await stores.delay.park(
            f"https://news.example/late/{i}",
            1,
            b"{}",
            [f"https://news.example/{i}.jpg"],
            T0 + timedelta(minutes=10),
            host="news.example",
            now=T0,
        )
    for i, seconds in enumerate((1.0, 2.0, 10.0)):
        await stores.pages.upsert(_page(f"https://news.example/a/{i}", seconds))
    await stores.pages.upsert(_page("https://shop.example/p/1", 4.0))

    put = stores.status.put_status
    fresh, stale = T0 - timedelta(seconds=2), T0 - timedelta(minutes=1)
    await put(
        "cube:parser:h1:1",
        {
            "cube": "parser",
            "group": "parser",
            "instance": "h1:1",
            "processed": 1234,
            "lag": 4000,
            "retried": 3,
            "dead_lettered": 2,
            "dlq": {"crawl.feeds.dlq": 2, "partner.uploads.dlq": 0},
        },
        now=fresh,
    )
    await put("cube:media:h1:1", {"cube": "media", "group": "media", "instance": "h1:1", "lag": 2500}, now=fresh)
    await put(
        "cube:kvwriter:h2:9", {"cube": "kvwriter", "group": "kvwriter", "instance": "h2:9", "lag": 900}, now=stale
    )
    since = (T0 - timedelta(minutes=2)).isoformat()
    await put(
        "overload:scheduler:h1:1",
        {
            "cube": "scheduler",
            "overloaded": True,
            "since": since,
            "lag": 6500,
            "paused": ["YML feed re-fetches"],
            "deferred": {"YML feed re-fetches": 4},
        },
        now=fresh,
    )
    await put(
        "overload:crawler:h1:1",
        {
            "cube": "crawler",
            "overloaded": True,
            "since": since,
            "lag": 6500,
            "paused": ["autoparser page crawling"],
            "deferred": {"autoparser page crawling": 30},
        },
        now=fresh,
    )
    pause_end = (T0 + timedelta(seconds=120)).timestamp()
    await put(
        "lanes:h1:1",
        {
            "total": 40,
            "lanes": [
                {
                    "host": "shop.example",
                    "rate": 0.25,
                    "ceiling": 1.0,
                    "in_flight": 0,
                    "concurrency": 2,
                    "paused_until": pause_end,
                    "pause_reason": "Retry-After 120 s (unavailable)",
                    "backoff_incidents": 0,
                },
                {
                    "host": "news.example",
                    "rate": 1.0,
                    "ceiling": 1.0,
                    "in_flight": 0,
                    "concurrency": 2,
                    "paused_until": None,
                    "pause_reason": "",
                    "backoff_incidents": 0,
                },
            ],
        },
        now=fresh,
    )


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[TestClient]:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    await fill(stores)
    app = create_app(settings, stores, clock=ManualClock(T0.timestamp()))
    client = TestClient(TestServer(app, host="127.0.0.1", port=0))
    await client.start_server()
    yield client
    await client.close()
    await stores.close()


def _row(body: str, table: str, first_cell: str) -> str:
    """The HTML of the row of table ``table`` whose first cell starts with ``first_cell``."""
    section = body[body.index(f'<table id="{table}">') :]
    section = section[: section.index("</table>")]
    for row in section.split("<tr>")[1:]:
        cell = row[: row.find("</td>")]
        if cell.startswith("<td") and first_cell in cell:
            return row
    raise AssertionError(f"no row {first_cell!r} in {table}")


async def test_status_page_shows_hosts_feeds_lanes_cubes_freshness_and_overload(client: TestClient) -> None:
    r = await client.get("/status")
    assert r.status == 200
    assert r.headers["Content-Security-Policy"].startswith("default-src 'none'")
    body = await r.text()
    assert "<script" not in body  # no JS

    # the stats: pages, feeds, waiting, freshness p50 / p99 of the 4 pages (1, 2, 4, 10 s)
    assert "<b>4</b><span>Turbo pages</span>" in body
    assert "<b>3</b><span>feeds</span>" in body
    assert "<b>2</b><span>waiting for images</span>" in body
    assert "<b>2.0 s</b><span>freshness p50" in body
    assert "<b>10 s</b><span>freshness p99, last 4 pages" in body

    # overload: what is paused, and why
    assert "low-value work is paused</b> — autoparser page crawling, YML feed re-fetches." in body
    assert "pipeline lag 6,500 records, over the limit of 5,000; it resumes by itself under 1,000" in body
    assert "held back so far: autoparser page crawling (30), YML feed re-fetches (4)" in body
    assert "Lag by stage: media 2,500 · parser 4,000" in body  # the stopped kvwriter does not count

    # hosts: pages, feeds, failing, waiting, the crawl lane
    news = _row(body, "hosts", "news.example")
    assert "<td class=num>3</td><td class=num>2</td>" in news  # 3 pages, 2 feeds
    assert '<td class="num ok">0</td><td class=num>2</td>' in news  # none failing, 2 waiting for images
    assert '<span class="ok">ready</span>' in news
    shop = _row(body, "hosts", "shop.example")
    assert '<td class="num bad">1</td>' in shop
    assert "0.25/s<small>of 1/s</small>" in shop
    assert 'paused until <time datetime="2026-11-30T09:02:00+00:00">09:02:00 UTC</time>' in shop
    assert "<small>Retry-After 120 s (unavailable)</small>" in shop

    # feeds: last fetch, HTTP status, result, items, errors with line and column, next fetch
    ok = _row(body, "feeds", "https://news.example/rss.xml")
    assert '<td class=num>200</td><td><span class="ok">parsed</span></td><td class=num>12</td>' in ok
    assert "2.0 min ago" not in ok
    assert "2 min ago" in ok
    assert "09:10:00 UTC</time> <small>in 10 min</small>" in ok
    broken = _row(body, "feeds", "https://news.example/broken.xml")
    assert "<b>line 12, column 5</b>: &lt;b&gt;mismatched&lt;/b&gt; tag: item" in broken
    assert "<b>mismatched" not in body  # partner text is escaped
    yml = _row(body, "feeds", "https://shop.example/catalog.yml")
    assert "<td class=num>503</td>" in yml
    assert "3 failures in a row" in yml
    assert "due now" in yml

    # cubes: lag, dead letters, a stopped process; the dead-letter queues
    parser = _row(body, "cubes", "parser")
    assert '<td class=num>1,234</td><td class="num ">4,000</td><td class=num>3</td><td class=num>2</td>' in parser
    assert '<span class="ok">running</span>' in parser
    assert '<span class="bad">stopped</span>' in _row(body, "cubes", "kvwriter")
    assert '<td>crawl.feeds.dlq</td><td class="num bad">2</td>' in body
    assert '<td>partner.uploads.dlq</td><td class="num ok">0</td>' in body
    assert "40 crawl lanes in memory" in body


async def test_a_webmaster_sees_only_their_host(client: TestClient) -> None:
    body = await (await client.get("/status", params={"host": " Shop.Example "})).text()
    assert "Status of shop.example" in body
    assert "https://shop.example/catalog.yml" in body
    assert "news.example/rss.xml" not in body
    assert 'id="cubes"' not in body  # the operator's tables stay on the full page
    empty = await (await client.get("/status", params={"host": "nobody.example"})).text()
    assert "No hosts yet" in empty


async def test_status_json(client: TestClient) -> None:
    r = await client.get("/api/v1/status")
    assert r.status == 200
    data = orjson.loads(await r.read())
    assert data["freshness_s"] == {"p50": 2.0, "p99": 10.0, "sample": 4}
    assert data["overload"]["lag"] == 6500
    assert data["overload"]["by_group"] == {"parser": 4000, "media": 2500}
    assert {w["cube"] for w in data["overload"]["watchers"] if w["overloaded"]} == {"scheduler", "crawler"}
    hosts = {h["host"]: h for h in data["hosts"]}
    assert hosts["news.example"]["pages"] == 3
    assert hosts["news.example"]["waiting_for_media"] == 2
    broken = next(f for f in hosts["news.example"]["feeds"] if f["feed_id"] == "news-broken")
    assert (broken["error_line"], broken["error_column"], broken["result"]) == (12, 5, "parse_error")
    assert hosts["shop.example"]["lane"]["pause_reason"] == "Retry-After 120 s (unavailable)"
    assert data["dlq"] == {"crawl.feeds.dlq": 2, "partner.uploads.dlq": 0}
    cubes = {c["cube"]: c for c in data["cubes"]}
    assert cubes["kvwriter"]["fresh"] is False
    assert cubes["parser"]["fresh"] is True
