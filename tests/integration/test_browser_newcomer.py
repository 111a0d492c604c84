"""A newcomer walks the demo alone, on a phone: from sign-up to a published page and back through a fix.

``turbocubes up --demo`` runs in this process (``run_up(demo=True)``, embedded engines), and a
headless Chromium at 390 x 844 (a phone) does what a new webmaster does with nothing but a browser
(the helpers of ``test_browser_frontend`` and ``test_browser_console``):

1. signs up in the console (no curl, no token to find): the welcome page shows the account's name
   and its API token once;
2. claims the demo's site to own (``demo/yours.py``) by its URL and presses *Verify now*: the demo
   publishes the token, verified in one click;
3. adds the site's feed; its pages appear: two published, one held back because its picture answers
   404 -- said the same way in the summary, the problems and the page list;
4. opens a published Turbo page;
5. puts the picture back *at the same URL* on the demo site's own page, presses *Fetch now*: the
   page is published at once (it used to stay held for the 7 days of ``media.failure_retry_s``);
6. switches the host's Turbo pages off on the host page: its pages leave Turbo, and so do the
   demo's own pages of the host (the newcomer holds its only right), the blog's autoparsed ones too;
   the host page, the feed page and the console's list say so;
7. switches them on again: everything comes back, the autoparser's pages too (they used to stay
   removed), and the host page says how many pages were fetched again;
8. checks the feed (the check's page) and opens the API's docs.

Every screen fits the phone (``scrollWidth`` within its 390 px) and is saved as
``test-artifacts/browser/newcomer-NN-*.png``.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from cubes.launcher import run_up
from demo.content import build_site, draw_pictures
from demo.registration import DEMO_FEED_PATHS
from demo.yours import FEED_PATH, MISSING, PAGE_PATH
from shared.config import Settings
from shared.hashing import TOMBSTONE
from shared.stores import Stores, open_stores
from tests.integration.test_browser_console import _form, _reload_until, _submit
from tests.integration.test_browser_frontend import ARTIFACTS, Cdp, _errors, _eval, _open, _shot, browser
from tests.polling import eventually

__all__ = ["browser"]

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTH, HEIGHT = 390, 844


async def _demo_feed(stores: Stores) -> str:
    """The id of the demo's news feed (RSS): a source of the operator's on the newcomer's host."""
    return next(f.feed_id for f in await stores.feeds.list() if f.url.endswith("/news/rss.xml") and not f.tenant_id)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Phone:
    """One tab at 390 px; every screen it shows is saved and must fit."""

    def __init__(self, cdp: Cdp, session: str) -> None:
        self.cdp = cdp
        self.session = session
        self.n = 0
        self.shots: list[Path] = []

    async def js(self, expression: str) -> object:
        return await _eval(self.cdp, self.session, expression)

    async def text(self, selector: str = "body") -> str:
        return str(await self.js(f"document.querySelector({selector!r}).innerText"))

    async def go(self, js: str) -> None:
        await _submit(self.cdp, self.session, js)

    async def screen(self, name: str) -> None:
        """Save this screen and check that it fits the phone: nothing to scroll sideways."""
        self.n += 1
        self.shots.append(await _shot(self.cdp, self.session, f"newcomer-{self.n:02d}-{name}"))
        # the layout viewport (clientWidth): a phone zooms out to show a page wider than itself, and then
        # innerWidth grows with the page (a 446-px page passed a check against innerWidth)
        wide = await self.js("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert isinstance(wide, list)
        assert wide[0] <= min(wide[1], WIDTH), f"{name}: {wide[0]} px wide on a {WIDTH} px phone"


async def _live(stores: Stores, source_id: str) -> tuple[int, int]:
    """(pages of ``source_id`` served now, its pages): what the hash store knows it published or removed."""
    urls = [u for u in await stores.hashes.urls_of_source(source_id) if "#" not in u]
    entries = await stores.hashes.get_many(source_id, urls)
    served = [u for u in urls if entries[u].content_hash != TOMBSTONE and await stores.pages.get(u) is not None]
    return len(served), len(urls)


@pytest.mark.timeout(420)
async def test_a_newcomer_walks_the_demo_alone_on_a_phone(tmp_path: Path, browser: Cdp) -> None:
    front_port, api_port = _free_port(), _free_port()
    front, api = f"http://127.0.0.1:{front_port}", f"http://127.0.0.1:{api_port}"
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 5.0},
        api={"port": api_port, "public_url": f"http://127.0.0.1:{api_port}"},
        frontend={"port": front_port, "public_url": front},
    )
    stores = await open_stores(settings.store.url)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, demo=True, stop_event=stop))
    try:
        bases: list[str] = []

        async def demo_up() -> bool:  # the demo registered its feeds: its site's address is known
            for feed in await stores.feeds.list():
                parts = urlsplit(feed.url)
                if parts.path in DEMO_FEED_PATHS:
                    bases.append(f"http://127.0.0.1:{parts.port}")
                    return True
            return False

        await eventually("the demo to start", demo_up, task, deadline_s=90)
        site = bases[0]

        # 1. sign up in the console
        session = await _open(browser, f"{front}/console", width=WIDTH, height=HEIGHT, mobile=True)
        phone = Phone(browser, session)
        await phone.screen("sign-in-or-up")
        await phone.go(_form("form[action='/console/signup']", name="Pond notes"))
        assert await phone.js("location.pathname") == "/console/welcome"
        welcome = await phone.text()
        assert "Welcome, Pond notes" in welcome
        assert "shown this once" in welcome
        token = str(await phone.js("document.querySelector('#token').textContent"))
        assert token.startswith("tc_")
        await phone.screen("welcome-token")

        # 2. claim the demo's site to own, verify it in one click
        await phone.go("location.href = '/console'")
        assert "Pond notes" in await phone.text("#tenant")
        await phone.screen("console-empty")
        await phone.go(_form("form[action='/console/hosts']", url=f"{site}/"))
        assert "not verified yet" in await phone.text()
        await phone.screen("host-to-verify")
        await phone.go("document.querySelector('form[action$=\"/verify\"]').requestSubmit()")
        assert "Verified by" in await phone.text(), await phone.text()
        await phone.screen("host-verified")

        # 3. add its feed: two pages published, one held back for its missing picture
        await phone.go("location.href = '/console'")
        await phone.go(_form("form[action='/console/feeds']", url=f"{site}{FEED_PATH}"))
        feed_path = str(await phone.js("location.pathname"))
        assert feed_path.startswith("/console/feeds/")
        await _reload_until(
            browser,
            session,
            "two pages published and one held back",
            "document.querySelectorAll('#pages .state-published').length === 2"
            " && document.querySelectorAll('#pages .state-held').length === 1",
            task,
        )
        problems = await phone.text("#problems")
        assert "image.not_found" in problems
        assert "page.incomplete" in problems
        assert f"{site}{MISSING}" in problems
        assert "Fetch now" in problems  # the fix is something the webmaster can do
        assert "No problems" not in problems
        assert "Held back" in await phone.text("#pages")
        summary = await phone.text("#summary")
        assert "3 items: 3 new or changed" in summary
        assert "2 published" in await phone.text("body")
        await phone.screen("feed-held-back")

        # 4. a published page opens
        await phone.go("document.querySelector('#pages .state-published a').click()")
        assert await phone.js("location.pathname") == "/turbo"
        await phone.screen("turbo-page")

        # 5. the picture goes back at the same URL on the site itself; Fetch now publishes the page
        await phone.go(f"location.href = {site + PAGE_PATH!r}")
        await phone.screen("site-missing-picture")
        await phone.go("document.querySelector('form[action=\"/yours/fix\"]').requestSubmit()")
        assert "picture is back" in await phone.text()
        await phone.screen("site-picture-back")
        await phone.go(f"location.href = {front + feed_path!r}")
        await phone.go("document.querySelector('form[action$=\"/fetch\"]').requestSubmit()")
        await _reload_until(
            browser,
            session,
            "the fetch to be reported and the held page published with its picture",
            "document.body.textContent.includes('the last fetch below is the one you ordered')"
            " && document.querySelectorAll('#pages .state-published').length === 3",
            task,
        )
        assert "No problems" in await phone.text("#problems")
        await phone.screen("feed-fixed")
        await phone.go(f"location.href = {front + '/console/hosts/127.0.0.1'!r}")
        assert await phone.js("document.querySelector('#failing').textContent") == "0"
        await phone.screen("host-all-well")

        # 6. Turbo off for the host: the newcomer's pages leave Turbo, and the demo's of the host with them
        blog = next(s for s in build_site(site, draw_pictures()).sources if s.feed_path is None)
        mine, demo_feed = f"feed:{feed_path.rsplit('/', 1)[1]}", f"feed:{await _demo_feed(stores)}"
        auto = "autoparser:127.0.0.1"

        async def blog_written() -> bool:
            return (await _live(stores, auto))[0] >= len(blog.pages)

        await eventually("the blog's autoparsed pages", blog_written, task, deadline_s=120)
        auto_live, _ = await _live(stores, auto)
        (demo_live, _) = await _live(stores, demo_feed)
        assert demo_live > 0
        await phone.go("document.querySelector('form[action$=\"/turbo\"]').requestSubmit()")
        said = await phone.text(".notice")
        assert "Turbo pages of 127.0.0.1 switched off: 3 pages of yours on Turbo" in said, said
        assert "Turbo pages: off" in await phone.text("#turbo")

        async def all_off() -> bool:
            return all([(await _live(stores, s))[0] == 0 for s in (mine, demo_feed, auto)])

        await eventually("every page of the host off Turbo", all_off, task)
        _, auto_known = await _live(stores, auto)
        await phone.screen("host-turbo-off")
        await phone.go(f"location.href = {front + feed_path!r}")
        assert "switched off" in await phone.text("#turbo-off")
        await _reload_until(
            browser,
            session,
            "the feed's pages removed",
            "document.querySelectorAll('#pages .state-removed').length === 3",
            task,
        )
        await phone.screen("feed-turbo-off")
        await phone.go("location.href = '/console'")
        assert "Turbo pages off" in await phone.text("#hosts")

        # 7. on again: what the sources still publish comes back, the autoparser's pages too
        await phone.go(f"location.href = {front + '/console/hosts/127.0.0.1'!r}")
        await phone.go("document.querySelector('form[action$=\"/turbo\"]').requestSubmit()")
        said = await phone.text(".notice")
        assert "Turbo pages of 127.0.0.1 switched on" in said, said
        assert f"{auto_known} pages the autoparser had published are fetched again" in said, said

        async def all_back() -> bool:
            return (
                await _live(stores, mine) == (3, 3)
                and (await _live(stores, demo_feed))[0] == demo_live
                and (await _live(stores, auto))[0] == auto_live
            )

        await eventually("every page of the host back on Turbo", all_back, task, deadline_s=120)
        await _reload_until(
            browser, session, "3 pages of yours on Turbo", "document.querySelector('#live').textContent === '3'", task
        )
        assert "Turbo pages: on" in await phone.text("#turbo")
        await phone.screen("host-turbo-on-again")

        # 8. a check of the feed, and the API's docs: they fit the phone too
        await phone.go("location.href = '/console'")
        await phone.go(_form("form[action='/console/check']", url=f"{site}{FEED_PATH}"))
        assert str(await phone.js("location.pathname")).startswith("/console/uploads/")
        await _reload_until(
            browser,
            session,
            "the check's verdicts",
            "(document.querySelector('#verdicts') || {}).textContent === '3 would be published'",
            task,
        )
        await phone.screen("check")
        await phone.go(f"location.href = {api + '/docs'!r}")
        assert "tenant token" in await phone.text()
        await phone.screen("api-docs")
        assert _errors(browser) == []
        assert len(phone.shots) == 16
        assert all(p.parent == ARTIFACTS and p.stat().st_size > 0 for p in phone.shots)
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
        await stores.close()
