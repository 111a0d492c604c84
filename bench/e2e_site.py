"""The end-to-end benchmark's partners: many RSS hosts with images, in a process of their own.

One aiohttp server on ``127.0.0.1:<random port>`` plays every host
``hNNN.partner.test`` (routed by the ``Host`` header; ``PartnerResolver``
maps ``*.partner.test`` to 127.0.0.1). Each host serves ``/feed.xml``, an
RSS 2.0 feed whose items carry two ``<img>`` in ``content:encoded``, and
``/img/<n>-a.jpg`` / ``-b.jpg``, distinct real JPEGs (made before the server
answers, so the benchmark does not time Pillow on the partner's side).

It runs in a child process so the partner's CPU is not taken from the
pipeline's event loop (on a 2-core machine it still competes for the CPUs, as
a real co-located partner would). The parent controls it over plain HTTP on
``Host: 127.0.0.1``:

    POST /_bench/edition?n=2    the next edition: every item's text changes, the images stay
    POST /_bench/edition?n=3&images=new   ... and every item gets two new images (new URLs, new
                                bytes, made before the answer): the pipeline fetches and caches again
    GET  /_bench/counts         {"feeds": n, "images": n}
    GET  /_bench/stats          every feed hit and image hit (wall-clock seconds)
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import multiprocessing
import socket
import time
import zlib
from dataclasses import dataclass
from html import escape
from typing import Any

import orjson
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

__all__ = ["PARTNER_SUFFIX", "PartnerProcess", "PartnerResolver", "host_name", "plan"]

PARTNER_SUFFIX = ".partner.test"
#: ~1.5 KB of text per item: about what a news item's body carries
_PARAGRAPH = (
    "The council met on {day} to discuss the {topic} and the timetable for the works; residents "
    "asked about noise at night, the cost of the temporary bridge and who pays for the detour. "
)
_DAYS = ("Monday", "Tuesday", "Friday")
_TOPICS = ("bridge repairs", "school budget", "new tram line", "river embankment", "market square")


def host_name(i: int) -> str:
    return f"h{i:03d}{PARTNER_SUFFIX}"


def plan(docs: int, hosts: int) -> list[int]:
    """How many documents each host carries: ``docs`` spread evenly over ``hosts``."""
    return [docs // hosts + (1 if i < docs % hosts else 0) for i in range(hosts)]


class PartnerResolver(AbstractResolver):
    """``*.partner.test`` -> 127.0.0.1; every other name is a DNS miss."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if not host.lower().rstrip(".").endswith(PARTNER_SUFFIX):
            raise OSError(socket.EAI_NONAME, f"bench resolver: unknown host {host}")
        return [
            ResolveResult(
                hostname=host, host="127.0.0.1", port=port, family=socket.AF_INET, proto=0, flags=socket.AI_NUMERICHOST
            )
        ]

    async def close(self) -> None:
        return None


# --------------------------------------------------------------------------- the child process


def _jpeg(seed: str) -> bytes:
    from PIL import Image

    h = zlib.crc32(seed.encode())
    img = Image.new("RGB", (48, 32), (h & 0xFF, (h >> 8) & 0xFF, (h >> 16) & 0xFF))
    # one pixel of a second colour, so two seeds with the same crc low bytes still differ
    img.putpixel((h % 48, (h >> 24) % 32), ((h >> 3) & 0xFF, (h >> 11) & 0xFF, (h >> 19) & 0xFF))
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=80)
    return out.getvalue()


def _image_path(n: int, side: str, image_edition: int) -> str:
    return f"/img/{n}-{side}.jpg" if image_edition <= 1 else f"/img/{n}-{side}-e{image_edition}.jpg"


def _feed(host: str, port: int, count: int, edition: int, image_edition: int = 1) -> bytes:
    base = f"http://{host}:{port}"
    items = []
    for n in range(count):
        text = "".join(
            f"<p>{escape(_PARAGRAPH.format(day=_DAYS[(n + k) % 3], topic=_TOPICS[(n + k + edition) % 5]))}"
            f" Edition {edition}, paragraph {k}.</p>"
            for k in range(4)
        )
        a, b = (_image_path(n, side, image_edition) for side in ("a", "b"))
        body = (
            f'<figure><img src="{base}{a}" alt="a"/><figcaption>Photo {n}</figcaption></figure>'
            f'{text}<figure><img src="{base}{b}" alt="b"/></figure>'
        )
        items.append(
            f"<item><title>Story {n} of {host}, edition {edition}</title>"
            f"<link>{base}/story/{n}</link><guid>{base}/story/{n}</guid>"
            f"<description>Lead of story {n}, edition {edition}.</description>"
            f"<content:encoded><![CDATA[{body}]]></content:encoded>"
            f"<pubDate>Mon, 30 Nov 2026 0{n % 10}:{n % 60:02d}:00 GMT</pubDate></item>"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>'
        f"<title>{host}</title><link>{base}/</link><description>News of {host}</description>"
        + "".join(items)
        + "</channel></rss>"
    ).encode()


@dataclass
class _State:
    port: int
    counts: dict[str, int]
    images: dict[tuple[str, str], bytes]
    edition: int = 1
    #: the edition whose images the feeds show (1: the first images)
    image_edition: int = 1
    feeds: dict[str, bytes] | None = None
    feed_hits: list[tuple[str, float, int]] | None = None  # (host, arrival, status)
    image_hits: list[tuple[str, str, float, float]] | None = None  # (host, path, arrival, sent)


def _serve(hosts: int, counts: list[int], conn: Any) -> None:
    images: dict[tuple[str, str], bytes] = {}
    names = [host_name(i) for i in range(hosts)]
    for host, count in zip(names, counts, strict=True):
        for n in range(count):
            for side in ("a", "b"):
                images[(host, f"/img/{n}-{side}.jpg")] = _jpeg(f"{host}/{n}/{side}")
    asyncio.run(_main(dict(zip(names, counts, strict=True)), images, conn))


async def _main(counts: dict[str, int], images: dict[tuple[str, str], bytes], conn: Any) -> None:
    st = _State(port=0, counts=counts, images=images, feed_hits=[], image_hits=[])
    stop = asyncio.Event()

    async def dispatch(request: web.Request) -> web.StreamResponse:
        arrived = time.time()
        host = (request.host or "").rsplit(":", 1)[0].lower()
        path = request.path
        assert st.feed_hits is not None
        assert st.image_hits is not None
        if path.startswith("/_bench/"):
            return _control(request, path)
        if path == "/feed.xml" and host in st.counts:
            assert st.feeds is not None
            body = st.feeds[host]
            etag = f'"e{st.edition}"'
            if request.headers.get("If-None-Match") == etag:
                st.feed_hits.append((host, arrived, 304))
                return web.Response(status=304, headers={"ETag": etag})
            st.feed_hits.append((host, arrived, 200))
            return web.Response(body=body, content_type="application/rss+xml", headers={"ETag": etag})
        if path == "/robots.txt":
            return web.Response(status=404, text="none")
        img = st.images.get((host, path))
        if img is not None:
            resp = web.Response(body=img, content_type="image/jpeg")
            st.image_hits.append((host, path, arrived, time.time()))
            return resp
        return web.Response(status=404, text="not found")

    def _control(request: web.Request, path: str) -> web.Response:
        assert st.feed_hits is not None
        assert st.image_hits is not None
        if path == "/_bench/edition":
            st.edition = int(request.query.get("n", st.edition + 1))
            if request.query.get("images") == "new":
                st.image_edition = st.edition
                for host, count in st.counts.items():
                    for n in range(count):
                        for side in ("a", "b"):
                            path = _image_path(n, side, st.edition)
                            st.images[(host, path)] = _jpeg(f"{host}/{n}/{side}/e{st.edition}")
            st.feeds = {h: _feed(h, st.port, c, st.edition, st.image_edition) for h, c in st.counts.items()}
            return web.json_response({"edition": st.edition})
        if path == "/_bench/counts":
            return web.json_response({"feeds": len(st.feed_hits), "images": len(st.image_hits)})
        if path == "/_bench/stats":
            body = orjson.dumps({"feed_hits": st.feed_hits, "image_hits": st.image_hits})
            return web.Response(body=body, content_type="application/json")
        if path == "/_bench/stop":
            stop.set()
            return web.json_response({"stopping": True})
        return web.Response(status=404)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", dispatch)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    server = site._server
    assert server is not None
    st.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
    st.feeds = {h: _feed(h, st.port, c, st.edition) for h, c in st.counts.items()}
    conn.send(st.port)
    await stop.wait()
    await runner.cleanup()


class PartnerProcess:
    """The partner site in a child process: ``start()`` -> port; ``stop()``."""

    def __init__(self, hosts: int, docs: int) -> None:
        self.hosts = hosts
        self.counts = plan(docs, hosts)
        self.port = 0
        self._proc: Any = None

    def start(self, timeout: float = 120.0) -> int:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(self.hosts, self.counts, child), daemon=True)
        self._proc.start()
        if not parent.poll(timeout):
            self.kill()
            raise RuntimeError("the bench partner site did not start")
        self.port = int(parent.recv())
        return self.port

    def feed_urls(self) -> list[str]:
        return [f"http://{host_name(i)}:{self.port}/feed.xml" for i in range(self.hosts)]

    def page_urls(self) -> list[str]:
        return [f"http://{host_name(i)}:{self.port}/story/{n}" for i, c in enumerate(self.counts) for n in range(c)]

    async def call(self, path: str, method: str = "GET") -> Any:
        import aiohttp

        async with aiohttp.ClientSession() as http, http.request(method, f"http://127.0.0.1:{self.port}{path}") as resp:
            resp.raise_for_status()
            return orjson.loads(await resp.read())

    async def stop(self) -> None:
        if self._proc is None:
            return
        with contextlib.suppress(Exception):  # gone already: killed below
            await self.call("/_bench/stop", "POST")
        await asyncio.to_thread(self._proc.join, 5.0)
        self.kill()

    def kill(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5.0)
        self._proc = None
