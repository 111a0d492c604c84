"""``turbocubes up --demo`` end to end on embedded engines: every source reaches the frontend, then a rerun.

Runs ``cubes.launcher.run_up(settings, demo=True)`` -- every cube in this
process plus the demo site -- waits (polling the page store under a deadline)
until each source's pages are written, reads a Turbo page, its CDN image and
a search from the frontend, stops, and starts again to check that the second
run registers no new feed and re-writes no page.
"""

from __future__ import annotations

import asyncio
import io
import socket
from pathlib import Path
from urllib.parse import quote, urlsplit

import aiohttp
import pytest
from PIL import Image
from prometheus_client import REGISTRY

from cubes.launcher import run_up
from demo.content import Site, build_site
from demo.registration import DEMO_FEED_PATHS
from shared.config import Settings
from shared.stores import Stores, open_stores
from tests.polling import eventually

pytestmark = pytest.mark.slow

#: the first pass takes ~3 s here; generous for a loaded CI machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(tmp_path: Path) -> Settings:
    port = _free_port()
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 5.0},
        api={"port": 0},
        frontend={"port": port, "public_url": f"http://127.0.0.1:{port}"},
    )


async def _demo_site(stores: Stores) -> Site | None:
    for feed in await stores.feeds.list():
        parts = urlsplit(feed.url)
        if parts.path in DEMO_FEED_PATHS:
            return build_site(f"http://127.0.0.1:{parts.port}", {})
    return None


async def _versions(stores: Stores, site: Site) -> dict[str, int]:
    out = {}
    for source in site.sources:
        for url in source.pages:
            page = await stores.pages.get(url)
            if page is not None:
                out[url] = page.version
    return out


def _counter(name: str, labels: dict[str, str] | None = None) -> float:
    """A Prometheus counter of this process (every cube runs in it)."""
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


async def test_up_demo_serves_turbo_pages_from_every_source_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = _settings(tmp_path)
    front = settings.frontend.public_url
    stores = await open_stores(settings.store.url)
    try:
        stop = asyncio.Event()
        task = asyncio.create_task(run_up(settings, demo=True, stop_event=stop))
        found: list[Site] = []

        async def registered() -> bool:
            site = await _demo_site(stores)
            if site is not None:
                found.append(site)
            return site is not None

        await eventually("the demo feeds to be registered", registered, task)
        site = found[-1]
        expected = sum(len(s.pages) for s in site.sources)

        async def all_written() -> bool:
            return len(await _versions(stores, site)) == expected

        await eventually(f"all {expected} pages of the {len(site.sources)} sources to be written", all_written, task)
        first_versions = await _versions(stores, site)

        async def all_indexed() -> bool:  # the indexer cube follows the written pages within its period
            return await stores.index_queue.pending() == 0

        await eventually("the search index to take every written page", all_indexed, task)

        async with aiohttp.ClientSession() as http:
            for source in site.sources:  # one page of every source renders, with its image from our CDN
                page_url = source.pages[0]
                async with http.get(f"{front}/turbo?url={quote(page_url, safe='')}") as resp:
                    html = await resp.text()
                    assert resp.status == 200, html[:500]
                stored = await stores.pages.get(page_url)
                assert stored is not None
                assert stored.title
                assert stored.title.split()[0] in html
                assert 'src="/cdn/' in html, f"{source.label}: no CDN image in {html[:800]}"
            cdn_path = html.split('src="/cdn/', 1)[1].split('"', 1)[0]
            async with http.get(f"{front}/cdn/{cdn_path}") as resp:
                assert resp.status == 200
                with Image.open(io.BytesIO(await resp.read())) as img:
                    img.verify()
            async with http.get(f"{front}/search?q=lighthouse") as resp:
                assert "lighthouse-keeper" in await resp.text()
            # the Russian news: another form of the word finds the page, and the word is marked in it
            async with http.get(f"{front}/search", params={"q": "мосты"}) as resp:
                body = await resp.text()
                assert "novyj-most" in body
                assert "<mark>мост</mark>" in body
            async with http.get(f"{front}/search", params={"q": "чайник", "type": "product"}) as resp:
                assert "2001.html" in await resp.text()

        out_so_far: list[str] = []

        async def done_printed() -> bool:
            out_so_far.append(capsys.readouterr().out)
            return "first pass done" in "".join(out_so_far)

        await eventually("the 'first pass done' message", done_printed, task)
        assert f"{front}/turbo?url=" in "".join(out_so_far)
        # The OpenAPI document and the API docs page were linked from nowhere
        api = settings.api.public_url
        for printed in (f"{front}/console", f"{api}/docs", f"{api}/api/v1/openapi.json"):
            assert printed in "".join(out_so_far), printed
        stop.set()
        assert await asyncio.wait_for(task, 30) == 0

        # a second start: same port, same feeds, nothing re-processed
        sitemaps_read_before = _counter("turbocubes_discovery_reads_total", {"kind": "sitemap"})
        ordered_before = _counter("turbocubes_discovery_pages_total")
        stop = asyncio.Event()
        task = asyncio.create_task(run_up(settings, demo=True, stop_event=stop))
        out_so_far.clear()

        async def rerun_reported() -> bool:
            out_so_far.append(capsys.readouterr().out)
            return "from an earlier run" in "".join(out_so_far)

        await eventually("the rerun's report", rerun_reported, task)
        assert site.base in "".join(out_so_far)  # the same port again
        assert len(await stores.feeds.list()) == len(DEMO_FEED_PATHS)

        async def blog_discovered_again() -> bool:
            # the scheduler reads the host's sitemap index and the blog's sitemap again on every start ...
            return _counter("turbocubes_discovery_reads_total", {"kind": "sitemap"}) - sitemaps_read_before >= 2

        await eventually("the scheduler to read the blog's sitemaps again", blog_discovered_again, task)
        # ... and orders none of the pages the autoparser already published
        assert _counter("turbocubes_discovery_pages_total") == ordered_before
        stop.set()
        assert await asyncio.wait_for(task, 30) == 0
        assert await _versions(stores, site) == first_versions
    finally:
        await stores.close()
