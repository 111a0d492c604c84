"""The Wordstat page: totals, the server-side chart, splits, privacy, and readable syntax errors."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from cubes.frontend.chart import history_svg, month_label
from cubes.wordstat.handler import counted
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import Device, SearchQueryEvent
from shared.stores import open_stores
from shared.stores.wordstat import Privacy
from shared.wordstat.frequency import Count

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def search(query: str, *, device: Device = Device.desktop, region: str = "moscow") -> SearchQueryEvent:
    return SearchQueryEvent(event_id=uuid.uuid4().hex, query=query, at=NOW, region=region, device=device)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    batch = (
        [search("купить слона", device=Device.mobile) for _ in range(10)]
        + [search("купить слона", region="spb") for _ in range(5)]
        + [search("куплю слонов <b>", region="spb") for _ in range(2)]
        + [search("слон фото") for _ in range(6)]
        + [search("ёлка") for _ in range(5)]
    )
    await stores.wordstat.count([counted(e) for e in batch], now=NOW, privacy=Privacy(threshold=5))
    app = create_app(settings, stores, clock=ManualClock(NOW.timestamp()))
    client = TestClient(TestServer(app, host="127.0.0.1", port=0))
    await client.start_server()
    yield client
    await client.close()
    await stores.close()


async def test_frequency_page_with_chart_and_splits(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/wordstat", params={"q": "купить слона"})
    assert r.status == 200
    body = await r.text()
    # "куплю слонов" (2 searches in spb) is in no number: not in the total, nor in spb's
    assert '<span class="ws-total">15</span> searches for “купить слона” this month' in body
    svg = re.search(r"<svg class=\"chart\".*?</svg>", body)
    assert svg is not None
    assert svg.group().count("<rect") == 1  # one month with searches of the 24
    assert "Nov 2026: 15" in svg.group()
    assert '<td>mobile</td><td class="n">10</td><td class="n">67%</td>' in body
    assert '<td>spb</td><td class="n">5</td><td class="n">33%</td>' in body
    # listed queries: only those with a published cell ("куплю слонов" 2 has none)
    assert ">купить слона</a>" in body
    assert "куплю слонов" not in body


async def test_the_query_is_said_as_typed(client: TestClient[web.Request, web.Application]) -> None:
    """The page said it counted "елка" for a search of "ёлка": the counted form, folded, not the one typed."""
    body = await (await client.get("/wordstat", params={"q": "ёлка"})).text()
    assert '<span class="ws-total">5</span> searches for “ёлка” this month' in body
    assert "“елка”" not in body
    assert "<title>ёлка" in body


async def test_operators_and_privacy_on_the_page(client: TestClient[web.Request, web.Application]) -> None:
    body = await (await client.get("/wordstat", params={"q": '"!куплю слонов"'})).text()
    assert '<span class="ws-total">&lt; 5</span>' in body
    assert "searches made fewer than about 5 times in a month, region and device are in no number" in body
    body = await (await client.get("/wordstat", params={"q": "слон -фото", "months": "24"})).text()
    assert '<span class="ws-total">15</span>' in body
    assert "the last 24 months" in body


async def test_a_query_that_cannot_be_read_says_why(client: TestClient[web.Request, web.Application]) -> None:
    r = await client.get("/wordstat", params={"q": "(купить|заказать слона"})
    assert r.status == 400
    body = await r.text()
    assert "This query cannot be counted: expected &#39;)&#39; (at character 23)." in body
    assert (await client.get("/wordstat")).status == 200


def test_chart_marks_hidden_months_and_escapes() -> None:
    months = [(202610, Count(3, 5)), (202611, Count(40, 5))]
    svg = history_svg(months, title='<script>"x"</script>')
    assert "<script>" not in svg
    assert 'class="bar low"' in svg
    assert "Oct 2026: &lt; 5" in svg
    assert ">3<" not in svg  # a hidden count is never drawn
    assert month_label(202601) == "Jan 2026"
