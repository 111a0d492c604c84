"""One model of a page's state on every screen (shared/pages/state.py).

A feed whose pages are in every state at once -- published, published without an image, held back
with an older version live and with none, waiting for images with and without an older version,
removed, taken over by another source, refused by the latest fetch, on its way -- and each screen
that shows pages: the console's feed page (its summary, its problems and its page list), the host
page (its counts, its pages with problems, its waiting pages), the home page's feed line, the API's
feed and host, and ``turbocubes feeds show``. Each page must be told in the same words everywhere,
and every count must be the count of what the lists show. The console once said "2 published"
beside one live page, "No problems" beside a held one, and ``image.not_found`` "published without
it" above "held back, not published".
"""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from markupsafe import escape

from cubes.api.feed_commands import feeds_show
from cubes.frontend.app import create_app
from shared.clock import ManualClock
from shared.config import Settings
from shared.hashing import TOMBSTONE
from shared.pages.state import state_word
from shared.problems import image_problem, problem
from shared.stores import (
    Feed,
    FetchReport,
    Page,
    PageProblems,
    PageState,
    Stores,
    Task,
    TaskItem,
    TaskStatus,
    open_stores,
)
from tests.unit.cubes.api.apikit import ApiHarness

T0 = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
HOST = "a.partner.test"
BASE = f"https://{HOST}/"
FEED = "f0000000000000000000000a"
#: page name -> the state it is in, and whether an older version of it is live
EXPECTED: dict[str, tuple[PageState, bool]] = {
    "whole": (PageState.published, True),
    "lost-late": (PageState.incomplete, True),
    "held-new": (PageState.held, False),
    "held-old": (PageState.held, True),
    "wait-new": (PageState.waiting, False),
    "wait-old": (PageState.waiting, True),
    "gone": (PageState.removed, False),
    "taken": (PageState.outranked, True),
    "refused": (PageState.refused, True),
    "never": (PageState.refused, False),
    "coming": (PageState.on_its_way, False),
}
SCREENS_WITH_PROBLEMS = {n for n, (s, _) in EXPECTED.items() if s in {PageState.held, PageState.incomplete}} | {
    "taken",
    "refused",
    "never",
}


def _page(name: str, version: int = 2) -> Page:
    url = BASE + name
    return Page(url=url, host=HOST, version=version, html="<p>x</p>", doc_json=b"{}", title=f"Title of {name}")


async def fill(stores: Stores, tenant_id: str) -> None:
    """The feed ``FEED`` of ``tenant_id`` with one page in each state of ``EXPECTED``."""
    await stores.feeds.upsert_feed(Feed(FEED, BASE + "feed.xml", HOST, "rss", tenant_id=tenant_id))
    await stores.feeds.update_schedule(FEED, fetch_result="ok", last_fetch_at=T0, last_http_status=200)
    await stores.feeds.update_parse_status(FEED, parse_result="partial", items=10)
    src = f"feed:{FEED}"
    for name in EXPECTED:
        if name == "never":
            continue  # refused at its first appearance: never seen, no hash
        await stores.hashes.check_and_set(src, BASE + name, TOMBSTONE if name == "gone" else f"h-{name}", now=T0)
        await stores.hashes.claim(BASE + name, src, 1)
    for name in ("whole", "lost-late", "held-old", "wait-old", "taken", "refused", "gone"):
        await stores.pages.upsert(_page(name))
    await stores.pages.delete(BASE + "gone", 3)
    await stores.hashes.claim(BASE + "taken", "tenant:someone-else", 9)
    late = image_problem(BASE + "img/late.png", "late", page_url=BASE + "lost-late", feed=FEED)
    await stores.problems.put_page_problems([PageProblems(BASE + "lost-late", 2, HOST, "rss", FEED, (late,))])
    for name in ("held-new", "held-old"):
        lost = image_problem(BASE + f"img/{name}.png", "http_404", page_url=BASE + name, feed=FEED)
        held = problem("page.incomplete", "the page was held back, not published", feed=FEED, link=BASE + name)
        await stores.problems.put_page_problems(
            [PageProblems(BASE + name, 5, HOST, "rss", FEED, (held, lost), held=True)]
        )
    for name in ("wait-new", "wait-old"):
        await stores.delay.park(BASE + name, 5, b"{}", [BASE + f"img/{name}.png"], T0 + timedelta(minutes=10),
                                host=HOST, now=T0)  # fmt: skip
    refusals = tuple(
        problem("item.no_title", "the item has no title", feed=FEED, item=i, link=BASE + name)
        for i, name in enumerate(("refused", "never"))
    )
    await stores.problems.add_report(
        FetchReport(
            FEED,
            T0,
            "partial",
            200,
            items=10,
            changed=5,
            unchanged=3,
            refused=2,
            problems=refusals,
            counts={"item.no_title": 2},
        )
    )


def _cards(html: str, section: str) -> dict[str, str]:
    """Page URL -> its card's HTML, in the element with id ``section``."""
    start = html.index(f'id="{section}"')
    end = html.find("<h2>", start)
    block = html[start : end if end > 0 else len(html)]
    out = {}
    for card in block.split('<div class="card page')[1:]:
        found = re.search(r"https://a\.partner\.test/([a-z-]+)", card)
        assert found, card
        out[found.group(1)] = card
    return out


def _said(card: str) -> str:
    found = re.search(r'<p class="state"><b class="[a-z]+">([^<]+)</b>', card)
    assert found, card
    return found.group(1)


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[tuple[TestClient[web.Request, web.Application], Stores]]:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    tenant = await stores.tenants.create_tenant("Lake birds")
    await stores.tenants.add_host(tenant.tenant_id, HOST)
    await stores.tenants.set_verified(tenant.tenant_id, HOST)
    await fill(stores, tenant.tenant_id)
    token = await stores.tenants.issue_token(tenant.tenant_id)
    client = TestClient(TestServer(create_app(settings, stores, clock=ManualClock(T0.timestamp())), port=0))
    await client.start_server()
    assert (await client.post("/console/login", data={"token": token}, allow_redirects=False)).status == 303
    try:
        yield client, stores
    finally:
        await client.close()
        await stores.close()


async def test_every_state_reads_the_same_on_every_console_screen(
    console: tuple[TestClient[web.Request, web.Application], Stores],
) -> None:
    client, _ = console
    feed = await (await client.get(f"/console/feeds/{FEED}")).text()
    listed = _cards(feed, "pages")
    assert set(listed) == set(EXPECTED)
    for name, (state, live) in EXPECTED.items():
        word = state_word(state)
        assert _said(listed[name]) == word.text, name
        assert escape(word.explanation) in listed[name], name
        # a live page links to its Turbo page; one with nothing live does not pretend to
        assert ('href="/turbo?url=' in listed[name]) is live, name
        assert ("Its previous version stays on Turbo meanwhile." in listed[name]) is (
            live and state in {PageState.held, PageState.waiting, PageState.refused}
        ), name
    troubled = _cards(feed, "page-problems")
    assert set(troubled) == SCREENS_WITH_PROBLEMS
    assert all(_said(troubled[n]) == _said(listed[n]) for n in troubled)
    assert "No problems" not in feed
    # the image problem says what happened to the image; the page's state says what happened to the page
    assert "could not be copied: it answered HTTP 404" in troubled["held-new"]
    assert "published without it" not in troubled["held-new"]
    # the counts are the counts of the list
    # on Turbo: every page of the feed with a version of its own served (an outranked one is another's)
    on_turbo = sum(1 for s, live in EXPECTED.values() if live and s is not PageState.outranked)
    assert f'id="live">{on_turbo}<' in feed
    assert f'id="troubled">{len(SCREENS_WITH_PROBLEMS)}<' in feed
    summary = feed[feed.index('id="summary"') : feed.index("<h2>Problems</h2>")]
    assert "10 items: 5 new or changed, 3 unchanged, 2 refused, 0 removed" in summary
    for state in {s for s, _ in EXPECTED.values()}:
        n = sum(1 for s, _ in EXPECTED.values() if s is state)
        assert f"{n} {state_word(state).text.lower()}" in summary, state

    host = await (await client.get(f"/console/hosts/{HOST}")).text()
    assert {n: _said(c) for n, c in _cards(host, "page-problems").items()} == {
        n: _said(listed[n]) for n in SCREENS_WITH_PROBLEMS
    }
    assert {n: _said(c) for n, c in _cards(host, "waiting").items()} == {
        n: _said(listed[n]) for n in ("wait-new", "wait-old")
    }
    assert "img/wait-new.png" in _cards(host, "waiting")["wait-new"]  # what it waits for, and why
    assert f'id="live">{on_turbo}<' in host
    assert f'id="troubled">{len(SCREENS_WITH_PROBLEMS)}<' in host
    assert 'id="waiting-count">2<' in host

    home = await (await client.get("/console")).text()
    assert "Lake birds" in home  # the tenant's name, not only its id
    line = home[home.index(f"/console/feeds/{FEED}") :]
    line = line[: line.index("</tr>")]
    assert "1 published" in line
    assert "1 published without some content" in line
    assert "2 held back" in line


async def test_the_api_and_the_cli_tell_the_same_states(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant(HOST)
        await fill(api.stores, tenant_id)
        got = await (await api.client.get(f"/api/v1/feeds/{FEED}", headers=api.auth(token))).json()
        by_state = {s: sum(1 for x, _ in EXPECTED.values() if x is s) for s in PageState}
        on_turbo = sum(1 for s, live in EXPECTED.values() if live and s is not PageState.outranked)
        assert got["pages"] == {**{s.value: n for s, n in by_state.items()}, "on_turbo": on_turbo}
        shown = {p["url"].removeprefix(BASE): (p["state"], p["status"], p["live"]) for p in got["pages_with_problems"]}
        assert shown == {
            n: (EXPECTED[n][0].value, state_word(EXPECTED[n][0]).text, EXPECTED[n][1]) for n in SCREENS_WITH_PROBLEMS
        }
        host = await (await api.client.get(f"/api/v1/hosts/{HOST}", headers=api.auth(token))).json()
        assert host["pages"] == got["pages"]
        assert {w["url"].removeprefix(BASE) for w in host["waiting_for_images"]} == {"wait-new", "wait-old"}

        out = io.StringIO()
        assert await feeds_show(api.stores, FEED, out=out) == 0
        text = out.getvalue()
        assert "result: Read, some items refused" in text
        assert "10 items: 5 new or changed, 3 unchanged, 2 refused, 0 removed" in text
        for name in SCREENS_WITH_PROBLEMS:
            assert f"page {BASE}{name}: {state_word(EXPECTED[name][0]).text}." in text, name


async def test_a_checks_pages_are_told_as_what_would_happen(
    console: tuple[TestClient[web.Request, web.Application], Stores],
) -> None:
    """A check's previews go through the same cubes and the same rule: "would be held back"."""
    client, stores = console
    (tenant,) = await stores.tenants.list_tenants()
    task = await stores.tasks.create(
        Task(task_id="t1", tenant_id=tenant.tenant_id, host=HOST, source_url=BASE + "new.xml"), now=T0
    )
    await stores.tasks.update(
        task.task_id,
        status=TaskStatus.done,
        items=[TaskItem(BASE + n, "preview") for n in ("p-ok", "p-held", "p-wait")]
        + [TaskItem(BASE + "p-bad", "rejected", "no title", (problem("item.no_title", "no title", item=3),))],
        now=T0,
    )
    await stores.pages.upsert(replace(_page("p-ok"), url="preview:t1:" + BASE + "p-ok"))
    held = image_problem(BASE + "img/x.png", "http_404", page_url=BASE + "p-held")
    await stores.problems.put_page_problems(
        [PageProblems("preview:t1:" + BASE + "p-held", 5, HOST, "upload", "t1", (held,), held=True)]
    )
    await stores.delay.park("preview:t1:" + BASE + "p-wait", 5, b"{}", [BASE + "img/w.png"], T0, host=HOST, now=T0)
    page = await (await client.get("/console/uploads/t1")).text()
    assert f"Check of {BASE}new.xml" in page  # not "upload t1"
    cards = {n: _said(c) for n, c in _cards(page, "items").items()}
    assert cards == {
        "p-ok": "Would be published",
        "p-held": "Would be held back",
        "p-wait": "Checking its images",
        "p-bad": "Would be refused",
    }
    assert 'id="status">Checking images<' in page  # not "done" while a verdict is still out
    assert "/preview?task=t1" in _cards(page, "items")["p-ok"]
    assert "/preview?" not in _cards(page, "items")["p-held"]  # no preview of a page that would not be there
