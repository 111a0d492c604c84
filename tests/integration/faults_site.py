"""The partner site of the fault tests (docs/architecture.md section 9).

One aiohttp server on ``127.0.0.1:<random port>``, run in a thread with its own
event loop, so the arrival time of each request is taken by a loop that does
nothing else: the test's own loop runs subprocesses and store polls, and a busy
loop would bunch arrivals together (a false politeness violation) or spread them
(a hidden one).

It serves ``/feed.xml``, an RSS 2.0 feed of ``items`` items whose
``content:encoded`` carries two ``<img>`` each, and those images
(``/img/<n>-a.png`` and ``/img/<n>-b.jpg``, distinct real images made with
Pillow before the server answers), and with ``catalog_offers`` a YML catalog
of that many offers at ``/catalog.xml``. ``edit(ns)`` makes a new version of some
items (title and text change, the images stay); ``unavailable(seconds)`` makes
every path answer 503 with ``Retry-After`` for a while. Every request is logged
server-side (monotonic arrival time, path, status): ``max_in_window`` over
those arrivals is what the partner saw, whatever the crawler believes it sent.
"""

from __future__ import annotations

import asyncio
import io
import threading
import time
import zlib
from dataclasses import dataclass
from html import escape

from aiohttp import web
from PIL import Image

__all__ = ["FaultSite", "Hit", "image_paths", "max_in_window"]


@dataclass(frozen=True, slots=True)
class Hit:
    at: float  # time.monotonic() when the handler saw the request
    path: str
    status: int


def max_in_window(times: list[float], window: float = 1.0) -> int:
    """The most arrivals in any half-open window ``[t, t + window)``."""
    ts = sorted(times)
    best = lo = 0
    for hi, t in enumerate(ts):
        while t - ts[lo] >= window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


#: ~1.5 KB of text per item, as a news item carries: 200 items make a feed over the crawler's
#: ``inline_body_max`` (256 KB), so it travels from crawler to parser through the blob store (S3)
_TEXT = "".join(
    f"<p>Paragraph {k} of item {{n}}: residents asked about noise at night, the cost of the temporary "
    f"bridge, who pays for the detour and when the market square opens again after the works.</p>"
    for k in range(8)
)


def image_paths(n: int) -> tuple[str, str]:
    return f"/img/{n}-a.png", f"/img/{n}-b.jpg"


def _image(seed: str, fmt: str) -> bytes:
    h = zlib.crc32(seed.encode())
    img = Image.new("RGB", (40, 30), (h & 0xFF, (h >> 8) & 0xFF, (h >> 16) & 0xFF))
    # a second colour at a seed-dependent pixel: two seeds never give the same bytes
    img.putpixel((h % 40, (h >> 24) % 30), ((h >> 3) & 0xFF, (h >> 11) & 0xFF, (h >> 19) & 0xFF))
    out = io.BytesIO()
    img.save(out, format=fmt)
    return out.getvalue()


class FaultSite:
    """``start()`` -> port (blocking, from any thread); ``edit``, ``unavailable``, ``hits``; ``stop()``."""

    def __init__(self, items: int, *, rate: float, retry_after_s: int = 2, catalog_offers: int = 0) -> None:
        self.items = items
        #: offers of the YML catalog at ``/catalog.xml`` (0: none); no pictures, so that a first load is
        #: the parser's, the media cube's and the kvwriter's work, not ten thousand image fetches
        self.catalog_offers = catalog_offers
        self._catalog = b""
        #: the partner's configured rate (requests per second); ``max_in_window`` must stay under it
        self.rate = rate
        self.retry_after_s = retry_after_s
        self.port = 0
        self.versions = dict.fromkeys(range(items), 1)
        self.images = {
            path: _image(path, "PNG" if path.endswith(".png") else "JPEG")
            for n in range(items)
            for path in image_paths(n)
        }
        self._lock = threading.Lock()
        self._hits: list[Hit] = []
        self._feed = b""
        self._etag = ""
        self._unavailable_until = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fault-site", daemon=True)
        self._error: BaseException | None = None

    # ------------------------------------------------------------------ control (any thread)

    def start(self) -> int:
        self._rebuild()
        self._thread.start()
        if not self._ready.wait(30):
            raise TimeoutError("the partner site did not start within 30 s")
        if self._error is not None:
            raise RuntimeError("the partner site failed to start") from self._error
        return self.port

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(15)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def item_url(self, n: int) -> str:
        return self.url(f"/story/{n}")

    def offer_url(self, n: int) -> str:
        return self.url(f"/product/{n}")

    def marker(self, n: int, version: int | None = None) -> str:
        """The text only version ``version`` (default: the latest) of item ``n`` carries."""
        return f"Story {n} version {self.versions[n] if version is None else version}."

    def edit(self, ns: range | list[int]) -> None:
        """A new version of items ``ns``: their title and text change, their images stay."""
        with self._lock:
            for n in ns:
                self.versions[n] += 1
        self._rebuild()

    def unavailable(self, seconds: float) -> None:
        """Answer 503 + ``Retry-After`` to every request for ``seconds`` from now."""
        with self._lock:
            self._unavailable_until = time.monotonic() + seconds

    def hits(self) -> list[Hit]:
        with self._lock:
            return list(self._hits)

    # ------------------------------------------------------------------ content

    def _rebuild(self) -> None:
        base = self.url("")
        items = []
        with self._lock:
            versions = dict(self.versions)
        for n in range(self.items):
            v = versions[n]
            a, b = image_paths(n)
            body = (
                f"<p>{escape(self.marker(n, v))} The council met to discuss item {n}.</p>"
                f'<figure><img src="{base}{a}" alt="first picture of {n}"/></figure>'
                + _TEXT.format(n=n)
                + f'<figure><img src="{base}{b}" alt="second picture of {n}"/></figure>'
            )
            items.append(
                f"<item><title>Story {n}, version {v}</title>"
                f"<link>{base}/story/{n}</link><guid>{base}/story/{n}</guid>"
                f"<description>Lead of story {n}, version {v}.</description>"
                f"<content:encoded><![CDATA[{body}]]></content:encoded>"
                f"<pubDate>Mon, 30 Nov 2026 {n % 24:02d}:{n % 60:02d}:00 GMT</pubDate></item>"
            )
        feed = (
            '<?xml version="1.0" encoding="utf-8"?>'
            '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>'
            f"<title>Fault news</title><link>{base}/</link><description>News under faults</description>"
            + "".join(items)
            + "</channel></rss>"
        ).encode()
        with self._lock:
            self._feed = feed
            self._etag = f'"{zlib.crc32(feed):08x}"'

    def _make_catalog(self) -> bytes:
        base = self.url("")
        offers = "".join(
            f'<offer id="{n}"><url>{base}/product/{n}</url><price>{n + 1}</price><currencyId>RUR</currencyId>'
            f"<categoryId>1</categoryId><name>Product {n}</name><description>Offer {n} of the shop.</description>"
            f"</offer>\n"
            for n in range(self.catalog_offers)
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-12-01 10:00"><shop><name>Faults</name>'
            f'<url>{base}/</url><categories><category id="1">Things</category></categories><offers>\n'
            f"{offers}</offers></shop></yml_catalog>"
        ).encode()

    # ------------------------------------------------------------------ serving (the site's thread)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # reported to start(); the thread must not die silently
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        self._rebuild()  # the feed names the real port
        self._catalog = self._make_catalog()
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()

    def _log(self, at: float, path: str, status: int) -> None:
        with self._lock:
            self._hits.append(Hit(at, path, status))

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        at = time.monotonic()
        path = request.path
        with self._lock:
            down = at < self._unavailable_until
            feed, etag = self._feed, self._etag
        if down:
            self._log(at, path, 503)
            return web.Response(
                status=503, text="down for maintenance", headers={"Retry-After": str(self.retry_after_s)}
            )
        if path == "/feed.xml":
            if request.headers.get("If-None-Match") == etag:
                self._log(at, path, 304)
                return web.Response(status=304, headers={"ETag": etag})
            self._log(at, path, 200)
            return web.Response(body=feed, content_type="application/rss+xml", headers={"ETag": etag})
        if path == "/catalog.xml" and self.catalog_offers:
            self._log(at, path, 200)
            return web.Response(body=self._catalog, content_type="application/xml")
        image = self.images.get(path)
        if image is not None:
            self._log(at, path, 200)
            return web.Response(body=image, content_type="image/png" if path.endswith(".png") else "image/jpeg")
        self._log(at, path, 404)
        return web.Response(status=404, text="not found")
