"""``PartnerServer``: one real aiohttp server on 127.0.0.1:0 playing many partner hosts.

Every request is routed by its ``Host`` header (``a.partner.test``,
``b.partner.test`` ...; the fixture's resolver maps ``*.partner.test`` to
127.0.0.1) and logged per host *server-side* (monotonic time, path, headers),
so tests measure politeness where a partner would: at the partner.

Built-in routes, one per way of misbehaving (docs/architecture.md section 9, docs/conventions.md rule 12)::

    /ok                         200 "ok"
    /echo                       200, the request headers as JSON
    /status/{code}              that status
    /retry-after/{s}            429 + Retry-After: s   (?code=503 for a 503)
    /slow-drip                  200, then one byte every 0.2 s, forever (?interval=)
    /huge                       an endless body (?size=N bytes; ?declare=1 sends Content-Length)
    /gzip-bomb                  Content-Encoding: gzip, ~64 MiB of zeros (?mb=)
    /redirect/{n}               302 chain of n hops, then 200 "done"
    /redirect-loop              /redirect-loop -> /redirect-loop/b -> /redirect-loop ...
    /redirect-to?url=U          302 (or ?status=) to U
    /entity-bomb.xml            a "billion laughs" XML document
    /etag                       ETag "v1" + Last-Modified; 304 on If-None-Match / If-Modified-Since
    /robots.txt                 404 unless set with ``set_robots``
    /feed.xml /atom.xml         small RSS 2.0 / Atom feeds naming /page/{i} and /img/{i}.jpg
    /yml.xml                    a small YML catalog
    /page/{anything}            a small HTML page
    /img/{name}.jpg|.png|.gif   real image bytes made with Pillow

Tests add their own content with ``set(host, path, body, headers=, status=)``
(``host="*"`` for every host) or ``set_handler(host, path, fn)``; a custom
entry wins over a built-in route.
"""

from __future__ import annotations

import asyncio
import io
import time
import zlib
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import orjson
from aiohttp import web
from PIL import Image

__all__ = ["Hit", "PartnerServer", "max_in_window"]

PartnerHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: the fixed date /etag claims as Last-Modified
ETAG_LAST_MODIFIED = "Mon, 02 Nov 2026 10:00:00 GMT"


@dataclass(frozen=True, slots=True)
class Hit:
    """One request as the partner saw it."""

    at: float  # time.monotonic() when the request reached the handler
    method: str
    path: str  # path + query string
    headers: Mapping[str, str]


@dataclass(slots=True)
class _Custom:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    handler: PartnerHandler | None = None


def max_in_window(times: list[float], window: float = 1.0) -> int:
    """The most requests that fall in any half-open window ``[t, t + window)``."""
    ts = sorted(times)
    best = 0
    lo = 0
    for hi, t in enumerate(ts):
        while t - ts[lo] >= window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


class PartnerServer:
    """Start with ``await server.start()`` (or use the ``partner`` fixture); ``await server.stop()``."""

    def __init__(self) -> None:
        self.port = 0
        self._hits: dict[str, list[Hit]] = defaultdict(list)
        self._custom: dict[tuple[str, str], _Custom] = {}
        self._robots: dict[str, _Custom] = {}
        self._changed = asyncio.Event()
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> PartnerServer:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        # a short shutdown: slow-drip handlers also end on ``_closing``
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        # a deep accept queue: hundreds of virtual hosts connect at once, and an overflowing
        # SYN queue would delay some connects by the 1 s SYN retransmit (false "latency")
        site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=4096)
        await site.start()
        server = site._server
        assert server is not None
        assert isinstance(server, asyncio.Server)
        self.port = server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> PartnerServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ------------------------------------------------------------------ for tests

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    def set(
        self,
        host: str,
        path: str,
        body: bytes | str = b"",
        *,
        headers: Mapping[str, str] | None = None,
        status: int = 200,
    ) -> None:
        """Serve ``body`` at ``host`` + ``path`` (path may include a query); ``host="*"`` for all hosts."""
        data = body.encode() if isinstance(body, str) else body
        self._custom[(host, path)] = _Custom(status, data, dict(headers or {}))

    def set_handler(self, host: str, path: str, handler: PartnerHandler) -> None:
        """Serve ``host`` + ``path`` with an aiohttp handler of the test's own."""
        self._custom[(host, path)] = _Custom(handler=handler)

    def set_robots(self, host: str, content: str = "", *, status: int = 200) -> None:
        """What ``/robots.txt`` answers on ``host``: ``content`` with ``status`` (e.g. 404, 503)."""
        self._robots[host] = _Custom(status, content.encode(), {"Content-Type": "text/plain"})

    def hits(self, host: str, path: str | None = None) -> list[Hit]:
        """Requests ``host`` received (optionally only for ``path``, query excluded), oldest first."""
        hits = list(self._hits.get(host, []))
        if path is not None:
            hits = [h for h in hits if h.path.split("?", 1)[0] == path]
        return hits

    def hit_times(self, host: str, path: str | None = None) -> list[float]:
        return [h.at for h in self.hits(host, path)]

    @property
    def hosts(self) -> list[str]:
        return sorted(self._hits)

    def reset(self) -> None:
        """Forget the request logs (custom content stays)."""
        self._hits.clear()

    async def wait_hits(self, host: str, n: int, *, path: str | None = None, within: float = 10.0) -> None:
        """Wait until ``host`` has received at least ``n`` requests (for ``path``); TimeoutError otherwise."""
        async with asyncio.timeout(within):
            while len(self.hits(host, path)) < n:
                self._changed.clear()
                await self._changed.wait()

    # ------------------------------------------------------------------ serving

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        host = (request.host or "").rsplit(":", 1)[0].lower().strip("[]")
        self._hits[host].append(Hit(time.monotonic(), request.method, request.path_qs, dict(request.headers)))
        self._changed.set()
        path = request.path
        custom = self._custom.get((host, request.path_qs)) or self._custom.get((host, path))
        custom = custom or self._custom.get(("*", request.path_qs)) or self._custom.get(("*", path))
        if custom is not None:
            if custom.handler is not None:
                return await custom.handler(request)
            return web.Response(status=custom.status, body=custom.body, headers=custom.headers)
        if path == "/robots.txt":
            robots = self._robots.get(host)
            if robots is None:
                return web.Response(status=404, text="no robots.txt here")
            return web.Response(status=robots.status, body=robots.body, headers=robots.headers)
        return await self._builtin(request, host, path)

    async def _builtin(self, request: web.Request, host: str, path: str) -> web.StreamResponse:
        parts = [p for p in path.split("/") if p]
        head = parts[0] if parts else ""
        q = request.query
        if path in ("/", "/ok"):
            return web.Response(text="ok")
        if head == "echo":
            sent = {str(k): v for k, v in request.headers.items()}
            return web.Response(body=orjson.dumps(sent), content_type="application/json")
        if head == "status" and len(parts) == 2 and parts[1].isdigit():
            return web.Response(status=int(parts[1]), text=f"status {parts[1]}")
        if head == "retry-after" and len(parts) == 2:
            code = int(q.get("code", "429"))
            return web.Response(status=code, text="slow down", headers={"Retry-After": parts[1]})
        if head == "slow-drip":
            return await self._slow_drip(request, float(q.get("interval", "0.2")))
        if head == "huge":
            return await self._huge(request, int(q.get("size", "0")), q.get("declare") == "1")
        if head == "gzip-bomb":
            body = _gzip_zeros(int(q.get("mb", "64")))
            return web.Response(body=body, headers={"Content-Encoding": "gzip", "Content-Type": "application/xml"})
        if head == "redirect" and len(parts) == 2 and parts[1].isdigit():
            n = int(parts[1])
            if n <= 0:
                return web.Response(text="done")
            raise web.HTTPFound(f"/redirect/{n - 1}")
        if path == "/redirect-loop":
            raise web.HTTPFound("/redirect-loop/b")
        if path == "/redirect-loop/b":
            raise web.HTTPFound("/redirect-loop")
        if head == "redirect-to":
            status = int(q.get("status", "302"))
            return web.Response(status=status, headers={"Location": q.get("url", "/")})
        if path == "/entity-bomb.xml":
            return web.Response(body=_ENTITY_BOMB, content_type="application/xml")
        if path == "/etag":
            return self._etag(request)
        if path == "/feed.xml":
            return web.Response(body=_rss(host, self.port), content_type="application/rss+xml")
        if path == "/atom.xml":
            return web.Response(body=_atom(host, self.port), content_type="application/atom+xml")
        if path == "/yml.xml":
            return web.Response(body=_yml(host, self.port), content_type="application/xml")
        if head == "page":
            title = "/".join(parts[1:]) or "index"
            html = f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>Text.</p></body></html>"
            return web.Response(text=html, content_type="text/html")
        if head == "img" and len(parts) == 2 and "." in parts[1]:
            name, ext = parts[1].rsplit(".", 1)
            if ext in _IMAGE_FORMATS:
                fmt, mime = _IMAGE_FORMATS[ext]
                return web.Response(body=image_bytes(name, fmt), content_type=mime)
        return web.Response(status=404, text="not found")

    def _etag(self, request: web.Request) -> web.Response:
        etag = '"v1"'
        headers = {"ETag": etag, "Last-Modified": ETAG_LAST_MODIFIED}
        if request.headers.get("If-None-Match") == etag or (
            "If-None-Match" not in request.headers and request.headers.get("If-Modified-Since") == ETAG_LAST_MODIFIED
        ):
            return web.Response(status=304, headers=headers)
        return web.Response(body=_rss("etag", self.port), headers=headers, content_type="application/rss+xml")

    async def _slow_drip(self, request: web.Request, interval: float) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await resp.prepare(request)
        try:
            # "forever" = until the client gives up or the server stops (bounded at 5 min for safety)
            for _ in range(int(300 / max(interval, 0.01))):
                await resp.write(b"<")
                try:
                    await asyncio.wait_for(self._closing.wait(), interval)
                    break
                except TimeoutError:
                    pass
        except (ConnectionResetError, ConnectionError):
            pass
        return resp

    async def _huge(self, request: web.Request, size: int, declare: bool) -> web.StreamResponse:
        chunk = b"x" * 65536
        total = size if size > 0 else 10 * 1024**3  # "endless": 10 GiB, the client must stop first
        headers = {"Content-Type": "application/octet-stream"}
        if declare:
            headers["Content-Length"] = str(total)
        resp = web.StreamResponse(headers=headers)
        await resp.prepare(request)
        sent = 0
        try:
            while sent < total and not self._closing.is_set():
                piece = chunk[: min(len(chunk), total - sent)]
                await resp.write(piece)
                sent += len(piece)
            await resp.write_eof()
        except (ConnectionResetError, ConnectionError):
            pass
        return resp


# ---------------------------------------------------------------------- canned content

_IMAGE_FORMATS = {"jpg": ("JPEG", "image/jpeg"), "png": ("PNG", "image/png"), "gif": ("GIF", "image/gif")}


@lru_cache(maxsize=256)
def image_bytes(name: str, fmt: str = "JPEG", size: tuple[int, int] = (64, 48)) -> bytes:
    """A small real image whose colour depends on ``name`` (so different names differ)."""
    h = zlib.crc32(name.encode())
    img = Image.new("RGB", size, (h & 0xFF, (h >> 8) & 0xFF, (h >> 16) & 0xFF))
    out = io.BytesIO()
    img.save(out, format=fmt)
    return out.getvalue()


@lru_cache(maxsize=4)
def _gzip_zeros(mb: int) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip container
    block = b"\0" * (1024 * 1024)
    parts = [comp.compress(block) for _ in range(mb)]
    parts.append(comp.flush())
    return b"".join(parts)


_ENTITY_BOMB = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + b"".join(
        f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'.encode() for i in range(1, 10)
    )
    + b']>\n<rss version="2.0"><channel><title>&lol9;</title></channel></rss>\n'
)


def _rss(host: str, port: int) -> bytes:
    base = f"http://{host}:{port}"
    items = "".join(
        f"<item><title>Item {i}</title><link>{base}/page/{i}</link><guid>{base}/page/{i}</guid>"
        f'<description>Text {i}</description><enclosure url="{base}/img/{i}.jpg" type="image/jpeg"/>'
        f"<pubDate>Mon, 02 Nov 2026 10:0{i}:00 GMT</pubDate></item>"
        for i in range(3)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>{host}</title>'
        f"<link>{base}/</link><description>Feed of {host}</description>{items}</channel></rss>"
    ).encode()


def _atom(host: str, port: int) -> bytes:
    base = f"http://{host}:{port}"
    entries = "".join(
        f'<entry><title>Entry {i}</title><id>{base}/page/{i}</id><link href="{base}/page/{i}"/>'
        f"<updated>2026-11-02T10:0{i}:00Z</updated><summary>Text {i}</summary></entry>"
        for i in range(3)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>{host}</title><id>{base}/</id><updated>2026-11-02T10:00:00Z</updated>{entries}</feed>"
    ).encode()


def _yml(host: str, port: int) -> bytes:
    base = f"http://{host}:{port}"
    offers = "".join(
        f'<offer id="{i}" available="true"><url>{base}/page/p{i}</url><price>{100 + i}</price>'
        f"<currencyId>RUR</currencyId><categoryId>1</categoryId><picture>{base}/img/p{i}.jpg</picture>"
        f"<name>Product {i}</name></offer>"
        for i in range(3)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><yml_catalog date="2026-11-02 10:00"><shop>'
        f"<name>{host}</name><company>{host}</company><url>{base}/</url>"
        f'<currencies><currency id="RUR" rate="1"/></currencies>'
        f'<categories><category id="1">Things</category></categories><offers>{offers}</offers>'
        f"</shop></yml_catalog>"
    ).encode()
