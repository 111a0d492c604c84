"""shared.webmaster.overview: pages held back show in the host's overview (listing pages and incomplete ones)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared.problems import problem
from shared.stores import Feed, PageProblems, PageState, Stores, open_stores
from shared.webmaster.overview import host_overview, page_json

T0 = datetime(2026, 11, 30, tzinfo=UTC)
HOST = "news.example"


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield s
    finally:
        await s.close()


async def test_the_autoparsers_refusals_show_on_the_host_that_asked_for_it(stores: Stores) -> None:
    refused = problem("autoparser.incomplete", "The page was not published: ...", link=f"https://{HOST}/a")
    row = PageProblems(f"https://{HOST}/a", 7, HOST, "autoparser", HOST, (refused,), held=True)
    await stores.problems.put_page_problems([row], now=T0)
    feed = Feed("f1", f"https://{HOST}/rss", HOST, "rss", tenant_id="t1")
    await stores.feeds.upsert_feed(feed)
    # a host whose feeds did not ask for the autoparser: its pages are not this tenant's
    assert (await host_overview(stores, HOST, [feed], tenant_id="t1")).pages == ()
    asked = Feed("f1", f"https://{HOST}/rss", HOST, "rss", tenant_id="t1", autoparser=True)
    view = await host_overview(stores, HOST, [asked], tenant_id="t1")
    (shown,) = view.pages
    assert (shown.state, shown.live, shown.text) == (PageState.held, False, "Held back")
    assert view.rollup.pages_with_problems == 1
    assert page_json(shown)["held"] is True
    assert page_json(shown)["problems"][0]["code"] == "autoparser.incomplete"
