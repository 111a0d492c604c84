"""The webmaster API: register feeds and watch their status (docs/architecture.md sections 1-2 and 10).

* ``POST /api/v1/feeds`` {url, format: rss|turbo|yml|auto (default auto),
  services, autoparser} — the URL's
  host must be the tenant's and verified; the rest of the rules (canonical
  URL, SSRF guard, service names, the feed id) are the registration
  service's (``shared.webmaster.feeds.FeedRegistry``), which stores the feed and
  announces it on ``feeds.registry``. Registering a URL twice is one feed:
  ``201`` the first time, ``200`` after.
* ``GET /api/v1/feeds``, ``GET /api/v1/feeds/{feed_id}`` — the registration
  and its status: last fetch, HTTP status, items, last error with line /
  column, next fetch (written by the scheduler, the crawler and the parser);
  the newest fetch's report with every problem and its hint, the roll-up
  (items refused and images failed by code, conflicts with the source that
  won) and the pages that lost something (``shared/webmaster/overview.py``).
* ``PATCH /api/v1/feeds/{feed_id}`` {autoparser, services, format, options} — change
  the registration (the autoparser on or off) through the registration service.
* ``options`` (on POST and PATCH): the feed's own fetch options and filters
  (``shared/webmaster/feed_options.py``: ``timeout_s``, ``basic_auth`` {username, password},
  ``headers``, ``filters`` {keep_categories, drop_categories, keep_pattern,
  drop_pattern}, ``full_text`` auto|always|never: whether an item that is only a
  summary gets its page's article, ``cubes/parser/fulltext.py``), merged over the
  current ones; a secret (the password, a header's value) is sealed and never
  shown again: answers carry the username, the header names and ``has_credentials``.
* ``DELETE /api/v1/feeds/{feed_id}`` — ``action=delete`` on ``feeds.registry``,
  then a soft delete (``FeedRegistry.remove``).

A feed id of another tenant answers ``404`` like an unknown one (see ``auth``).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from aiohttp import web

from cubes.api.auth import TENANT, feed_authorizer, refusal
from cubes.api.bodies import read_json_object
from cubes.api.context import ApiContext, ctx_of
from cubes.api.errors import ApiError, FieldError, ValidationFailed, json_response
from cubes.api.params import path_id
from cubes.api.shedding import RETRY_AFTER_S
from shared.errors import TurbocubesError
from shared.stores import Feed, UpsertOutcome
from shared.webmaster import access
from shared.webmaster.feed_options import FeedOptions, options_json
from shared.webmaster.feeds import KEEP, SERVICES_MAX, WEBMASTER_FORMATS, FeedRegistry, RegistrationRefused
from shared.webmaster.overview import FeedOverview, counts_json, feed_overview, page_json, report_json, rollup_json

__all__ = ["add_routes", "feed_json", "overview_json", "own_feed", "registry_of", "unavailable_on_outage"]

T = TypeVar("T")

#: a registration body is a few hundred bytes; this bounds what is read
_BODY_MAX = 16 * 1024
_FIELDS = frozenset({"url", "format", "services", "autoparser", "options"})
_PATCH_FIELDS = frozenset({"format", "services", "autoparser", "options"})


def feed_json(feed: Feed) -> dict[str, Any]:
    s = feed.status
    return {
        "feed_id": feed.feed_id,
        "url": feed.url,
        "host": feed.host,
        "format": feed.format,
        "services": list(feed.services),
        "autoparser": feed.autoparser,
        # what the webmaster set, never the secrets: the username and the header names, not the values
        "options": options_json(FeedOptions.from_json(feed.options)),
        "has_credentials": feed.secret is not None,
        "created_at": feed.created_at,
        "status": {
            "last_fetch_at": s.last_fetch_at,
            "last_http_status": s.last_http_status,
            "last_result": s.last_result,
            "items": s.items,
            "last_error": s.last_error,
            "fetch_result": s.fetch_result,
            "fetch_error": s.fetch_error,
            "parse_result": s.parse_result,
            "parse_error": s.parse_error,
            "error_line": s.error_line,
            "error_column": s.error_column,
            "next_fetch_at": s.next_fetch_at,
            "schedule_reason": s.schedule_reason,
            "consecutive_failures": s.consecutive_failures,
        },
    }


def overview_json(o: FeedOverview) -> dict[str, Any]:
    """The feed with what its webmaster must see: the newest fetch and every problem, the roll-up, the pages."""
    return {
        **feed_json(o.feed),
        "latest_fetch": report_json(o.latest) if o.latest else None,
        "rollup": rollup_json(o.rollup),
        "pages": counts_json(o.counts),
        "pages_with_problems": [page_json(p) for p in o.pages],
        "fetches_url": f"/api/v1/feeds/{o.feed.feed_id}/fetches",
    }


def registry_of(ctx: ApiContext) -> FeedRegistry:
    return FeedRegistry.from_settings(
        ctx.settings, ctx.stores.feeds, ctx.publish, resolver=ctx.resolver, clock=ctx.clock
    )


def _refused(exc: RegistrationRefused) -> ValidationFailed:
    return ValidationFailed([FieldError(p.field, p.message) for p in exc.problems])


async def unavailable_on_outage(call: Awaitable[T]) -> T:
    """``call``, with a retriable bus failure answered as ``503`` + ``Retry-After``."""
    try:
        return await call
    except RegistrationRefused as exc:
        raise _refused(exc) from None
    except TurbocubesError as exc:
        if not exc.retriable:
            raise
        raise ApiError(
            503,
            "unavailable",
            f"the message bus is unavailable: {exc.message}",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        ) from exc


async def create_feed(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    tenant_id: str = request[TENANT]
    body = await read_json_object(request, _BODY_MAX)
    problems = [FieldError(name[:64], "unknown field") for name in sorted(set(body) - _FIELDS)[:10]]
    services = body.get("services", [])
    if not isinstance(services, list):
        problems.append(FieldError("services", f"a list of at most {SERVICES_MAX} service names"))
        services = []
    autoparser = body.get("autoparser", False)
    if not isinstance(autoparser, bool):
        problems.append(FieldError("autoparser", "true or false: read the site's HTML pages with the autoparser"))
    fmt = body.get("format", "auto")
    registry = registry_of(ctx)
    try:
        registry.validate(body.get("url"), fmt, services, formats=WEBMASTER_FORMATS)
    except RegistrationRefused as exc:
        problems = [FieldError(p.field, p.message) for p in exc.problems] + problems
    if problems:
        raise ValidationFailed(problems)

    done = await unavailable_on_outage(
        registry.register(
            body["url"],
            fmt=fmt,
            services=services,
            autoparser=bool(autoparser),
            tenant_id=tenant_id,
            formats=WEBMASTER_FORMATS,
            authorize=feed_authorizer(ctx.stores.tenants, tenant_id),
            options=body.get("options", KEEP),
        )
    )
    status = 201 if done.outcome is UpsertOutcome.inserted else 200
    feed = done.feed
    return json_response(feed_json(feed), status=status, headers={"Location": f"/api/v1/feeds/{feed.feed_id}"})


async def own_feed(request: web.Request) -> Feed:
    """The caller's feed of the path (``shared.webmaster.access.own_feed``, the console's rule too); 404 otherwise."""
    try:
        return await access.own_feed(ctx_of(request).stores.feeds, request[TENANT], path_id(request, "feed_id"))
    except access.AccessRefused as exc:
        raise refusal(exc) from None


async def list_feeds(request: web.Request) -> web.StreamResponse:
    stores = ctx_of(request).stores
    feeds = [f for f in await stores.feeds.list(request[TENANT]) if not f.deleted]
    latest = await stores.problems.latest_reports(f.feed_id for f in feeds)
    return json_response(
        {
            "feeds": [
                {**feed_json(f), "latest_fetch": report_json(r) if (r := latest.get(f.feed_id)) else None}
                for f in feeds
            ]
        }
    )


async def get_feed(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    return json_response(overview_json(await feed_overview(ctx.stores, await own_feed(request))))


async def patch_feed(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    feed = await own_feed(request)
    body = await read_json_object(request, _BODY_MAX)
    problems = [FieldError(name[:64], "unknown field") for name in sorted(set(body) - _PATCH_FIELDS)[:10]]
    autoparser = body.get("autoparser", feed.autoparser)
    if not isinstance(autoparser, bool):
        problems.append(FieldError("autoparser", "true or false"))
    services = body.get("services", list(feed.services))
    if not isinstance(services, list):
        problems.append(FieldError("services", f"a list of at most {SERVICES_MAX} service names"))
    if problems:
        raise ValidationFailed(problems)

    done = await unavailable_on_outage(
        registry_of(ctx).register(
            feed.url,
            fmt=body.get("format", feed.format),
            services=services,
            autoparser=bool(autoparser),
            tenant_id=feed.tenant_id,
            formats=WEBMASTER_FORMATS,
            authorize=feed_authorizer(ctx.stores.tenants, request[TENANT]),
            options=body.get("options", KEEP),
        )
    )
    return json_response(overview_json(await feed_overview(ctx.stores, done.feed)))


async def delete_feed(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    feed = await own_feed(request)
    await unavailable_on_outage(registry_of(ctx).remove(feed.feed_id))
    return web.Response(status=204)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_post("/api/v1/feeds", create_feed, name="feeds.create")
    router.add_get("/api/v1/feeds", list_feeds, name="feeds.list", allow_head=False)
    router.add_get("/api/v1/feeds/{feed_id}", get_feed, name="feeds.get", allow_head=False)
    router.add_patch("/api/v1/feeds/{feed_id}", patch_feed, name="feeds.patch")
    router.add_delete("/api/v1/feeds/{feed_id}", delete_feed, name="feeds.delete")
