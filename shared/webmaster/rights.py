"""Sites have owners: every change of a right on an origin, made and told in one place (docs/architecture.md
section 6, "Sites have owners").

**Who owns what.**

* A *claim* is a tenant's on a host, for one origin: scheme, host and port (``shared.origins``; the
  URL the tenant gave, ``https://host`` when it gave none). A *right* is a claim whose proof was
  found on that origin (``shared.webmaster.verification``): it covers that origin and no other -- not another
  port, not the other scheme. ``www.x`` is a host of its own; a tenant that holds rights on both
  ``x`` and ``www.x`` publishes either from the feeds of either (``shared.webmaster.hosts``).
* **Several tenants may hold rights on one origin** (as search consoles allow): proving control
  never takes anything from another holder. None can remove another's right, disable its feeds,
  switch off its pages, or delete or replace its pages.
* **A page belongs to the tenant whose source published it** (a feed of its own, or its uploads):
  only that tenant may replace it (publish the URL from another source) or delete it
  (``DELETE /api/v1/pages``). Another holder of the origin that publishes the same URL gets a
  ``conflict.other_tenant`` problem for it and the page stays as it is. When the publishing
  tenant no longer holds a right on the page's origin (its right ended), or when no tenant
  published it (the operator's feeds, the autoparser), any holder of a right on the origin may
  replace or delete it. Between one tenant's own sources, the source priorities decide as before
  (partner API > Turbo > YML / RSS > autoparser). ``page_owner`` is the rule's one reading.

**Rights are re-checked.** The api cube's timer (``cubes/api/recheck.py``) looks for each right's
proof again every ``api.proof_recheck_s``. A proof not found starts the right's grace
(``api.proof_grace_s``): its holder is told at once (a ``lapsing`` notice, and a ``host.proof_lapsing``
problem on the host), and the right ends at the first re-check after the grace that still does not
find it (``ended``). Found again in time, it goes on (``restored``).

**Every change is told.** Each change is a ``RightsEvent`` (``shared/stores/notices.py``) with one
``Notice`` per tenant told, in words for that tenant that never name another: a right granted,
ended or withdrawn is told to every tenant that holds or ever held a right on the origin; a lapse
and a restoration only to the right's holder (nothing changed for the others). The console's home
page and ``GET /api/v1/notices`` show them; ``hooks`` (awaited after the notices are stored) and
the notice table (an outbox, in ``notice_id`` order) are where e-mail or webhooks plug in.

The API, the console, ``turbocubes hosts`` and the timer all change rights through ``Rights``.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from shared.clock import Clock
from shared.config import Settings
from shared.http import Fetcher
from shared.problems import Problem, problem
from shared.stores import HostClaim, Notice, RightChange, RightsEvent, Stores
from shared.webmaster.verification import Verification, Verifier, dns_txt_lookup

__all__ = ["Hook", "PageOwner", "Rights", "claim_problems", "holds_right", "page_owner", "source_tenant"]

#: called with each event and the notices it made, once they are stored
Hook = Callable[[RightsEvent, list[Notice]], Awaitable[None]]
#: changes told to the right's holder alone
_ONLY_YOURS = frozenset({RightChange.lapsing, RightChange.restored})


def _id(clock: Clock) -> str:
    """Time first, then random (as UUIDv7 is): notices read in id order are read in time order."""
    return f"{int(clock.time() * 1_000_000):016x}{secrets.token_hex(8)}"


def _days(seconds: float) -> str:
    days = seconds / 86400
    return f"{days:g} day{'s' if days != 1 else ''}" if days >= 1 else f"{seconds / 3600:g} h"


def _message(event: RightsEvent, yours: bool, *, grace_s: float, moved_to: str | None = None) -> str:
    origin = event.origin
    c = event.change
    if c is RightChange.granted:
        if yours:
            return f"Your right on {origin} is in force: its proof was found ({event.method})."
        return (
            f"Another tenant proved control of {origin} and holds a right on it too. Your right, feeds and "
            "pages are not affected: a page stays the tenant's whose source published it."
        )
    if c is RightChange.lapsing:
        ends = f"{event.ends_at:%Y-%m-%d %H:%M} UTC" if event.ends_at else "soon"
        return (
            f"The proof of your right on {origin} was not found at its re-check. Publish the verification "
            f"token again: the right ends after {ends} if it is still missing then."
        )
    if c is RightChange.restored:
        return f"The proof of your right on {origin} was found again ({event.method}): the right goes on."
    if c is RightChange.ended:
        if yours:
            return (
                f"Your right on {origin} ended: its proof was missing for more than {_days(grace_s)}. Nothing "
                "is published from your feeds and uploads there until you verify it again."
            )
        return f"Another tenant's right on {origin} ended."
    if yours:
        where = f"you claimed {moved_to} instead" if moved_to else "you gave the claim up"
        return f"Your right on {origin} ended: {where}."
    return f"Another tenant gave up its right on {origin}."


class Rights:
    """Claims, proofs and re-checks, each change recorded and told (see the module docstring)."""

    def __init__(
        self,
        stores: Stores,
        verifier: Verifier,
        clock: Clock,
        *,
        grace_s: float,
        recheck_s: float = 86400.0,
        hooks: Sequence[Hook] = (),
    ) -> None:
        self.stores = stores
        self.verifier = verifier
        self.clock = clock
        self.grace_s = grace_s
        self.recheck_s = recheck_s
        self.hooks = tuple(hooks)

    @classmethod
    def from_settings(
        cls, settings: Settings, stores: Stores, clock: Clock, *, resolver: Any = None, hooks: Sequence[Hook] = ()
    ) -> Rights:
        """Rights checked through the guarded fetcher and the configured DNS servers (``close`` when done)."""
        verifier = Verifier(
            Fetcher(settings, resolver=resolver, clock=clock), txt=dns_txt_lookup(settings.api.dns_servers)
        )
        api = settings.api
        return cls(stores, verifier, clock, grace_s=api.proof_grace_s, recheck_s=api.proof_recheck_s, hooks=hooks)

    async def close(self) -> None:
        await self.verifier.close()

    async def claim(self, tenant_id: str, host: str, origin: str | None = None) -> HostClaim:
        """Claim ``host`` (at ``origin``); a right on another origin of the host it had ends, told."""
        tenants = self.stores.tenants
        before = next((c for c in await tenants.hosts_of(tenant_id) if c.host == host), None)
        after = await tenants.add_host(tenant_id, host, origin=origin, now=self.clock.now())
        if before is not None and before.verified and not after.verified:
            await self._tell(RightChange.withdrawn, before, moved_to=after.origin)
        return after

    async def verify(self, claim: HostClaim) -> Verification:
        """Look for the claim's proof now; grant, keep, restore or start the lapse of its right."""
        result = await self.verifier.check(claim.host, claim.verification_token, origin=claim.origin)
        now = self.clock.now()
        method = result.method.value if result.method else None
        tenants = self.stores.tenants
        if not claim.verified:
            if result.verified:
                await tenants.set_verified(claim.tenant_id, claim.host, True, method=method, now=now)
                await self._tell(RightChange.granted, claim, method=method)
            return result
        after = await tenants.checked(claim.tenant_id, claim.host, found=result.verified, now=now)
        if result.verified:
            if claim.lapsing_since is not None:
                await self._tell(RightChange.restored, claim, method=method)
        elif claim.lapsing_since is None:
            assert after.lapsing_since is not None
            await self._tell(RightChange.lapsing, claim, ends_at=after.lapsing_since + timedelta(seconds=self.grace_s))
        elif now >= claim.lapsing_since + timedelta(seconds=self.grace_s):
            await tenants.set_verified(claim.tenant_id, claim.host, False, now=now)
            await self._tell(RightChange.ended, claim)
        return result

    async def sweep(self, *, limit: int = 100) -> int:
        """Re-check the rights whose last check is older than ``recheck_s`` (the timer's work); how many."""
        now = self.clock.now()
        due = await self.stores.tenants.due_checks(now - timedelta(seconds=self.recheck_s), now=now, limit=limit)
        for claim in due:
            await self.verify(claim)
        return len(due)

    async def _tell(
        self,
        change: RightChange,
        claim: HostClaim,
        *,
        method: str | None = None,
        ends_at: datetime | None = None,
        moved_to: str | None = None,
    ) -> RightsEvent:
        event = RightsEvent(
            event_id=_id(self.clock),
            origin=claim.origin,
            host=claim.host,
            change=change,
            subject=claim.tenant_id,
            at=self.clock.now(),
            ends_at=ends_at,
            method=method,
        )
        told = {claim.tenant_id}
        if change not in _ONLY_YOURS:
            told |= {c.tenant_id for c in await self.stores.tenants.holders(claim.host) if c.origin == claim.origin}
            told |= await self.stores.notices.past_holders(claim.origin)
        notices = [
            Notice(
                _id(self.clock),
                tenant,
                event,
                tenant == claim.tenant_id,
                _message(event, tenant == claim.tenant_id, grace_s=self.grace_s, moved_to=moved_to),
            )
            for tenant in sorted(told)
        ]
        await self.stores.notices.record(event, notices)
        for hook in self.hooks:
            await hook(event, notices)
        return event


def claim_problems(claim: HostClaim, grace_s: float) -> list[Problem]:
    """What the holder of ``claim`` must fix about its right: a proof that went missing (the right lapses).

    A claim without a right says so itself, with the ways to prove it (``instructions``); how a right
    ended is its notice.
    """
    if claim.verified and claim.lapsing_since is not None:
        ends = claim.lapsing_since + timedelta(seconds=grace_s)
        return [
            problem(
                "host.proof_lapsing",
                f"the proof of your right on {claim.origin} was not found at its last re-check; the right ends "
                f"after {ends:%Y-%m-%d %H:%M} UTC if it is still missing then",
                link=claim.origin + "/",
            )
        ]
    return []


class PageOwner:
    """Who a published URL belongs to, for the rule in the module docstring."""

    def __init__(self, source_id: str | None, tenant_id: str | None, holds: bool) -> None:
        #: the hash store's owner of the URL (None: nobody claimed it)
        self.source_id = source_id
        #: the tenant of that source (None: the operator's feed, the autoparser, or nobody)
        self.tenant_id = tenant_id
        #: the tenant still holds a right on the URL's origin
        self.holds = holds

    def yields_to(self, tenant_id: str | None) -> bool:
        """True when ``tenant_id`` may replace or delete the page: its own, or one nobody holds."""
        return self.tenant_id is None or self.tenant_id == tenant_id or not self.holds


async def source_tenant(stores: Stores, source_id: str) -> str | None:
    """The tenant of a hash-store source id: ``tenant:<id>`` (uploads), ``feed:<id>`` (its feed's)."""
    kind, _, ident = source_id.partition(":")
    if kind == "tenant":
        return ident or None
    if kind == "feed":
        feed = await stores.feeds.get(ident)
        return feed.tenant_id if feed is not None else None
    return None  # the autoparser's, an operator feed without an id: nobody's


async def holds_right(stores: Stores, tenant_id: str, origin: str) -> bool:
    """Whether ``tenant_id`` holds a right on ``origin`` now."""
    return any(c.verified and c.origin == origin for c in await stores.tenants.hosts_of(tenant_id))


async def page_owner(stores: Stores, url: str, origin: str) -> PageOwner:
    """The owner of ``url`` (canonical, on ``origin``) as the page rule reads it."""
    owner = await stores.hashes.owner(url)
    if owner is None:
        return PageOwner(None, None, False)
    tenant = await source_tenant(stores, owner.source_id)
    return PageOwner(owner.source_id, tenant, tenant is not None and await holds_right(stores, tenant, origin))
