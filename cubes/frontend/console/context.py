"""What every console handler reaches: the stores, the registration service, the verifier.

The console is an HTML face of the same services the webmaster API uses --
``shared.webmaster.feeds.FeedRegistry`` (add, remove, fetch now, autoparser), ``shared.
rights`` (claims and host checks), ``shared.webmaster.refresh`` (one URL again now),
``shared.webmaster.access`` (who may), ``shared.webmaster.overview`` (what a feed and a host show) --
so the browser and the API can never disagree. Only the ways in differ: a cookie
session with CSRF tokens here, a bearer token there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aiohttp import web

from cubes.frontend.console.session import SessionGate, Signed
from cubes.frontend.jinja import render
from cubes.frontend.status.page import STATUS_CSS
from shared.clock import Clock
from shared.config import Settings
from shared.runtime.cube import Output
from shared.runtime.deps import Publish
from shared.stores import Feed, HostClaim, Stores
from shared.webmaster import access
from shared.webmaster.feeds import Authorize, FeedRegistry
from shared.webmaster.opml_import import tenant_origins_only
from shared.webmaster.refresh import Refresher
from shared.webmaster.rights import Rights
from shared.webmaster.signup import SignupLimiter

__all__ = ["CONSOLE_CSS", "ConsoleContext", "NoBus"]

CONSOLE_CSS = STATUS_CSS + (
    ".bar{display:flex;align-items:center;gap:1rem;margin:0 0 1.2rem}.bar h2{margin:0}.bar form{margin-left:auto}"
    ".card{background:var(--card);border:1px solid var(--line);border-radius:.9rem;padding:.9rem 1.1rem;"
    "margin:0 0 1.6rem;box-shadow:var(--shadow)}.card h3{margin:.1rem 0 .5rem;font-size:1.05rem}"
    ".feedurl{overflow-wrap:anywhere}.actions{display:flex;flex-wrap:wrap;gap:.5rem}"
    "form.inline{display:inline}form.row{display:flex;flex-wrap:wrap;gap:.5rem;margin:0 0 2rem}"
    "form.row input[type=url]{flex:1;min-width:16rem}.fields input{width:100%;max-width:36rem;box-sizing:border-box}"
    "input,select{font:inherit;padding:.45rem .7rem;border-radius:.6rem;border:1px solid var(--line);"
    "background:var(--card);color:var(--fg)}select{max-width:100%}.check{display:flex;align-items:center;gap:.3rem}"
    "button{font:inherit;font-weight:600;padding:.45rem .9rem;border:0;border-radius:.6rem;background:var(--acc);"
    "color:#fff;cursor:pointer}button.quiet{background:var(--line);color:var(--fg)}"
    "button.danger{background:var(--bad)}"
    ".notice{background:var(--card);border:1px solid var(--line);border-left:.3rem solid var(--acc);"
    "border-radius:.7rem;padding:.6rem 1rem}"
    ".problems{list-style:none;margin:0 0 1rem;padding:0}.problem{border-left:.25rem solid var(--line);"
    "padding:.3rem .8rem;margin:0 0 .7rem}.problem.error{border-left-color:var(--bad)}"
    ".problem.warning{border-left-color:var(--acc)}.problem p{margin:.15rem 0;overflow-wrap:anywhere}"
    ".problem .sev,.problem .at{color:var(--mut);font-size:.85rem}.hint{color:var(--mut)}"
    ".errors{color:var(--bad)}.attempts{color:var(--mut);font-size:.9rem;overflow-wrap:anywhere}"
    ".pages{list-style:none;padding:0}.pages li{margin:0 0 .5rem}.pages small{display:block;color:var(--mut)}"
    "th small,td small{display:block}.how li{margin:0 0 .3rem;overflow-wrap:anywhere}"
    ".stat b small{display:block;font-size:.8rem;font-weight:400;color:var(--mut)}"
    ".bar{flex-wrap:wrap}.bar h2{overflow-wrap:anywhere;min-width:0}code{overflow-wrap:anywhere}"
    ".console-login .search{max-width:30rem;margin:0 auto 1.2rem}"
    # a page as every screen tells it (shared/pages/state.py): its title, its state in words, why
    ".page .pt{margin:0;overflow-wrap:anywhere}.page .state{margin:.2rem 0}.page .state small{color:var(--mut)}"
    ".u{overflow-wrap:anywhere;font-size:.85rem;color:var(--mut);display:block}"
    ".waits{margin:.3rem 0;padding-left:1.1rem;font-size:.9rem}.waits small{display:block;color:var(--mut)}"
    "span.quiet,b.quiet{color:var(--mut)}"
    # the feeds an HTML page names, each with its buttons (feed.not_a_feed)
    ".offers{list-style:none;padding:0;margin:.4rem 0}.offers li{display:flex;flex-wrap:wrap;align-items:center;"
    "gap:.4rem;margin:0 0 .4rem}"
    ".legend{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .8rem;font-size:.88rem;margin:-1rem 0 2rem}"
    ".legend dd{margin:0;color:var(--mut)}"
    # on a phone a table's rows become cards, each cell under its column's name: nothing is cut off
    "@media(max-width:34rem){table.stack thead{display:none}table.stack tr{display:block;"
    "border-bottom:1px solid var(--line);padding:.3rem 0}table.stack tbody tr:last-child{border-bottom:0}"
    "table.stack th{display:block;border:0;padding:.4rem .8rem 0}"
    "table.stack td{display:block;border:0;padding:.15rem .8rem;text-align:left}"
    "table.stack td[data-label]::before{content:attr(data-label);display:block;font-size:.72rem;"
    "color:var(--mut);text-transform:uppercase;letter-spacing:.05em}"
    ".legend{grid-template-columns:1fr}.legend dd{margin:0 0 .4rem}}"
)


class NoBus(Exception):
    """The console runs without a bus (a frontend alone): actions that publish are unavailable."""


@dataclass
class ConsoleContext:
    settings: Settings
    stores: Stores
    clock: Clock
    gate: SessionGate
    #: publish and await the acknowledgements (``Deps.publish``); None: a frontend without a bus
    publish: Publish | None = None
    #: the resolver the SSRF guard wraps (tests map *.partner.test to 127.0.0.1)
    resolver: Any = None
    _rights: Rights | None = field(default=None, repr=False)
    _refresher: Refresher | None = field(default=None, repr=False)
    #: the sign-up form's limit, the API's rule (``shared/webmaster/signup.py``); made on first use
    _signups: SignupLimiter | None = field(default=None, repr=False)

    @property
    def signups(self) -> SignupLimiter:
        if self._signups is None:
            self._signups = SignupLimiter(self.settings.api, self.clock)
        return self._signups

    def now(self) -> datetime:
        return self.clock.now()

    async def send(self, outputs: Sequence[Output]) -> None:
        """Publish ``outputs`` on the bus (``NoBus`` when this frontend has none)."""
        if self.publish is None:
            raise NoBus("this frontend has no message bus: adding, removing and fetching feeds is off")
        await self.publish(outputs)

    def registry(self) -> FeedRegistry:
        return FeedRegistry.from_settings(
            self.settings, self.stores.feeds, self.send, resolver=self.resolver, clock=self.clock
        )

    def rights(self) -> Rights:
        """Claims and proofs, as the API makes them (``shared.webmaster.rights``: each change recorded and told)."""
        if self._rights is None:
            self._rights = Rights.from_settings(self.settings, self.stores, self.clock, resolver=self.resolver)
        return self._rights

    def refresher(self) -> Refresher:
        """One page or image again now, as the API asks it (``shared.webmaster.refresh``: its memory of recent
        orders)."""
        if self._refresher is None:
            self._refresher = Refresher(self.stores, self.send, self.clock)
        return self._refresher

    async def close(self) -> None:
        if self._rights is not None:
            await self._rights.close()

    async def claims(self, tenant_id: str) -> list[HostClaim]:
        return await self.stores.tenants.hosts_of(tenant_id)

    async def own_feed(self, signed: Signed, feed_id: str) -> Feed | None:
        """The tenant's live feed ``feed_id`` (``shared.webmaster.access``, the API's rule); None: the same 404 for
        all."""
        try:
            return await access.own_feed(self.stores.feeds, signed.tenant_id, feed_id)
        except access.AccessRefused:
            return None

    async def own_claim(self, signed: Signed, host: str) -> HostClaim | None:
        """The tenant's claim on ``host``, verified or not (``shared.webmaster.access``); None: not one of its hosts."""
        try:
            return await access.host_claim(self.stores.tenants, signed.tenant_id, host, verified=False)
        except access.AccessRefused:
            return None

    def authorize(self, signed: Signed) -> Authorize:
        """What a registration asks of a feed URL's origin: the API's check
        (``shared.webmaster.access.origin_claim``)."""
        return tenant_origins_only(self.stores.tenants, signed.tenant_id)

    def page(self, name: str, title: str, *, status: int = 200, **context: Any) -> web.Response:
        body = render(name, title=f"{title} · turbocubes console", extra_css=CONSOLE_CSS, **context)
        headers = {
            "Content-Security-Policy": (
                "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; "
                "base-uri 'none'; frame-ancestors 'none'"
            ),
            # frame-ancestors' twin for browsers that do not read it (clickjacking)
            "X-Frame-Options": "DENY",
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "same-origin",
            # a console page is one tenant's: never kept by a shared cache, nor by the browser's back cache
            "Cache-Control": "no-store",
        }
        return web.Response(text=body, status=status, content_type="text/html", charset="utf-8", headers=headers)
