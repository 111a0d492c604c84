"""Host routes: claim a host, list the tenant's hosts, verify one (docs/architecture.md sections 6 and
10).

* ``POST /api/v1/hosts`` {url} (or {host}) — claim the host for the calling
  tenant: ``201`` with its verification token and the three ways to publish
  it (DNS TXT, a file, a meta tag). The URL's origin (scheme, host, port;
  ``https://host`` for a bare host) is where the proof is looked for and all
  the right covers (``shared.webmaster.rights``). A claim gives no right to publish
  until it is verified, so tenants make their own (at most ``MAX_CLAIMS``);
  claiming again is idempotent, and a claim of another origin moves the claim
  there: a right on the old origin ends (told to those who hold or held one).
* ``GET /api/v1/hosts`` — every host the tenant claimed, verified or not,
  with its verification token, origin and how to publish the token, and its
  ``alias``: the ``www.`` spelling it is one site with, when the tenant
  verified both (``shared.webmaster.hosts``; otherwise the two are separate hosts).
* ``GET /api/v1/hosts/{host}`` — one host as the caller sees it: its claim,
  right and problems (a lapsing proof); with a right in force, its own
  sources' view: its feeds with their newest fetch, the roll-up (items
  refused and images failed by code, conflicts, failing feeds), its pages
  that lost something and its documents waiting for images -- never another
  tenant's (``shared.webmaster.overview``). A claim without a right shows nothing else.
* ``POST /api/v1/hosts/{host}/verify`` — look for the token
  (``shared.webmaster.verification``: DNS TXT, then the file and the meta tag on the
  claim's origin only, same-origin redirects only), every fetch through the
  SSRF guard; on success the claim is a right (``shared.webmaster.rights``; another
  tenant's right on the origin stays as it is). ``200`` either way, with
  ``verified`` and what each attempt found, naming the URL it was read from.

The operator's ``turbocubes hosts add`` stays, for tenants made by hand.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from aiohttp import web

from cubes.api.auth import TENANT, require_host
from cubes.api.bodies import read_json_object
from cubes.api.context import ctx_of
from cubes.api.errors import ApiError, FieldError, ValidationFailed, json_response
from cubes.api.feeds import registry_of, unavailable_on_outage
from cubes.api.params import HOST_MAX, URL_MAX, path_host, too_long
from shared.origins import origin_host, origin_of
from shared.stores import HostClaim
from shared.urls import canonical_host
from shared.webmaster.hosts import scope_for
from shared.webmaster.overview import counts_json, host_overview, page_json, report_json, rollup_json
from shared.webmaster.rights import claim_problems
from shared.webmaster.turbo_switch import switch
from shared.webmaster.verification import instructions

__all__ = ["MAX_CLAIMS", "add_routes", "claim_json"]

#: hosts one tenant may claim through the API (the operator's CLI is not bound by it)
MAX_CLAIMS = 100
#: a claim's body: a URL of up to URL_MAX characters, 12 bytes each at most as JSON escapes them
_BODY_MAX = 64 * 1024


def claim_json(c: HostClaim, verified_hosts: list[str], grace_s: float) -> dict[str, Any]:
    ends = c.lapsing_since + timedelta(seconds=grace_s) if c.verified and c.lapsing_since else None
    return {
        "host": c.host,
        "verified": c.verified,
        # what the right covers (scheme, host, port), and where the proof is looked for
        "origin": c.origin,
        # the www. spelling this host is one site with (shared.webmaster.hosts): both verified by you
        "alias": scope_for(c.host, verified_hosts).alias if c.verified else None,
        "verification_token": c.verification_token,
        "how_to_verify": instructions(c.host, c.verification_token, c.origin),
        "turbo": c.turbo,
        "right": {
            "since": c.verified_at,
            "method": c.method,
            "checked_at": c.checked_at,
            "lapsing_since": c.lapsing_since if c.verified else None,
            "ends_after": ends,
        },
        "problems": [p.as_dict() for p in claim_problems(c, grace_s)],
    }


def _claimed(body: dict[str, Any]) -> tuple[str, str | None]:
    """(host, origin) from ``{"url": ...}`` or ``{"host": ...}``; every problem at once."""
    problems = [FieldError(k[:64], "unknown field") for k in sorted(set(body) - {"url", "host"})[:10]]
    url, host = body.get("url"), body.get("host")
    origin = None
    if isinstance(url, str) and (long := too_long("url", url, URL_MAX)) is not None:
        problems.append(long)
    elif isinstance(url, str) and url:
        try:
            origin = origin_of(url)
            host = origin_host(origin)
        except ValueError as exc:
            problems.append(
                FieldError("url", f"an absolute http(s) URL of the site, e.g. https://shop.example/: {exc}")
            )
    elif url is not None:
        problems.append(FieldError("url", "a string"))
    if (origin is None and not isinstance(host, str)) or not host:
        if not problems:
            problems.append(FieldError("url", "required: the site's URL (or host: its name)"))
        raise ValidationFailed(problems)
    if origin is None and (long := too_long("host", host, HOST_MAX)) is not None:
        problems.append(long)
    elif origin is None:
        try:
            host = canonical_host(host)
        except ValueError as exc:
            problems.append(FieldError("host", str(exc)))
    if problems:
        raise ValidationFailed(problems)
    return host, origin


async def claim_host(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    tenant_id: str = request[TENANT]
    host, origin = _claimed(await read_json_object(request, _BODY_MAX))
    claims = await ctx.stores.tenants.hosts_of(tenant_id)
    existing = next((c for c in claims if c.host == host), None)
    if existing is None and len(claims) >= MAX_CLAIMS:
        raise ApiError(
            403, "forbidden", f"a tenant claims at most {MAX_CLAIMS} hosts through the API; ask the operator"
        )
    claim = await ctx.rights.claim(tenant_id, host, origin)
    verified = [c.host for c in claims if c.verified and c.host != host] + ([host] if claim.verified else [])
    return json_response(
        claim_json(claim, verified, ctx.rights.grace_s),
        status=200 if existing is not None else 201,
        headers={"Location": f"/api/v1/hosts/{host}"},
    )


async def list_hosts(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    claims = await ctx.stores.tenants.hosts_of(request[TENANT])
    verified = [c.host for c in claims if c.verified]
    return json_response({"hosts": [claim_json(c, verified, ctx.rights.grace_s) for c in claims]})


async def get_host(request: web.Request) -> web.StreamResponse:
    """The host as the caller sees it: its claim; with a right, its own sources' feeds, pages and waits."""
    ctx = ctx_of(request)
    host = path_host(request)
    tenant_id: str = request[TENANT]
    claim = await require_host(ctx.stores.tenants, tenant_id, host, verified=False)
    claims = await ctx.stores.tenants.hosts_of(tenant_id)
    out = claim_json(claim, [c.host for c in claims if c.verified], ctx.rights.grace_s)
    if not claim.verified:
        return json_response(out)  # a claim without a right shows the claim and nothing else
    view = await host_overview(ctx.stores, host, await ctx.stores.feeds.list(tenant_id), tenant_id=tenant_id)
    return json_response(
        {
            **out,
            "rollup": rollup_json(view.rollup),
            "feeds": [
                {
                    "feed_id": f.feed.feed_id,
                    "url": f.feed.url,
                    "latest_fetch": report_json(f.latest) if f.latest else None,
                    "failing": bool(f.rollup.failing_feeds),
                }
                for f in view.feeds
            ],
            "pages": counts_json(view.counts),
            "pages_with_problems": [page_json(p) for p in view.pages],
            "waiting_for_images": [{**page_json(w), "missing": [u for u, _ in w.waiting_for]} for w in view.waiting],
        }
    )


async def verify_host(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    host = path_host(request)
    tenant_id: str = request[TENANT]
    claim = await require_host(ctx.stores.tenants, tenant_id, host, verified=False)
    result = await ctx.rights.verify(claim)
    return json_response(
        {
            "host": host,
            "origin": claim.origin,
            "verified": result.verified,
            "method": result.method.value if result.method else None,
            "attempts": list(result.attempts),
        }
    )


async def set_turbo(request: web.Request) -> web.StreamResponse:
    """Switch your Turbo pages of the host on or off ("Turbo off"), for a host you hold a right on.

    Off: at the next fetch of each of your feeds of the host -- ordered here, at once, through the
    host's polite lane -- every page of yours there is removed (KV store and search; the autoparser's
    too when no other holder of the host keeps its pages on) and nothing of yours is published until
    it is switched on again. On: those fetches publish again what the feeds still have, the
    autoparser's removed pages are fetched again, and the answer says how many uploaded pages only a
    new upload brings back (``shared/webmaster/turbo_switch.py``). Another holder's pages stay.
    """
    ctx = ctx_of(request)
    host = path_host(request)
    tenant_id: str = request[TENANT]
    await require_host(ctx.stores.tenants, tenant_id, host)  # verified: only the owner switches its pages
    body = await read_json_object(request, 1024)  # {"enabled": false} and nothing else
    enabled = body.get("enabled")
    if not isinstance(enabled, bool) or set(body) - {"enabled"}:
        raise ValidationFailed([FieldError("enabled", 'give {"enabled": true} or {"enabled": false}')])
    done = await unavailable_on_outage(switch(ctx.stores, registry_of(ctx), tenant_id, host, enabled=enabled))
    return json_response(done.json())


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_post("/api/v1/hosts", claim_host, name="hosts.claim")
    router.add_get("/api/v1/hosts", list_hosts, name="hosts.list", allow_head=False)
    router.add_get("/api/v1/hosts/{host}", get_host, name="hosts.get", allow_head=False)
    router.add_post("/api/v1/hosts/{host}/verify", verify_host, name="hosts.verify")
    router.add_put("/api/v1/hosts/{host}/turbo", set_turbo, name="hosts.turbo")
