"""The status page and its JSON form over a store filled here (cubes/frontend/status.py), on a ManualClock."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from aiohttp import web
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
    await feeds.update_schedule(
        "news-rss",
        last_fetch_at=T0 - timedelta(minutes=2),
        last_http_status=200,
        fetch_result="ok",
        next_fetch_at=T0 + timedelta(minutes=10),
    )
    await feeds.update_parse_status("news-rss", parse_result="parsed", items=12)
    await feeds.update_schedule(
        "news-broken", last_fetch_at=T0 - timedelta(minutes=1), last_http_status=200, fetch_result="ok"
    )
    await feeds.update_parse_status(
        "news-broken",
        parse_result="parse_error",
        parse_error="<b>mismatched</b> tag: item",
        error_line=12,
        error_column=5,
    )
    await feeds.update_schedule(
        "shop-yml",
        last_fetch_at=T0 - timedelta(minutes=3),
        last_http_status=503,
        fetch_result="http_5xx",
        fetch_error="http_5xx: HTTP 503",
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
async def client(tmp_path: Path) -> AsyncIterator[TestClient[web.Request, web.Application]]:
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
    section = body[body.index(f'<table id="{table}"') :]
    section = section[: section.index("</table>")]
    for row in section.split("<tr>")[1:]:
        cell = row[: row.find("</td>")]
        if cell.startswith("<td") and first_cell in cell:
            return row
    raise AssertionError(f"no row {first_cell!r} in {table}")


async def test_status_page_shows_pipeline_aggregates_cubes_freshness_and_overload(
    client: TestClient[web.Request, web.Application],
) -> None:
    r = await client.get("/status")
    assert r.status == 200
    assert r.headers["Content-Security-Policy"].startswith("default-src 'none'")
    body = await r.text()
    assert "<script" not in body  # no JS

    # the stats: pages, hosts, feeds, failing, waiting, freshness p50 / p99 of the 4 pages (1, 2, 4, 10 s)
    assert "<b>4</b><span>Turbo pages</span>" in body
    assert "<b>2</b><span>hosts</span>" in body
    assert "<b>3</b><span>feeds</span>" in body
    assert "<b>1</b><span>feeds whose fetches fail</span>" in body
    assert "<b>2</b><span>waiting for images</span>" in body
    assert "<b>2.0 s</b><span>freshness p50" in body
    assert "<b>10 s</b><span>freshness p99, last 4 pages" in body

    # overload: what is paused, and why
    assert "low-value work is paused</b> — autoparser page crawling, YML feed re-fetches." in body
    assert "pipeline lag 6,500 records, over the limit of 5,000; it resumes by itself under 1,000" in body
    assert "held back so far: autoparser page crawling (30), YML feed re-fetches (4)" in body
    assert "Lag by stage: media 2,500 · parser 4,000" in body  # the crashed kvwriter does not count

    # feeds by their last result: counts, never a feed
    # in the words a webmaster uses, each with what it means (shared/webmaster/words.py)
    unreadable = _row(body, "results", "Cannot be read")
    assert '<span class="bad">Cannot be read</span><small>The feed was fetched but cannot be read' in unreadable
    assert '<td class=num data-label="Feeds">1</td>' in unreadable
    assert '<span class="ok">Read</span>' in _row(body, "results", ">Read<")

    # cubes: lag, dead letters, a crashed process; the dead-letter queues
    parser = _row(body, "cubes", "parser")
    assert '<td class=num>1,234</td><td class="num">4,000</td><td class=num>3</td><td class=num>2</td>' in parser
    assert '<span class="ok">running</span>' in parser
    assert '<span class="bad">crashed</span>' in _row(body, "cubes", "kvwriter")
    assert '<td>crawl.feeds.dlq</td><td class="num bad">2</td>' in body
    assert '<td>partner.uploads.dlq</td><td class="num ok">0</td>' in body
    assert "40 crawl lanes in memory, 1 paused" in body


async def test_the_public_status_page_shows_no_tenants_hosts_feeds_or_errors(
    client: TestClient[web.Request, web.Application],
) -> None:
    """The page was public and listed every tenant's hosts, feed URLs and errors."""
    for path in ("/status", "/api/v1/status"):
        body = await (await client.get(path)).text()
        for secret in ("news.example", "shop.example", "rss.xml", "catalog.yml", "mismatched", "Retry-After 120"):
            assert secret not in body, (path, secret)


async def test_status_for_a_host_is_the_consoles_host_view(client: TestClient[web.Request, web.Application]) -> None:
    """``/status?host=H`` showed the totals of every host under H's name; now it is the console's."""
    r = await client.get("/status", params={"host": " Shop.Example "}, allow_redirects=False)
    assert r.status == 303
    assert r.headers["Location"] == "/console/hosts/shop.example"


async def test_a_cleanly_stopped_process_leaves_the_status_page_at_once(
    client: TestClient[web.Request, web.Application], tmp_path: Path
) -> None:
    """After a clean Ctrl-C and restart, stopped processes showed as red rows for an hour."""
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        await stores.status.put_status(
            "cube:media:h1:1", {"cube": "media", "group": "media", "instance": "h1:1", "state": "stopped"}, now=T0
        )
    finally:
        await stores.close()
    body = await (await client.get("/status")).text()
    assert "h1:1" in body  # the parser of that instance still runs
    cubes = body[body.index('<table id="cubes">') :]
    assert "<td>media" not in cubes[: cubes.index("</table>")]
    data = orjson.loads(await (await client.get("/api/v1/status")).read())
    assert {c["cube"] for c in data["cubes"]} == {"parser", "kvwriter"}
    assert data["overload"]["by_group"] == {"parser": 4000}  # a stopped process's lag is not counted


async def test_status_json(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/api/v1/status")
    assert r.status == 200
    data = orjson.loads(await r.read())
    assert data["freshness_s"] == {"p50": 2.0, "p99": 10.0, "sample": 4}
    assert (data["pages"], data["hosts"], data["feeds"], data["failing_feeds"]) == (4, 2, 3, 1)
    assert data["feed_results"] == {"http_5xx": 1, "parse_error": 1, "parsed": 1}
    assert data["overload"]["lag"] == 6500
    assert data["overload"]["by_group"] == {"parser": 4000, "media": 2500}
    assert data["overload"]["paused_work"] == ["autoparser page crawling", "YML feed re-fetches"]
    assert data["lanes"] == {"in_memory": 40, "paused": 1}
    assert data["dlq"] == {"crawl.feeds.dlq": 2, "partner.uploads.dlq": 0}
    cubes = {c["cube"]: c for c in data["cubes"]}
    assert cubes["kvwriter"]["state"] == "crashed"
    assert cubes["parser"]["state"] == "running"
    assert "hosts" not in data or isinstance(data["hosts"], int)


async def test_templates_escape_every_value(tmp_path: Path) -> None:
    """The HTML comes from templates that escape by default, not from hand escape() calls."""
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/x.db"})
    stores = await open_stores(settings.store.url)
    try:
        await stores.feeds.upsert_feed(Feed(feed_id="f", url="https://a.example/f", host="a.example", format="rss"))
        await stores.feeds.update_parse_status("f", parse_result="<img src=x onerror=alert(1)>")
        app = create_app(settings, stores, clock=ManualClock(T0.timestamp()))
        async with TestClient(TestServer(app, host="127.0.0.1", port=0)) as c:
            body = await (await c.get("/status")).text()
        assert "<img src=x" not in body
        assert "&lt;img src=x onerror=alert(1)&gt;" in body
    finally:
        await stores.close()
