"""The console's actions: each one a form POST, answered with a redirect (post/redirect/get).

Claim and verify a host, add and remove a feed, switch its autoparser, fetch
it now -- each through the service the API uses (``shared.webmaster.feeds``,
``shared.webmaster.rights``) and its authorization (``shared.webmaster.access``), with the same rules: a feed only on
a verified host
of the tenant, the SSRF guard on every URL, fetch now through the host's lane.
A refusal re-renders the page with what to fix, as the API's 422 does.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import quote

from aiohttp import web

from cubes.frontend.console import flash
from cubes.frontend.console.context import ConsoleContext, NoBus
from cubes.frontend.console.session import Signed
from cubes.frontend.console.views import feed_page, home_page, host_page, not_found
from shared.errors import NotFound, TurbocubesError
from shared.origins import origin_host, origin_of
from shared.webmaster import access
from shared.webmaster.branding import BrandingRefused, apply_branding, parse_branding
from shared.webmaster.feed_options import FeedOptions
from shared.webmaster.feeds import WEBMASTER_FORMATS, RegistrationRefused
from shared.webmaster.refresh import RefreshRefused
from shared.webmaster.turbo_switch import switch

__all__ = [
    "add_feed",
    "branding_form",
    "check_feed",
    "claim_host",
    "fetch_now",
    "options_change",
    "refresh_url",
    "remove_feed",
    "set_branding",
    "set_options",
    "switch_autoparser",
    "switch_turbo",
    "verify_host",
]

#: hosts one tenant claims through the console (the API's limit, cubes/api/hosts.MAX_CLAIMS)
_MAX_CLAIMS = 100


def _see(path: str) -> web.HTTPSeeOther:
    return web.HTTPSeeOther(path)


async def claim_host(c: ConsoleContext, signed: Signed, form: dict[str, str]) -> web.StreamResponse:
    try:
        origin = origin_of(form.get("url", ""))
    except ValueError as exc:
        why = f"Give your site's URL, e.g. https://your.site/ ({exc})"
        return await home_page(c, signed, host_errors=[why], status=422)
    host = origin_host(origin)
    claims = await c.claims(signed.tenant_id)
    if all(x.host != host for x in claims) and len(claims) >= _MAX_CLAIMS:
        return await home_page(c, signed, host_errors=[f"At most {_MAX_CLAIMS} hosts per tenant."], status=403)
    await c.rights().claim(signed.tenant_id, host, origin)
    raise _see(f"/console/hosts/{quote(host, safe='')}")


async def verify_host(c: ConsoleContext, signed: Signed, host: str) -> web.StreamResponse:
    claim = await c.own_claim(signed, host)
    if claim is None:
        return not_found(c, signed, "host")
    result = await c.rights().verify(claim)
    notice = f"Verified by {result.method}." if result.verified else "Not verified yet: see what was found below."
    response = _see(f"/console/hosts/{quote(host, safe='')}")
    flash.put(response, signed.session_id, {"notice": notice, "attempts": list(result.attempts)}, secure=c.gate.secure)
    raise response


async def switch_turbo(c: ConsoleContext, signed: Signed, host: str, on: bool) -> web.StreamResponse:
    """The host page's Turbo switch (``shared/webmaster/turbo_switch.py``, as ``PUT /api/v1/hosts/{host}/turbo``)."""
    claim = await c.own_claim(signed, host)
    if claim is None:
        return not_found(c, signed, "host")
    if not claim.verified:
        return await host_page(c, signed, host, notice="Not switched: verify the host first.", status=403)
    try:
        done = await switch(c.stores, c.registry(), signed.tenant_id, host, enabled=on)
    except (NoBus, TurbocubesError) as exc:
        state = "on" if on else "off"
        why = f"Switched {state}, but its feeds could not be fetched now ({exc}): switch {state} again in a moment."
        return await host_page(c, signed, host, notice=why, status=503)
    response = _see(f"/console/hosts/{quote(host, safe='')}#turbo")
    flash.put(response, signed.session_id, {"notice": done.said()}, secure=c.gate.secure)
    raise response


async def add_feed(c: ConsoleContext, signed: Signed, form: dict[str, str]) -> web.StreamResponse:
    try:
        done = await c.registry().register(
            form.get("url", ""),
            fmt=form.get("format", "auto") or "auto",
            autoparser=form.get("autoparser") == "1",
            tenant_id=signed.tenant_id,
            formats=WEBMASTER_FORMATS,
            authorize=c.authorize(signed),
        )
    except RegistrationRefused as exc:
        return await home_page(c, signed, feed_errors=[f"{p.field}: {p.message}" for p in exc.problems], status=422)
    except (NoBus, TurbocubesError) as exc:
        return await home_page(c, signed, feed_errors=[f"not now: {exc}"], status=503)
    raise _see(f"/console/feeds/{done.feed.feed_id}")


async def check_feed(c: ConsoleContext, signed: Signed, form: dict[str, str]) -> web.StreamResponse:
    """A check of a feed URL (``FeedRegistry.check``): its results and previews on the upload's page."""
    try:
        task = await c.registry().check(
            form.get("url", ""), tasks=c.stores.tasks, tenant_id=signed.tenant_id, authorize=c.authorize(signed)
        )
    except RegistrationRefused as exc:
        return await home_page(c, signed, check_errors=[f"{p.field}: {p.message}" for p in exc.problems], status=422)
    except (NoBus, TurbocubesError) as exc:
        return await home_page(c, signed, check_errors=[f"not now: {exc}"], status=503)
    raise _see(f"/console/uploads/{task.task_id}")


async def fetch_now(c: ConsoleContext, signed: Signed, feed_id: str) -> web.StreamResponse:
    try:  # the API's rule: the tenant's feed, on a host it still holds a right on
        await access.feed_in_force(c.stores.feeds, c.stores.tenants, signed.tenant_id, feed_id)
    except access.AccessRefused as exc:
        if exc.missing:
            return not_found(c, signed, "feed")
        return await feed_page(c, signed, feed_id, notice=f"Not fetched: {exc.message}", status=403)
    fetch_id = uuid.uuid4().hex
    try:
        await c.registry().fetch_now(feed_id, fetch_id=fetch_id)
    except (NoBus, TurbocubesError) as exc:
        return await feed_page(c, signed, feed_id, notice=f"Not fetched: {exc}")
    raise _see(f"/console/feeds/{feed_id}?fetch={fetch_id}")


async def switch_autoparser(c: ConsoleContext, signed: Signed, feed_id: str, on: bool) -> web.StreamResponse:
    feed = await c.own_feed(signed, feed_id)
    if feed is None:
        return not_found(c, signed, "feed")
    try:
        await c.registry().register(
            feed.url,
            fmt=feed.format,
            services=feed.services,
            autoparser=on,
            tenant_id=signed.tenant_id,
            formats=WEBMASTER_FORMATS,
            authorize=c.authorize(signed),  # the API's PATCH asks the same: a right on the feed's origin
        )
    except RegistrationRefused as exc:
        why = "; ".join(p.message for p in exc.problems)
        return await feed_page(c, signed, feed_id, notice=f"Not changed: {why}", status=403)
    except (NoBus, TurbocubesError) as exc:
        return await feed_page(c, signed, feed_id, notice=f"Not changed: {exc}", status=503)
    raise _see(f"/console/feeds/{feed_id}")


def options_change(form: dict[str, str], current: FeedOptions, sealed: bool) -> dict[str, Any]:
    """The options change the feed page's form asks for, as the API takes it (``shared/webmaster/feed_options.py``).

    The form shows every public value, so what it sends replaces them; a secret is never shown, so
    an empty password or headers box keeps what is kept, and "forget the credentials" clears them.
    """
    change: dict[str, Any] = {}
    timeout = form.get("timeout_s", "").strip()
    try:
        change["timeout_s"] = float(timeout) if timeout else None
    except ValueError:
        change["timeout_s"] = timeout  # refused by the rules, with the field named
    if form.get("forget_credentials") == "1":
        change["basic_auth"] = None
        change["headers"] = None
    else:
        username, password = form.get("username", "").strip(), form.get("password", "")
        if username and (password or username != current.username or not sealed):
            change["basic_auth"] = {"username": username, "password": password}
        elif not username and current.username:
            change["basic_auth"] = None
        lines = [line for line in form.get("headers", "").splitlines() if line.strip()]
        if lines:
            headers: dict[str, str] = {}
            for line in lines:
                name, _, value = line.partition(":")
                headers[name.strip()] = value.strip()
            change["headers"] = headers
    filters: dict[str, Any] = {}
    for key in ("keep_categories", "drop_categories"):
        filters[key] = [n.strip() for n in form.get(key, "").split(",") if n.strip()]
    for key in ("keep_pattern", "drop_pattern"):
        filters[key] = form.get(key, "").strip() or None
    change["filters"] = filters
    if "full_text" in form:
        change["full_text"] = form["full_text"]
    return change


async def set_options(c: ConsoleContext, signed: Signed, feed_id: str, form: dict[str, str]) -> web.StreamResponse:
    """The feed page's fetch options and filters, through the registration service as the API's PATCH."""
    feed = await c.own_feed(signed, feed_id)
    if feed is None:
        return not_found(c, signed, "feed")
    change = options_change(form, FeedOptions.from_json(feed.options), feed.secret is not None)
    try:
        await c.registry().register(
            feed.url,
            fmt=feed.format,
            services=feed.services,
            autoparser=feed.autoparser,
            tenant_id=signed.tenant_id,
            formats=WEBMASTER_FORMATS,
            authorize=c.authorize(signed),
            options=change,
        )
    except RegistrationRefused as exc:
        errors = [f"{p.field}: {p.message}" for p in exc.problems]
        return await feed_page(c, signed, feed_id, options_errors=errors, status=422)
    except (NoBus, TurbocubesError) as exc:
        return await feed_page(c, signed, feed_id, notice=f"Not changed: {exc}", status=503)
    raise _see(f"/console/feeds/{feed_id}?saved=options")


#: the shop settings' fields (``shared.pages.shop.ShopSettings``), ``shop_<field>`` in the form
_SHOP_FIELDS = ("cart_url", "order_phone", "order_email", "order_url")


def branding_form(form: dict[str, str]) -> dict[str, Any]:
    """The branding the host page's form asks for, as the API takes it: menu lines ``Label | URL``,
    contact lines ``kind: value`` (phone, email, telegram, url), the shop's fields ``shop_<field>``."""
    raw: dict[str, Any] = {}
    for key in ("display_name", "logo_url", "accent"):
        if value := form.get(key, "").strip():
            raw[key] = value
    menu = []
    for line in form.get("menu", "").splitlines():
        label, sep, url = line.partition("|")
        if line.strip():
            menu.append({"label": label.strip(), "url": url.strip() if sep else ""})
    contacts = []
    for line in form.get("contacts", "").splitlines():
        kind, sep, value = line.partition(":")
        if line.strip():
            contacts.append({"kind": kind.strip().lower(), "value": value.strip() if sep else ""})
    if menu:
        raw["menu"] = menu
    if contacts:
        raw["contacts"] = contacts
    shop = {key: value for key in _SHOP_FIELDS if (value := form.get(f"shop_{key}", "").strip())}
    if shop:
        raw["shop"] = shop
    return raw


async def set_branding(c: ConsoleContext, signed: Signed, host: str, form: dict[str, str]) -> web.StreamResponse:
    """The host page's branding form: the API's PUT, through the same rules and the same service."""
    try:  # the API's rule (shared.webmaster.access.host_claim): the tenant's claim, with a right in force
        await access.host_claim(c.stores.tenants, signed.tenant_id, host)
    except access.AccessRefused as exc:
        if await c.own_claim(signed, host) is None:
            return not_found(c, signed, "host")
        return await host_page(c, signed, host, notice=f"Not changed: {exc.message}", status=403)
    try:
        branding = None if form.get("reset") == "1" else parse_branding(branding_form(form), host)
    except BrandingRefused as exc:
        errors = [f"{f}: {m}" for f, m in exc.problems]
        return await host_page(c, signed, host, branding_errors=errors, status=422)
    try:
        await apply_branding(c.stores, c.send, signed.tenant_id, host, branding, c.clock.now())
    except (NoBus, TurbocubesError) as exc:
        return await host_page(c, signed, host, notice=f"Not changed: {exc}", status=503)
    raise _see(f"/console/hosts/{quote(host, safe='')}?saved=branding#branding")


async def remove_feed(c: ConsoleContext, signed: Signed, feed_id: str) -> web.StreamResponse:
    feed = await c.own_feed(signed, feed_id)
    if feed is None:
        return not_found(c, signed, "feed")
    try:
        await c.registry().remove(feed_id)
    except NotFound:
        pass  # removed meanwhile: what was asked is done
    except (NoBus, TurbocubesError) as exc:
        return await feed_page(c, signed, feed_id, notice=f"Not removed: {exc}")
    raise _see("/console?removed=1")


#: the console's words for what a refresh queued (``shared.webmaster.refresh.Action``)
_QUEUED = {
    "feed": "its feed is fetched now ({feeds})",
    "page": "the page is fetched again",
    "image": "the image is fetched again; its pages show the new copy if it changed",
    "purge": "the image is fetched again; its pages go without it if it is gone",
}


async def refresh_url(c: ConsoleContext, signed: Signed, host: str, form: dict[str, str]) -> web.StreamResponse:
    """The host page's "fetch one URL again now": the API's refresh and purge (``shared.webmaster.refresh``)."""
    if await c.own_claim(signed, host) is None:
        return not_found(c, signed, "host")
    what, url = form.get("what", "page"), form.get("url", "").strip()
    try:
        if what in ("image", "purge"):
            done = await c.refresher().image(url, tenant_id=signed.tenant_id, purge=what == "purge")
        else:
            done = await c.refresher().page(url, tenant_id=signed.tenant_id)
    except (access.AccessRefused, RefreshRefused) as exc:
        status = 404 if exc.code == "not_found" else 403 if isinstance(exc, access.AccessRefused) else 422
        return await host_page(c, signed, host, notice=f"Not fetched: {exc.message}", status=status)
    except (NoBus, TurbocubesError) as exc:
        return await host_page(c, signed, host, notice=f"Not fetched: {exc}", status=503)
    said = _QUEUED[done.action.value].format(feeds=", ".join(done.feeds))
    again = "" if done.queued else " (asked a moment ago already: the same order)"
    return await host_page(c, signed, host, notice=f"Queued: {done.url}: {said}{again}.")
