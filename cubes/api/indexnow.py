"""An IndexNow receiver: a site says which of its URLs changed, and they are fetched again (docs/architecture.md
sections 6 and 10).

* ``GET /indexnow?url=U&key=K[&keyLocation=L]`` -- one URL;
* ``POST /indexnow`` {host, key, keyLocation?, urlList} -- up to ``MAX_URLS`` URLs of one origin.

Public, as the protocol is (indexnow.org): the site proves the submission by its key file
(``shared/webmaster/indexnow.py``: ``<origin>/<key>.txt`` or ``keyLocation`` on the same origin,
same-origin redirects only). Only an origin some tenant holds a right on is fetched for
(``shared/webmaster/refresh.py``: each URL refreshed through whatever made its page, in the host's
polite lane). Answers, as the protocol names them: ``200`` queued (the body lists each
URL's refresh, and those refused with the reason); ``400`` a URL or the body unreadable;
``403`` the origin is not verified here, or the key file does not hold the key (or is
served from another origin); ``422`` a key of the wrong form, a URL of another host or
origin or outside the key file's folder, a ``keyLocation`` on another origin; ``429`` the
origin's key file was read too often in the last minute.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cubes.api.bodies import read_json_object
from cubes.api.context import ctx_of
from cubes.api.errors import ApiError, json_response
from cubes.api.feeds import unavailable_on_outage
from cubes.api.params import HOST_MAX, bounded
from cubes.api.refresh import refresher_of
from shared.origins import origin_of
from shared.urls import canonical_url, host_of
from shared.webmaster.access import AccessRefused
from shared.webmaster.indexnow import KEY_RE, KeyChecks, KeyVerdict, Submission, key_file_url
from shared.webmaster.refresh import URL_MAX, RefreshRefused

__all__ = ["MAX_URLS", "add_routes"]

#: URLs one submission may carry (the protocol allows 10,000; a site's changes come a few at a time)
MAX_URLS = 1000
#: a body of MAX_URLS long URLs
_BODY_MAX = 1024 * 1024
_CHECKS: web.AppKey[list[KeyChecks]] = web.AppKey("indexnow_keys", list)


def _checks_of(request: web.Request) -> KeyChecks:
    held = request.app[_CHECKS]
    if not held:
        ctx = ctx_of(request)
        held.append(KeyChecks.from_settings(ctx.settings, ctx.clock, resolver=ctx.resolver))
    return held[0]


def _canonical(urls: list[Any]) -> list[str]:
    out = []
    for url in urls:
        if isinstance(url, str) and len(url) > URL_MAX:
            raise ApiError(400, "bad_request", f"urlList: a URL longer than {URL_MAX} characters")
        try:
            out.append(canonical_url(url))
        except ValueError as exc:
            raise ApiError(400, "bad_request", f"urlList: {url!r}: {exc}") from None
    return out


async def _submit(request: web.Request, raw_urls: list[Any], key: Any, location: Any, host: Any = None) -> web.Response:
    if not isinstance(key, str) or not KEY_RE.fullmatch(key):
        raise ApiError(422, "validation", "key: 8 to 128 characters of a-z, A-Z, 0-9 and '-'")
    if not raw_urls:
        raise ApiError(400, "bad_request", "urlList: at least one URL")
    if len(raw_urls) > MAX_URLS:
        raise ApiError(422, "validation", f"urlList: at most {MAX_URLS} URLs a submission")
    urls = _canonical(raw_urls)
    origin = origin_of(urls[0])
    if host is not None and (not isinstance(host, str) or host.strip().lower().rstrip(".") != host_of(urls[0])):
        raise ApiError(422, "validation", f"host: {host!r} is not the host of {urls[0]}")
    if any(origin_of(u) != origin for u in urls):
        raise ApiError(422, "validation", f"urlList: every URL must be on one origin ({origin})")
    ctx = ctx_of(request)
    if not any(c.origin == origin for c in await ctx.stores.tenants.holders(host_of(urls[0]))):
        raise ApiError(403, "host_not_verified", f"no one holds a verified right on {origin} here")
    if location is not None and not isinstance(location, str):
        raise ApiError(422, "validation", "keyLocation: a URL")
    try:
        sub = Submission(origin, key, key_file_url(origin, key, canonical_url(location) if location else None))
    except ValueError as exc:
        raise ApiError(422, "validation", f"keyLocation: {exc}") from None
    outside = [u for u in urls if not sub.covers(u)]
    if outside:
        raise ApiError(422, "validation", f"urlList: {outside[0]} is outside the key file's folder ({sub.location})")
    verdict = await _checks_of(request).check(sub)
    if verdict is KeyVerdict.busy:
        raise ApiError(
            429, "rate_limited", f"the key files of {origin} were read too often; retry in a minute",
            headers={"Retry-After": "60"},
        )  # fmt: skip
    if verdict is KeyVerdict.elsewhere:
        raise ApiError(403, "key_not_valid", f"{sub.location} redirects to another origin: not followed")
    if verdict is not KeyVerdict.found:
        raise ApiError(403, "key_not_valid", f"{sub.location} does not hold the key")
    refresher = refresher_of(request)
    refreshes, refused = [], []
    for url in dict.fromkeys(urls):
        try:
            done = await unavailable_on_outage(refresher.page(url))
        except (AccessRefused, RefreshRefused) as exc:
            refused.append({"url": url, "error": exc.code, "message": exc.message})
            continue
        refreshes.append(done.as_dict())
    return json_response({"origin": origin, "refreshes": refreshes, "refused": refused})


async def indexnow_get(request: web.Request) -> web.StreamResponse:
    q = request.query
    if "url" not in q or "key" not in q:
        raise ApiError(400, "bad_request", "url and key are required")
    url = bounded("url", q["url"], URL_MAX)
    location = q.get("keyLocation")
    return await _submit(request, [url], q["key"], location and bounded("keyLocation", location, URL_MAX))


async def indexnow_post(request: web.Request) -> web.StreamResponse:
    body = await read_json_object(request, _BODY_MAX)
    urls = body.get("urlList")
    if not isinstance(urls, list):
        raise ApiError(400, "bad_request", "urlList: a list of URLs")
    host, location = body.get("host"), body.get("keyLocation")
    if isinstance(host, str):
        bounded("host", host, HOST_MAX)
    if isinstance(location, str):
        bounded("keyLocation", location, URL_MAX)
    return await _submit(request, urls, body.get("key"), location, host)


async def _close(app: web.Application) -> None:
    for checks in app[_CHECKS]:
        await checks.close()


def add_routes(app: web.Application) -> None:
    app[_CHECKS] = []
    app.on_cleanup.append(_close)
    app.router.add_get("/indexnow", indexnow_get, name="indexnow", allow_head=False)
    app.router.add_post("/indexnow", indexnow_post, name="indexnow.post")
