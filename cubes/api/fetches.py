"""A feed's fetches: fetch it now, follow that fetch, read the history (docs/architecture.md section 10).

* ``POST /api/v1/feeds/{feed_id}/fetch`` -- one fetch at once, through the
  host's polite crawler lane (``FeedRegistry.fetch_now``: a ``crawl.requests``
  message keyed by host, urgent; the lane's rate, robots.txt and Retry-After
  still apply). ``202`` with the order's ``fetch_id`` and a ``status_url``.
  A second order within ``REORDER_S`` of the last one for the same feed (on
  this instance) answers the pending order instead of queueing another:
  clicking "fetch now" ten times costs the partner one fetch.
* ``GET /api/v1/feeds/{feed_id}/fetches/{fetch_id}`` -- ``pending`` until the
  parser has reported the fetch that answered the order, then ``done`` with
  its report (every problem, its counts).
* ``GET /api/v1/feeds/{feed_id}/fetches`` -- the last fetches, newest first.
* ``GET /api/v1/feeds/{feed_id}/pages`` -- the feed's live pages that lost
  something (an image that answered 404, one late), with the problems.
* ``GET /api/v1/feeds/{feed_id}/problems`` -- each problem code's occurrences on
  the feed: first and last seen, by how many fetches, new / ongoing / resolved
  (``shared/problems/history.py``); *fetch now* is the "check again" that
  closes what is gone.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from aiohttp import web

from cubes.api.auth import TENANT, refusal
from cubes.api.context import ctx_of
from cubes.api.errors import ApiError, json_response
from cubes.api.feeds import own_feed, registry_of, unavailable_on_outage
from cubes.api.params import path_id
from shared.problems.codes import CODES
from shared.problems.history import Occurrence
from shared.webmaster.access import AccessRefused, feed_in_force
from shared.webmaster.overview import feed_overview, page_json, report_json

__all__ = ["REORDER_S", "add_routes", "occurrence_json"]

#: seconds in which a repeated "fetch now" of one feed answers the order already queued
REORDER_S = 30.0
_ORDER_ID = re.compile(r"[0-9a-f]{32}")
#: orders remembered before the old ones are swept
_ORDERS_MAX = 10_000
_ORDERS: web.AppKey[dict[str, tuple[str, float]]] = web.AppKey("fetch_orders", dict)


def _status_url(feed_id: str, fetch_id: str) -> str:
    return f"/api/v1/feeds/{feed_id}/fetches/{fetch_id}"


async def fetch_now(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    try:  # the tenant's feed, on a host it still holds: else nothing to fetch (the console asks the same)
        feed = await feed_in_force(ctx.stores.feeds, ctx.stores.tenants, request[TENANT], path_id(request, "feed_id"))
    except AccessRefused as exc:
        raise refusal(exc) from None
    orders = request.app[_ORDERS]
    now = ctx.clock.monotonic()
    last = orders.get(feed.feed_id)
    if last is not None and now - last[1] < REORDER_S:
        fetch_id, queued = last[0], False
    else:
        fetch_id, queued = uuid.uuid4().hex, True
        await unavailable_on_outage(registry_of(ctx).fetch_now(feed.feed_id, fetch_id=fetch_id))
        if len(orders) >= _ORDERS_MAX:  # bounded: forget the orders past their window
            for key in [k for k, (_, at) in orders.items() if now - at >= REORDER_S]:
                del orders[key]
        orders[feed.feed_id] = (fetch_id, now)
    url = _status_url(feed.feed_id, fetch_id)
    return json_response(
        {"feed_id": feed.feed_id, "fetch_id": fetch_id, "queued": queued, "status_url": url},
        status=202,
        headers={"Location": url},
    )


async def get_fetch(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    fetch_id = path_id(request, "fetch_id")
    feed = await own_feed(request)
    report = await ctx.stores.problems.report_for_fetch(feed.feed_id, fetch_id)
    if report is None:
        known = request.app[_ORDERS].get(feed.feed_id)
        # an order of another instance, or from before a restart, is not known here: without a store of
        # orders "pending" cannot be told from "never was", so a well-formed id is pending
        if (known is None or known[0] != fetch_id) and not _ORDER_ID.fullmatch(fetch_id):
            raise ApiError(404, "not_found", "no such fetch")
        return json_response({"feed_id": feed.feed_id, "fetch_id": fetch_id, "state": "pending", "report": None})
    return json_response(
        {"feed_id": feed.feed_id, "fetch_id": fetch_id, "state": "done", "report": report_json(report)}
    )


async def list_fetches(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    feed = await own_feed(request)
    reports = await ctx.stores.problems.reports(feed.feed_id)
    return json_response({"feed_id": feed.feed_id, "fetches": [report_json(r) for r in reports]})


async def list_pages(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    feed = await own_feed(request)
    o = await feed_overview(ctx.stores, feed)
    return json_response({"feed_id": feed.feed_id, "pages": [page_json(v) for v in o.pages]})


def occurrence_json(o: Occurrence) -> dict[str, Any]:
    return {
        "code": o.code,
        "severity": CODES[o.code].severity if o.code in CODES else "error",
        "state": o.state,
        "first_seen": o.first_seen,
        "last_seen": o.last_seen,
        "seen": o.seen,
        "resolved_at": o.resolved_at,
    }


async def list_problems(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    feed = await own_feed(request)
    history = await ctx.stores.problems.history(feed.feed_id)
    return json_response({"feed_id": feed.feed_id, "problems": [occurrence_json(o) for o in history]})


def add_routes(app: web.Application) -> None:
    app[_ORDERS] = {}
    router = app.router
    router.add_post("/api/v1/feeds/{feed_id}/fetch", fetch_now, name="feeds.fetch")
    router.add_get("/api/v1/feeds/{feed_id}/fetches", list_fetches, name="feeds.fetches", allow_head=False)
    router.add_get("/api/v1/feeds/{feed_id}/fetches/{fetch_id}", get_fetch, name="feeds.fetch_status", allow_head=False)
    router.add_get("/api/v1/feeds/{feed_id}/pages", list_pages, name="feeds.pages", allow_head=False)
    router.add_get("/api/v1/feeds/{feed_id}/problems", list_problems, name="feeds.problems", allow_head=False)
