"""``turbocubes up --demo``: the bundled demo partner site and its progress (docs/architecture.md section 8).

The launcher (``cubes/launcher.py``) drives it::

    demo = DemoSite(settings)
    settings = await demo.start()         # serve the site on 127.0.0.1; settings adjusted for it
    await demo.run(deps, stop_event)      # register the sources, show progress, then a status line
    await demo.stop()

The port: the page URLs contain it, so a second ``up --demo`` must use the
same one or every page would be new. ``start`` looks for the demo feeds the
store already holds and takes their port again; only if that port is busy
does it take another (and ``run`` then removes the old feeds).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import TextIO
from urllib.parse import quote, urlsplit

from demo.content import Site, draw_pictures
from demo.progress import SETTLE_S, TIMEOUT_S, Display, FirstPass, SourceProgress
from demo.registration import DEMO_FEED_PATHS, register_feeds, remove_stale_feeds
from demo.server import HOST as DEMO_HOST
from demo.server import DemoServer
from demo.tracker import Tracker
from shared.config import Settings
from shared.errors import StoreUnavailable
from shared.runtime.deps import Deps
from shared.stores import open_configured

__all__ = ["DEMO_LANE", "DemoSite", "demo_settings"]

#: the crawl lane of the demo host: it is our own server on loopback, so it may be fetched fast
#: (~70 pictures and ~10 pages take ~2 s at this rate instead of ~80 s at the default 1 request/s)
DEMO_LANE: dict[str, float] = {"rate": 50.0, "burst": 50, "concurrency": 8, "max_rate": 100.0}
#: a parked demo document is released after this long even if an image never came (default: 10 min)
DEMO_MEDIA_DEADLINE_S = 60.0
#: how often the stores are read for the progress display
POLL_S = 0.5
#: how often the stores are read for the status line after the first pass
STATUS_S = 2.0


def demo_settings(settings: Settings) -> Settings:
    """``settings`` with the SSRF allowlist, the crawl lane and the media deadline the demo needs."""
    allow = list(settings.http.allowlist)
    if "127.0.0.1/32" not in allow:
        allow.append("127.0.0.1/32")
    overrides = {**settings.crawler.host_overrides, "127.0.0.1": dict(DEMO_LANE)}
    return settings.replace(
        http={"allowlist": allow},
        crawler={"host_overrides": overrides},
        media={"deadline_s": min(settings.media.deadline_s, DEMO_MEDIA_DEADLINE_S)},
    )


async def previous_port(settings: Settings) -> int | None:
    """The port of the demo feeds already in the store (an earlier ``up --demo``), if any."""
    try:
        stores = await open_configured(settings.store, pool_size=1)
    except StoreUnavailable:
        return None  # the launcher reports the store itself
    try:
        for feed in await stores.feeds.list():
            parts = urlsplit(feed.url)
            if parts.hostname == "127.0.0.1" and parts.path in DEMO_FEED_PATHS and parts.port:
                return parts.port
    finally:
        await stores.close()
    return None


class DemoSite:
    def __init__(
        self,
        settings: Settings,
        *,
        out: TextIO | None = None,
        port: int | None = None,
        settle_s: float = SETTLE_S,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.settings = settings
        self.out = out or sys.stdout
        self._port = port
        self._settle_s = settle_s
        self._timeout_s = timeout_s
        self.server: DemoServer | None = None
        self.site: Site | None = None
        #: set when the first pass is done (tests and callers may wait on it)
        self.first_pass_done = asyncio.Event()
        self.rows: list[SourceProgress] = []

    async def start(self) -> Settings:
        preferred = self._port or await previous_port(self.settings)
        pictures = await asyncio.to_thread(draw_pictures)  # ~1 s of Pillow, off the event loop
        self.server = DemoServer(pictures)
        self.site = await self.server.start(preferred)
        self._print(f"demo partner site: {self.site.base}/ (a news site, a shop and a blog, all invented)")
        return demo_settings(self.settings)

    async def run(self, deps: Deps, stop_event: asyncio.Event) -> None:
        """Register, show progress until the first pass is done, then a status line until ``stop_event``."""
        if self.site is None:
            raise RuntimeError("DemoSite.run before start")
        site = self.site
        stores = await deps.stores()
        if self.server is not None:  # the demo publishes its claimants' verification tokens (demo/yours.py)

            async def owners() -> list[tuple[str, bool]]:
                return [(c.verification_token, c.verified) for c in await stores.tenants.claims_on(DEMO_HOST)]

            self.server.owners = owners
        for feed_id in await remove_stale_feeds(site, stores.feeds, deps.publish):
            self._print(f"demo: removed feed {feed_id} of an earlier run on another port")
        feed_ids = await register_feeds(deps.settings, site, stores.feeds, deps.publish)
        self._print(
            f"demo: registered {len(feed_ids)} feeds (the host with the autoparser, for the blog); "
            "fetching, parsing, discovering, caching images, writing Turbo pages..."
        )
        tracker = Tracker(site, stores, feed_ids)
        display = Display(self.out)
        started = time.monotonic()
        first = FirstPass(started, settle_s=self._settle_s, timeout_s=self._timeout_s)
        earlier: bool | None = None  # every page was there at the first look: written by an earlier run
        while not stop_event.is_set():
            self.rows = await tracker.snapshot()
            if earlier is None:
                earlier = all(r.complete for r in self.rows)
            display.board(self.rows, time.monotonic() - started)
            if first.update(self.rows, time.monotonic()):
                break
            await _wait(stop_event, POLL_S)
        if stop_event.is_set():
            return
        off = not await stores.tenants.turbo_enabled(DEMO_HOST)
        display.message(self._done_text(time.monotonic() - started, first.timed_out, bool(earlier), turbo_off=off))
        self.first_pass_done.set()
        while not stop_event.is_set():
            await _wait(stop_event, STATUS_S)
            self.rows = await tracker.snapshot()
            display.status(self.rows)

    def _done_text(self, elapsed_s: float, timed_out: bool, earlier: bool = False, *, turbo_off: bool = False) -> str:
        assert self.site is not None
        written = sum(r.written for r in self.rows)
        expected = sum(r.expected for r in self.rows)
        front = self.settings.frontend.public_url.rstrip("/")
        api = self.settings.api.public_url.rstrip("/")
        example = self.site.sources[0].pages[0]
        if timed_out:
            head = (
                f"demo: first pass stopped waiting after {elapsed_s:.0f} s with {written}/{expected} Turbo pages "
                "written; the rest may still come (see the errors above and `turbocubes feeds list`)."
            )
        elif earlier:
            head = (
                f"demo: all {expected} Turbo pages are in the store from an earlier run "
                "(unchanged pages are not processed again)."
            )
        else:
            head = f"demo: first pass done in {elapsed_s:.1f} s: {written}/{expected} Turbo pages written."
        if turbo_off:  # the pages missing are not a fault of the demo's: say so, and what brings them back
            head += (
                f"\n  Turbo pages of {DEMO_HOST} are switched off by the webmaster who holds it: its pages are off"
                " Turbo and search, and nothing of it is written until they are switched on again (the console's"
                " host page, or PUT /api/v1/hosts/{host}/turbo)."
            )
        return "\n".join(
            [
                head,
                f"  open the frontend: {front}/",
                f"  search:            {front}/search?q=lighthouse",
                f"  a Turbo page:      {front}/turbo?url={quote(example, safe='')}",
                f"  the original site: {self.site.base}/",
                f"  webmaster console: {front}/console (sign up there: no token needed)",
                f"  a site to own:     {self.site.base}/yours/ (claim {self.site.base}/ in the console and press"
                f" Verify now: it publishes your token; then add {self.site.base}/yours/feed.xml)",
                f"  API docs:          {api}/docs",
                f"  OpenAPI document:  {api}/api/v1/openapi.json",
                "  (Ctrl-C stops everything; the next `up --demo` resumes without re-processing unchanged pages)",
            ]
        )

    def _print(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()
            self.server = None


async def _wait(event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)
