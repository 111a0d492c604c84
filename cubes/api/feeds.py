"""The webmaster API: register feeds and watch their status (DESIGN.md sections 1-2; issue 7).

* ``POST /api/v1/feeds`` {url, format: rss|turbo|yml, services} — the URL's
  host must be the tenant's and verified, and the URL must pass the SSRF
  guard. The feed is stored (``FeedStore``) and announced on
  ``feeds.registry`` (the scheduler takes it from there). The feed id is
  derived from (tenant, canonical URL), so registering a URL twice is one feed:
  ``201`` the first time, ``200`` after.
* ``GET /api/v1/feeds``, ``GET /api/v1/feeds/{feed_id}`` — the registration
  and its status: last fetch, HTTP status, items, last error with line /
  column, next fetch (written by the scheduler, the crawler and the parser).
* ``DELETE /api/v1/feeds/{feed_id}`` — soft delete + ``action=delete`` on
  ``feeds.registry``.

A feed id of another tenant answers ``404`` like an unknown one (see ``auth``).
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from cubes.api.auth import TENANT, require_host
from cubes.api.bodies import read_json_object
from cubes.api.context import ApiContext, ctx_of
from cubes.api.errors import ApiError, FieldError, ValidationFailed, json_response
from cubes.api.shedding import RETRY_AFTER_S
from shared.clock import utcnow
from shared.errors import BlockedAddressError, TurbocubesError
from shared.feeds import feed_id_for, registration
from shared.http import GuardedResolver
from shared.messages import FeedFormat, FeedRegistration
from shared.runtime.cube import Output
from shared.stores import Feed, UpsertOutcome
from shared.urls import canonical_url, host_of

__all__ = ["FEED_FORMATS", "add_routes", "feed_id_for", "feed_json"]


#: what a webmaster may register ("auto" is for the operator's CLI, which knows less)
FEED_FORMATS = (FeedFormat.rss.value, FeedFormat.turbo.value, FeedFormat.yml.value)
#: a registration body is a few hundred bytes; this bounds what is read
_BODY_MAX = 16 * 1024
_SERVICE_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_SERVICES_MAX = 16


def feed_json(feed: Feed) -> dict[str, Any]:
    s = feed.status
    return {
        "feed_id": feed.feed_id,
        "url": feed.url,
        "host": feed.host,
        "format": feed.format,
        "services": list(feed.services),
        "created_at": feed.created_at,
        "status": {
            "last_fetch_at": s.last_fetch_at,
            "last_http_status": s.last_http_status,
            "last_result": s.last_result,
            "items": s.items,
            "last_error": s.last_error,
            "error_line": s.error_line,
            "error_column": s.error_column,
            "next_fetch_at": s.next_fetch_at,
            "consecutive_failures": s.consecutive_failures,
        },
    }


def _validate(body: dict[str, Any]) -> tuple[str, str, list[str]]:
    errors: list[FieldError] = []
    url = ""
    raw_url = body.get("url")
    if not isinstance(raw_url, str) or not raw_url:
        errors.append(FieldError("url", "required: the absolute http(s) URL of the feed"))
    else:
        try:
            url = canonical_url(raw_url)
        except ValueError as exc:
            errors.append(FieldError("url", str(exc)))
    fmt = body.get("format")
    if fmt not in FEED_FORMATS:
        errors.append(FieldError("format", f"required, one of {', '.join(FEED_FORMATS)}"))
    services = body.get("services", [])
    if not isinstance(services, list) or len(services) > _SERVICES_MAX:
        errors.append(FieldError("services", f"a list of at most {_SERVICES_MAX} service names"))
        services = []
    for i, name in enumerate(services):
        if not isinstance(name, str) or not _SERVICE_RE.match(name):
            errors.append(FieldError(f"services[{i}]", "a lower-case name: letters, digits, _ or -, up to 32"))
    unknown = sorted(set(body) - {"url", "format", "services"})
    errors.extend(FieldError(name[:64], "unknown field") for name in unknown[:10])
    if errors:
        raise ValidationFailed(errors)
    return url, str(fmt), sorted(set(services))


async def _check_address(ctx: ApiContext, url: str, host: str) -> None:
    """The SSRF guard: scheme and literal IPs, then every address the host resolves to."""
    try:
        parsed = ctx.guard.check_url(url)
        resolver = GuardedResolver(ctx.guard, ctx.resolver)  # type: ignore[arg-type]
        try:
            await resolver.resolve(parsed.host or host, parsed.port or 0)
        finally:
            await resolver.close()
    except BlockedAddressError as exc:
        raise ValidationFailed([FieldError("url", exc.message)]) from None
    except (OSError, ValueError) as exc:
        raise ValidationFailed([FieldError("url", f"the host cannot be resolved: {exc}")]) from None


async def _publish(ctx: ApiContext, message: FeedRegistration) -> None:
    try:
        await ctx.publish([Output("feeds.registry", message, key=message.feed_id)])
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
    url, fmt, services = _validate(await read_json_object(request, _BODY_MAX))
    host = host_of(url)
    await require_host(ctx.stores.tenants, tenant_id, host)
    await _check_address(ctx, url, host)
    feed = Feed(
        feed_id=feed_id_for(tenant_id, url),
        url=url,
        host=host,
        format=fmt,
        tenant_id=tenant_id,
        services=tuple(services),
    )
    outcome = await ctx.stores.feeds.upsert_feed(feed)
    stored = await ctx.stores.feeds.get(feed.feed_id) or feed
    await _publish(ctx, registration(stored))
    status = 201 if outcome is UpsertOutcome.inserted else 200
    return json_response(feed_json(stored), status=status, headers={"Location": f"/api/v1/feeds/{feed.feed_id}"})


async def _own_feed(request: web.Request) -> Feed:
    ctx = ctx_of(request)
    feed = await ctx.stores.feeds.get(request.match_info["feed_id"])
    if feed is None or feed.deleted or feed.tenant_id != request[TENANT]:
        raise ApiError(404, "not_found", "no such feed")
    return feed


async def list_feeds(request: web.Request) -> web.StreamResponse:
    feeds = await ctx_of(request).stores.feeds.list(request[TENANT])
    return json_response({"feeds": [feed_json(f) for f in feeds]})


async def get_feed(request: web.Request) -> web.StreamResponse:
    return json_response(feed_json(await _own_feed(request)))


async def delete_feed(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    feed = await _own_feed(request)
    # announce first: if the bus is down the feed stays registered and a retry finds it again
    await _publish(ctx, registration(feed, action="delete", registered_at=utcnow()))
    await ctx.stores.feeds.delete_feed(feed.feed_id)
    return web.Response(status=204)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_post("/api/v1/feeds", create_feed, name="feeds.create")
    router.add_get("/api/v1/feeds", list_feeds, name="feeds.list", allow_head=False)
    router.add_get("/api/v1/feeds/{feed_id}", get_feed, name="feeds.get", allow_head=False)
    router.add_delete("/api/v1/feeds/{feed_id}", delete_feed, name="feeds.delete")
