"""The search frontend: Turbo pages, their JSON form, search, status and the file CDN (docs/architecture.md section 3).

``create_app(settings, stores, cdn)`` builds the aiohttp application; the
cube (``cube.py``) serves it. Routes:

* ``GET /`` home: search box, counts, latest pages
* ``GET /turbo?url=<original URL>`` the Turbo page (ETag / 304, ``Cache-Control: public, max-age=60``)
* ``GET /turbo/shop/<host>/category/<id>?page=&sort=&vendor=&param.<name>=`` a shop category's offers,
  paged, sorted by price and filtered (``category.py``)
* ``GET /preview?task=<id>&url=<URL>`` a debug upload's preview page (never cached, never indexed)
* ``GET /api/v1/pages?url=`` the page's JSON form
* ``GET /search?q=&type=&host=&from=&to=&after=`` results with filters and cursor pages (``search.py``)
* ``GET /wordstat?q=&months=`` how often a query is searched (``wordstat.py``)
* ``GET /status`` pipeline-wide aggregates: counts, freshness, overload, cubes, dead letters
  (``status/``); ``?host=H`` redirects to the console's view of that host, behind its sign-in
* ``GET /api/v1/status`` the same aggregates as JSON
* ``GET /cdn/{key}`` the embedded file CDN (only when ``cdn.url`` is ``file://``)
* ``GET /healthz``, ``/favicon.svg``

Every HTML response carries a strict Content-Security-Policy: pages load
nothing but their own styles, images from the CDN and players of the
allowlisted video hosts. Unknown paths get a friendly 404 page.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlsplit

import orjson
from aiohttp import web

from cubes.frontend import templates
from cubes.frontend.assets import FAVICON_SVG
from cubes.frontend.audience import RegionTable, device_class
from cubes.frontend.category import (
    PER_PAGE,
    BadParameter,
    CategoryQuery,
    FacetCache,
    Listing,
    category_html,
    category_view,
)
from cubes.frontend.cdn import CdnFiles
from cubes.frontend.console.context import ConsoleContext
from cubes.frontend.console.routes import add_routes as add_console_routes
from cubes.frontend.console.session import SessionGate
from cubes.frontend.queries import QueryEvents
from cubes.frontend.search import results_page, search_params
from cubes.frontend.status.gather import gather_pipeline
from cubes.frontend.status.page import render_status
from cubes.frontend.status.payload import pipeline_json
from cubes.frontend.status.view import pipeline_view
from cubes.frontend.wordstat import WordstatPage
from shared.blobs.base import BlobStore
from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.errors import StoreUnavailable
from shared.messages import SearchQueryEvent
from shared.origins import canonical_origin
from shared.pages.players import Players
from shared.pages.style import PAGE_CSS, STYLESHEET_PATH
from shared.pages.turbo_links import CATEGORY_PARAM, listing_category
from shared.previews import preview_key
from shared.runtime.deps import Publish
from shared.search.query import parse_query
from shared.search.ranking import Ranking
from shared.search.request import Hit, SearchRequest, SearchResults
from shared.stores import OfferQuery, Page, Stores
from shared.urls import canonical_url
from shared.wordstat.clients import DayKeys
from shared.wordstat.lemmas import normalize_query

__all__ = ["create_app", "preview_key", "turbo_csp"]

log = logging.getLogger(__name__)

#: Turbo pages change rarely and a stale minute is harmless; a CDN in front absorbs the load.
_TURBO_MAX_AGE = 60
#: Results per search page.
_PER_PAGE = 20
_MAX_QUERY = 200
_RECENT = 12

#: Raw URL -> canonical URL memo: popular pages are asked for again and again, and normalizing
#: (IDNA, percent-encoding) costs a third of serving a page. Only URLs up to 512 characters are
#: kept, so 16 Ki entries stay under ~16 MB whatever clients send.
_MEMO_URL_MAX = 512
_canonical_memo = lru_cache(maxsize=16384)(canonical_url)


def _canonical(raw: str) -> str:
    return _canonical_memo(raw) if len(raw) <= _MEMO_URL_MAX else canonical_url(raw)


_SITE_CSP = (
    "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
#: X-Frame-Options is frame-ancestors 'none' for browsers that do not read CSP level 2 (clickjacking)
_COMMON = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else None


def turbo_csp(settings: Settings) -> str:
    """The Turbo page's policy: images and media from here (or the CDN's origin), players of video hosts."""
    media = "'self'"
    cdn_origin = _origin(settings.cdn.public_base_url)
    if cdn_origin:
        media += " " + cdn_origin
    hosts = Players(settings.kvwriter.video_hosts).csp_sources()  # each player's host and path
    return (
        f"default-src 'none'; img-src {media}; style-src 'self' 'unsafe-inline'; media-src {media}; "
        f"frame-src {hosts}; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
    )


def _host_param(request: web.Request) -> str:
    """The ``host`` filter of the status page (a host name is at most 253 characters)."""
    return request.query.get("host", "").strip()[:253]


def _etag_matches(header: str | None, etag: str) -> bool:
    """``If-None-Match`` against ``etag`` with the weak comparison RFC 9110 asks for."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    bare = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == bare for tag in header.split(","))


def _html(body: str, status: int = 200, *, csp: str = _SITE_CSP, cache: str = "no-cache") -> web.Response:
    headers = {**_COMMON, "Content-Security-Policy": csp, "Cache-Control": cache}
    return web.Response(text=body, status=status, content_type="text/html", charset="utf-8", headers=headers)


def _json(data: object, status: int = 200) -> web.Response:
    headers = {**_COMMON, "Cache-Control": "no-cache", "Access-Control-Allow-Origin": "*"}
    return web.Response(body=orjson.dumps(data), status=status, content_type="application/json", headers=headers)


def _event_id() -> str:
    """Time first, then random (as UUIDv7 is): the store's index of counted ids grows at its end."""
    return f"{time.time_ns():016x}{secrets.token_hex(8)}"


#: hosts (and origins) of a results page a search event names at most (``SearchQueryEvent.hosts``)
_EVENT_HOSTS = 20


class _Frontend:
    def __init__(
        self, settings: Settings, stores: Stores, cdn: BlobStore | None, clock: Clock, events: QueryEvents | None
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.stores = stores
        self.events = events if settings.search.publish_queries else None
        self.regions = RegionTable(settings.search.region_ranges)
        self.day_keys = DayKeys(stores.wordstat)
        self.wordstat_page = WordstatPage(settings, stores, clock.now)
        self.ranking = Ranking(
            title_weight=settings.search.title_weight,
            freshness_boost=settings.search.freshness_boost,
            freshness_half_life_s=settings.search.freshness_half_life_s,
        )
        self.cdn = CdnFiles(cdn) if cdn is not None and settings.cdn.url.startswith("file://") else None
        self.turbo_csp = turbo_csp(settings)
        #: the filter choices of the categories read lately (``category.py``)
        self.facets = FacetCache()
        #: a category's page: a Turbo page's policy, and its filters form sent here
        self.category_csp = self.turbo_csp.replace("form-action 'none'", "form-action 'self'")

    # ------------------------------------------------------------------ pages

    async def home(self, request: web.Request) -> web.Response:
        recent = await self.stores.pages.recent(_RECENT)  # public pages: a check's previews are not counted
        feeds = await self.stores.feeds.list()
        page = templates.home_page(
            pages=await self.stores.pages.count(),
            feeds=len(feeds),
            parked=await self.stores.delay.count(),
            recent=recent,
        )
        return _html(page)

    def _url_param(self, request: web.Request) -> str | web.Response:
        raw = request.query.get("url", "").strip()
        if not raw:
            return self._error(request, 400, "Which page?", "Add the original address: /turbo?url=https://…")
        try:
            return _canonical(raw)
        except ValueError as exc:
            return self._error(request, 400, "That address does not work", f"{exc}.")

    def _page_response(self, request: web.Request, page: Page, *, cache: str) -> web.Response:
        headers = {
            **_COMMON,
            "Content-Security-Policy": self.turbo_csp,
            "Cache-Control": cache,
            "ETag": page.etag,
        }
        if _etag_matches(request.headers.get("If-None-Match"), page.etag):
            return web.Response(status=304, headers=headers)
        return web.Response(text=page.html, content_type="text/html", charset="utf-8", headers=headers)

    async def turbo(self, request: web.Request) -> web.Response:
        url = self._url_param(request)
        if isinstance(url, web.Response):
            return url
        page = await self.stores.pages.get(url)
        if page is None:
            return self._error(
                request,
                404,
                "No Turbo page for this address",
                "We have not made a Turbo page of it (yet).",
                url=url,
            )
        return self._page_response(request, page, cache=f"public, max-age={_TURBO_MAX_AGE}")

    async def category(self, request: web.Request) -> web.Response:
        """A shop category's offers, paged, sorted and filtered (``category.py``): the live pages of the shop
        that published the category's listing, on its host; 400 naming a parameter out of its rules."""
        host, category = request.match_info["host"].lower(), request.match_info["category"]
        listing = await self._listing(host, category) if len(host) <= 253 and len(category) <= 200 else None
        if listing is None:
            return self._error(request, 404, "No such category", "This shop has no category at this address.")
        try:
            query = CategoryQuery.parse(request.query)
        except BadParameter as exc:
            return self._error(request, 400, f"The {exc.name} parameter does not work", exc.message + ".")
        shop, wanted = listing
        offset = (query.page - 1) * PER_PAGE
        total, offers = await self.stores.shop.offers(
            OfferQuery(host, category, shop, query.sort, query.vendors, query.params, offset, PER_PAGE)
        )
        facets = await self.facets.get((host, category, shop), lambda: self.stores.shop.facets(host, category, shop))
        view = category_view(wanted, query, total, offers, facets)
        headers = {
            **_COMMON,
            "Content-Security-Policy": self.category_csp,
            "Cache-Control": f"public, max-age={_TURBO_MAX_AGE}",
        }
        status = 404 if query.page > view.pages else 200  # past the last page: said, with the way back
        return web.Response(
            text=category_html(view), status=status, content_type="text/html", charset="utf-8", headers=headers
        )

    async def _listing(self, host: str, category: str) -> tuple[str, Listing] | None:
        """The shop and listing of ``host``'s category ``category``: its listing page, live and a shop's."""
        for scheme in ("https", "http"):
            try:
                url = _canonical(f"{scheme}://{host}/?{CATEGORY_PARAM}={quote(category, safe='')}")
            except ValueError:
                return None
            page = await self.stores.pages.get(url)
            if page is not None and page.shop and page.host == host and listing_category(page.url) == category:
                return page.shop, Listing.of(page.url, host, category, page.doc_json, page.lang)
        return None

    async def preview(self, request: web.Request) -> web.Response:
        task = request.query.get("task", "").strip()
        url = self._url_param(request)
        if isinstance(url, web.Response):
            return url
        page = await self.stores.pages.get(preview_key(task, url)) if task else None
        if page is None:
            return self._error(request, 404, "No preview here", "The task has no preview of this address.")
        response = self._page_response(request, page, cache="no-store")
        response.headers["X-Robots-Tag"] = "noindex"
        return response

    async def api_page(self, request: web.Request) -> web.Response:
        raw = request.query.get("url", "").strip()
        try:
            url = _canonical(raw)
        except ValueError as exc:
            return _json({"error": "bad_url", "message": str(exc) if raw else "the url parameter is required"}, 400)
        page = await self.stores.pages.get(url)
        if page is None:
            return _json({"error": "not_found", "url": url}, 404)
        headers = {
            **_COMMON,
            "ETag": page.etag,
            "Cache-Control": f"public, max-age={_TURBO_MAX_AGE}",
            "Access-Control-Allow-Origin": "*",
        }
        if _etag_matches(request.headers.get("If-None-Match"), page.etag):
            return web.Response(status=304, headers=headers)
        return web.Response(body=page.doc_json, content_type="application/json", headers=headers)

    async def search(self, request: web.Request) -> web.Response:
        params = search_params(request.query, max_query=_MAX_QUERY)
        results = SearchResults()
        if params.query:
            results = await self.stores.search.search(
                SearchRequest(
                    query=parse_query(params.query),
                    filters=params.filters,
                    limit=_PER_PAGE,
                    cursor=params.cursor,
                    now=self.clock.now(),
                    ranking=self.ranking,
                )
            )
            if params.cursor is None:  # a search is counted once, on its first page
                await self._count_search(request, params.query, results.hits)
        return _html(results_page(params, results.hits, results.next_cursor, results.suggestion))

    async def _count_search(self, request: web.Request, query: str, hits: Sequence[Hit]) -> None:
        """Publish the search for query statistics: its words, month, region and device, never who asked (its
        client key counts a client once a query and day, and tells no one who: ``shared/wordstat/clients.py``)."""
        if self.events is None:
            return
        device = device_class(request.headers.get("User-Agent", ""))
        normalized = normalize_query(query)
        if device is None or not normalized:  # robots are not counted; nor are searches with no word
            return
        header = self.settings.search.region_header
        at = self.clock.now()
        try:
            client = await self.day_keys.client_key(at, request.remote, normalized)
        except StoreUnavailable:  # not counted: a search without its key could be padded
            return
        self.events.record(
            SearchQueryEvent(
                event_id=_event_id(),
                query=normalized,
                at=at,
                client=client,
                region=self.regions.region(request.headers.get(header) if header else None, request.remote),
                device=device,
                results=len(hits),
                hosts=list(dict.fromkeys(h.host for h in hits))[:_EVENT_HOSTS],
                origins=list(dict.fromkeys(canonical_origin(h.url) for h in hits))[:_EVENT_HOSTS],
            )
        )

    async def wordstat(self, request: web.Request) -> web.Response:
        body, status = await self.wordstat_page.render(request)
        return _html(body, status)

    async def status(self, request: web.Request) -> web.Response:
        host = _host_param(request)
        if host:
            # one host's feeds and errors are its webmaster's: the console checks who is asking
            raise web.HTTPSeeOther(f"/console/hosts/{quote(host.lower(), safe='')}")
        view = pipeline_view(await gather_pipeline(self.stores, self.settings, self.clock.time()))
        return _html(render_status(view))

    async def api_status(self, request: web.Request) -> web.Response:
        view = pipeline_view(await gather_pipeline(self.stores, self.settings, self.clock.time()))
        return _json(pipeline_json(view))

    async def cdn_file(self, request: web.Request) -> web.Response:
        if self.cdn is None:
            return self._error(request, 404, "Not here", "This frontend does not serve the CDN.")
        return await self.cdn.serve(request.match_info["key"]) or self._error(
            request, 404, "No such file", "The CDN has no file under this name."
        )

    async def api_docs(self, request: web.Request) -> web.Response:
        """The API's docs page and OpenAPI document live with the API (``api.public_url``)."""
        raise web.HTTPFound(self.settings.api.public_url.rstrip("/") + "/docs")

    async def healthz(self, request: web.Request) -> web.Response:
        return _json({"status": "ok"})

    async def stylesheet(self, request: web.Request) -> web.Response:
        """The Turbo pages' one stylesheet (``shared/pages/style.py``): its name is its digest, so it is
        cached for a year; another name (an old sheet, a guess) is not found."""
        if request.path != STYLESHEET_PATH:
            return self._error(request, 404, "No such stylesheet", "Pages link the stylesheet they need.")
        headers = {**_COMMON, "Cache-Control": "public, max-age=31536000, immutable"}
        return web.Response(text=PAGE_CSS, content_type="text/css", headers=headers)

    async def favicon(self, request: web.Request) -> web.Response:
        headers = {**_COMMON, "Cache-Control": "public, max-age=86400"}
        return web.Response(text=FAVICON_SVG, content_type="image/svg+xml", headers=headers)

    # ------------------------------------------------------------------ errors

    def _error(
        self, request: web.Request, status: int, title: str, message: str, *, url: str | None = None
    ) -> web.Response:
        if request.path.startswith("/api/"):
            return _json({"error": title, "message": message}, status)
        return _html(templates.error_page(status, title, message, url=url), status)

    @web.middleware
    async def errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Friendly pages for unknown paths and failures; a store outage is a 503 with Retry-After."""
        try:
            return await handler(request)
        except web.HTTPNotFound:
            return self._error(request, 404, "Page not found", "There is nothing at this address. Try a search.")
        except web.HTTPMethodNotAllowed:
            return self._error(request, 405, "Method not allowed", "This address only answers GET.")
        except StoreUnavailable:
            response = self._error(request, 503, "Back in a moment", "The page store is unavailable.")
            response.headers["Retry-After"] = "5"
            return response


def create_app(
    settings: Settings,
    stores: Stores,
    cdn: BlobStore | None = None,
    *,
    clock: Clock | None = None,
    events: QueryEvents | None = None,
    publish: Publish | None = None,
    resolver: Any = None,
) -> web.Application:
    """The frontend application over ``stores`` (and the file ``cdn``, served under ``/cdn/``).

    Answered searches go to ``events`` (``search.queries``) unless ``search.publish_queries`` is off.
    The webmaster console (``/console``, ``console/``) publishes through ``publish`` (feeds added,
    removed, fetched now); without it those actions say the bus is not there. ``resolver`` is what
    the SSRF guard wraps (tests map their partner hosts to 127.0.0.1)."""
    fe = _Frontend(settings, stores, cdn, clock or SystemClock(), events)
    app = web.Application(middlewares=[fe.errors])
    console = ConsoleContext(
        settings,
        stores,
        fe.clock,
        SessionGate(settings, stores, fe.clock),
        publish=publish,
        resolver=resolver,
    )

    async def close_console(_: web.Application) -> None:
        await console.close()

    app.on_cleanup.append(close_console)
    add_console_routes(app, console)
    app.router.add_get("/docs/api", fe.api_docs)
    app.router.add_get("/", fe.home)
    app.router.add_get("/turbo", fe.turbo)
    app.router.add_get("/turbo/shop/{host}/category/{category}", fe.category)
    app.router.add_get("/preview", fe.preview)
    app.router.add_get("/api/v1/pages", fe.api_page)
    app.router.add_get("/search", fe.search)
    app.router.add_get("/wordstat", fe.wordstat)
    app.router.add_get("/status", fe.status)
    app.router.add_get("/api/v1/status", fe.api_status)
    app.router.add_get("/cdn/{key:.+}", fe.cdn_file)
    app.router.add_get("/healthz", fe.healthz)
    app.router.add_get("/favicon.svg", fe.favicon)
    app.router.add_get("/static/{name}", fe.stylesheet)
    app.router.add_get("/favicon.ico", fe.favicon)
    return app
