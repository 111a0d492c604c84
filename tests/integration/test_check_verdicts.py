"""A check judges as the pipeline does: corpus feeds with broken images, registered and checked.

Every cube runs in this process (``run_up`` on the embedded engines). Eight feeds of the corpus in
``tests/data/feeds`` (RSS, Atom, Turbo RSS and YML with images) are served by a partner site of the
test's own on 127.0.0.1, every absolute URL in them moved onto that site (so their items are the
site's and their images are asked of it). The site answers each image path by a fixed rule: a third
answer 404, a third an HTML page where the image should be, a third a real PNG. Each feed is
registered as a feed *and* checked (``POST /api/v1/feeds/check``); once every verdict is in, each
item's page must be in the same state in both: published, held back, published without something,
refused, removed. The check once reported "done" with no image looked at, while the pipeline held
back the same items.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import re
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from PIL import Image

from cubes.launcher import run_up
from shared.config import Settings
from shared.pages.state import UNDECIDED, source_views, task_views
from shared.previews import PREVIEWS_MAX
from shared.stores import PageState, open_stores

pytestmark = [pytest.mark.slow]

DATA = Path(__file__).resolve().parents[1] / "data" / "feeds"
#: corpus feeds with images, of each format
CORPUS = (
    "rss-parser/input/guardian.rss",
    "rss-parser/input/craigslist.rss",
    "rss-parser/input/content-encoded.rss",
    "rss-parser/input/heise.atom",
    "feedjira/sample_feeds/TechCrunch.xml",
    "turbo/turbocubes__blog__turbo.xml",
    "turbo/turbocubes__every-element.xml",
    "yml/turbocubes__tools__yml.xml",
)
#: how long the pipeline may take to settle every verdict on a loaded 2-core machine
SETTLE_S = 240.0
#: an absolute URL (namespace declarations are set aside first: they name a vocabulary, not a place)
_URL = re.compile(rb"https?://([A-Za-z0-9.-]+)(?::\d+)?/?")
_XMLNS = re.compile(rb'xmlns(?::[\w-]+)?="[^"]*"')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (320, 180), (40, 90, 140)).save(out, "PNG")
    return out.getvalue()


def fate(path: str) -> str:
    """What the site answers for ``path``: one of ``missing`` (404), ``html`` (not an image), ``image``."""
    return ("missing", "html", "image")[hashlib.sha256(path.encode()).digest()[0] % 3]


class Site:
    def __init__(self) -> None:
        self.port = 0
        self.origin = ""
        self.png = _png()

    def feed(self, name: str) -> bytes:
        body = (DATA / name).read_bytes()
        # every absolute URL onto this site, under a folder per feed and per original host, so that
        # two feeds never share an item (their images stay the site's)
        tag = name.rsplit("/", 1)[-1].split(".")[0].lower()
        kept: list[bytes] = []

        def keep(m: re.Match[bytes]) -> bytes:
            kept.append(m.group(0))
            return b"\x00%d\x00" % (len(kept) - 1)

        moved = _URL.sub(
            lambda m: f"{self.origin}/h/{tag}/{m.group(1).decode().lower()}/".encode(), _XMLNS.sub(keep, body)
        )
        return re.sub(rb"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], moved)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/feeds/"):
            return web.Response(body=self.feed(request.path.removeprefix("/feeds/")), content_type="application/xml")
        if request.path == "/robots.txt":
            return web.Response(status=404)
        answer = fate(request.path)
        if answer == "image":
            return web.Response(body=self.png, content_type="image/png")
        if answer == "html":
            return web.Response(text="<html><body>moved</body></html>", content_type="image/png")
        return web.Response(status=404, text="not here")


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    s = Site()
    app = web.Application()
    app.router.add_get("/{tail:.*}", s.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    s.port = runner.addresses[0][1]
    s.origin = f"http://127.0.0.1:{s.port}"
    yield s
    await runner.cleanup()


@pytest.mark.timeout(SETTLE_S + 120)
async def test_the_check_and_the_pipeline_give_the_same_verdicts(tmp_path: Path, site: Site) -> None:
    api_port, front_port = _free_port(), _free_port()
    api = f"http://127.0.0.1:{api_port}"
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 5.0},
        http={"allowlist": ["127.0.0.1/32"]},
        # our own site on loopback may be fetched fast (the demo's lane), and an image late by a minute is late
        crawler={"host_overrides": {"127.0.0.1": {"rate": 50.0, "burst": 50, "concurrency": 8, "max_rate": 100.0}}},
        media={"deadline_s": 120.0},
        api={"port": api_port, "public_url": api},
        frontend={"port": front_port, "public_url": f"http://127.0.0.1:{front_port}"},
    )
    stores = await open_stores(settings.store.url)
    tenant = await stores.tenants.create_tenant("Corpus")
    await stores.tenants.add_host(tenant.tenant_id, "127.0.0.1", origin=site.origin)
    await stores.tenants.set_verified(tenant.tenant_id, "127.0.0.1")
    token = await stores.tenants.issue_token(tenant.tenant_id)
    auth = {"Authorization": f"Bearer {token}"}
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, stop_event=stop))
    loop = asyncio.get_running_loop()
    try:
        async with aiohttp.ClientSession() as http:
            deadline = loop.time() + 60
            while True:  # the API listens once its cube has started
                try:
                    async with http.get(f"{api}/docs") as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    pass
                assert not task.done(), "run_up ended early"
                assert loop.time() < deadline, "the API did not start"
                await asyncio.sleep(0.2)  # polling a port that is not open yet
            feeds, checks = {}, {}
            for name in CORPUS:
                url = f"{site.origin}/feeds/{name}"
                # the images are what is compared: a check does not read a summary item's own page for its
                # full text (cubes/parser/fulltext.py orders that for a registered feed only), so the
                # registered feed does not either, or its pages whose item page fails would differ
                registration = {"url": url, "options": {"full_text": "never"}}
                async with http.post(f"{api}/api/v1/feeds", json=registration, headers=auth) as r:
                    assert r.status in (200, 201), await r.text()
                    feeds[name] = (await r.json())["feed_id"]
                async with http.post(f"{api}/api/v1/feeds/check", json={"url": url}, headers=auth) as r:
                    assert r.status == 202, await r.text()
                    checks[name] = (await r.json())["task_id"]

        pending: list[str] = []
        told: dict[str, dict[str, list[str]]] = {}  # what each side says of each page, for a failure

        async def verdicts() -> dict[str, tuple[dict[str, PageState], dict[str, PageState]]] | None:
            """Per feed: (the pipeline's state of each item, the check's); None while any is undecided
            (``pending`` says which)."""
            out = {}
            pending.clear()
            for name in CORPUS:
                reports = await stores.problems.reports(feeds[name], limit=1)
                t = await stores.tasks.get(checks[name])
                if not reports or t is None or t.status.value not in ("done", "failed"):
                    pending.append(f"{name}: fetched {bool(reports)}, checked {t.status.value if t else None}")
                    continue
                live = await source_views(stores, f"feed:{feeds[name]}", latest=reports[0], limit=1000)
                dry = await task_views(stores, t)
                undecided = [(v.url, v.state.value) for v in [*live, *dry] if v.state in UNDECIDED]
                if undecided:
                    pending.append(f"{name}: {len(undecided)} undecided, e.g. {undecided[:3]}")
                out[name] = ({v.url: v.state for v in live}, {v.url: v.state for v in dry})
                told[name] = {}
                for side, views in (("pipeline", live), ("check", dry)):
                    for v in views:
                        told[name].setdefault(v.url, []).append(f"{side}: {[p.message for p in v.problems]}")
            return None if pending else out

        deadline = loop.time() + SETTLE_S
        while (found := await verdicts()) is None:
            assert not task.done(), "run_up ended early"
            assert loop.time() < deadline, "the verdicts did not settle:\n" + "\n".join(pending)
            await asyncio.sleep(1.0)  # polling the stores for the pipeline's outcome

        seen: dict[PageState, int] = {}
        for name, (live, dry) in found.items():
            previewed = {u: s for u, s in dry.items() if s is not PageState.not_previewed}
            assert len(previewed) == min(len(dry), PREVIEWS_MAX), name
            differ = {u: (live.get(u), s) for u, s in previewed.items() if live.get(u) != s}
            assert differ == {}, f"{name}: pipeline vs check differ on {differ}: " + str(
                {u: told[name].get(u) for u in differ}
            )
            for s in previewed.values():
                seen[s] = seen.get(s, 0) + 1
        # the corpus and the site's rule give every verdict that images decide, and refusals
        assert seen.get(PageState.published, 0) > 0, seen
        assert seen.get(PageState.held, 0) > 0, seen
        assert seen.get(PageState.refused, 0) + seen.get(PageState.removed, 0) > 0, seen
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
        await stores.close()
