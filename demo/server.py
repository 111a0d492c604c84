"""The demo partner site's HTTP server: aiohttp on 127.0.0.1 (docs/architecture.md section 8, ``up --demo``).

One port serves the three invented sites under ``/news/``, ``/shop/`` and
``/blog/``. One port (not one per site) because the crawler's lanes, the
parser's same-host rule and the canonical host all ignore the port anyway
(``shared.urls.host_of``), and a single port is one thing to keep stable
between runs: the page URLs contain it, so the same port on the next
``up --demo`` means the same feeds, the same pages and nothing re-processed.

Responses carry a strong ``ETag`` and answer ``If-None-Match`` with 304, like
a well-behaved partner, so a re-fetch of an unchanged feed costs nothing.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from html import escape

from aiohttp import web

from demo.content import Resource, Site, build_site
from demo.yours import FEED_PATH, PAGE_PATH, Yours, meta_tags
from shared.webmaster.verification import WELL_KNOWN_PATH

__all__ = ["DemoServer", "Owners", "bind_loopback"]

#: the verification tokens of the claims on the demo's host, oldest first, and whether each is verified
Owners = Callable[[], Awaitable[list[tuple[str, bool]]]]

HOST = "127.0.0.1"


def bind_loopback(preferred_port: int | None) -> socket.socket:
    """A listening-ready socket on 127.0.0.1: ``preferred_port`` if free, else a random free port."""
    for port in ([preferred_port] if preferred_port else []) + [0]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # a previous run's socket may linger in TIME_WAIT; that must not push us to another port
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            sock.close()
            continue
        return sock
    raise OSError(f"cannot bind a port on {HOST}")


class DemoServer:
    """Serves ``Site`` resources; ``start`` picks the port, then renders the site for it."""

    def __init__(self, pictures: dict[str, Resource]) -> None:
        self._pictures = pictures
        self._runner: web.AppRunner | None = None
        self.site: Site | None = None
        #: the newcomer's own site (``demo/yours.py``)
        self.yours: Yours | None = None
        #: where the claims on the demo's host are read (set once the stores are open; ``DemoSite.run``)
        self.owners: Owners | None = None

    async def start(self, preferred_port: int | None = None) -> Site:
        sock = bind_loopback(preferred_port)
        port = sock.getsockname()[1]
        self.site = build_site(f"http://{HOST}:{port}", self._pictures)
        self.yours = Yours(self.site.base)
        app = web.Application()
        app.router.add_post("/yours/{what:fix|break}", self._switch)
        app.router.add_get("/{path:.*}", self._serve)  # HEAD too
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        try:
            await web.SockSite(self._runner, sock).start()
        except BaseException:
            await self._runner.cleanup()
            sock.close()
            raise
        return self.site

    @property
    def port(self) -> int:
        if self.site is None:
            raise RuntimeError("the demo server is not started")
        return int(self.site.base.rsplit(":", 1)[1])

    async def _tokens(self) -> list[tuple[str, bool]]:
        return await self.owners() if self.owners is not None else []

    async def _switch(self, request: web.Request) -> web.StreamResponse:
        """The newcomer puts the missing picture back at its URL (or takes it away again)."""
        assert self.yours is not None
        self.yours.fixed = request.match_info["what"] == "fix"
        raise web.HTTPSeeOther(PAGE_PATH)

    async def _dynamic(self, path: str) -> web.StreamResponse | None:
        """What depends on who claimed the site and on the newcomer's fix; None: a static resource."""
        assert self.site is not None
        assert self.yours is not None
        if path == "/":
            body = self.site.resources["/"].body
            tags = meta_tags([token for token, _ in await self._tokens()]).encode()
            return web.Response(body=body.replace(b"<head>", b"<head>" + tags, 1), content_type="text/html")
        if path == WELL_KNOWN_PATH:
            pending = [token for token, verified in await self._tokens() if not verified]
            if not pending:
                return web.Response(status=404, text="no claim waits for verification\n")
            return web.Response(text=pending[-1] + "\n")
        if path == PAGE_PATH:
            return web.Response(body=self.yours.page(), content_type="text/html", headers={"Cache-Control": "no-store"})
        if path == FEED_PATH:
            return web.Response(body=self.yours.feed(), content_type="application/rss+xml")
        if path.startswith("/yours/img/"):
            picture = self.yours.picture(path)
            if picture is None:
                return web.Response(status=404, text=f"no such picture: {path}\n")
            return web.Response(body=picture, content_type="image/png", headers={"Cache-Control": "no-store"})
        if path.startswith("/yours/") and path.endswith(".html"):
            title = escape(path.removeprefix("/yours/").removesuffix(".html").replace("-", " "))
            return web.Response(text=f"<!doctype html><title>{title}</title><h1>{title}</h1>", content_type="text/html")
        return None

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        assert self.site is not None
        path = request.path
        dynamic = await self._dynamic(path)
        if dynamic is not None:
            return dynamic
        res = self.site.resources.get(path)
        if res is None:
            return web.Response(status=404, text=f"no such page on the demo site: {path}\n")
        headers = {"ETag": res.etag, "Cache-Control": "max-age=60"}
        if request.headers.get("If-None-Match") == res.etag:
            return web.Response(status=304, headers=headers)
        return web.Response(body=res.body, headers={**headers, "Content-Type": res.content_type})

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
