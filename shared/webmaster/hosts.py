"""What counts as the same host: one rule for claims, verification, uploads, feeds, deletes and the parser.

(docs/architecture.md section 6, "Per tenant, in".) docs/conventions.md rule 18 names "what counts as the
same host" as a rule with one owner: this module.

**A host is its canonical name** (``shared.urls.canonical_host``). ``example.com`` and
``www.example.com`` are two hosts: DNS lets two parties serve them, and each is claimed and
verified on its own -- verifying one never verifies the other. **They are aliases, one site, only
for a tenant that has verified both**: then the feeds and uploads of either may carry pages of the
other. No other spelling is an alias (no other subdomain).

**A right covers its origin** (``shared.webmaster.rights``: scheme, host and port): a tenant's source
publishes pages only on the origins of its rights on the source's host and its alias -- a right on
``https://x`` publishes nothing on ``http://x:8080``, which another party may hold.

Why not "``www.`` is always the same site", as the parser used to say: tenant X verified
``victim.example``, tenant Y verified ``www.victim.example``; X uploaded an item linking to Y's
``www.victim.example/story/1``, the parser took the two for one site while the claims took them
for two, and X's upload overwrote Y's page and took its ownership.

Where the rule is applied:

* claims and verification (``TenantStore``, ``shared.webmaster.rights``): per host, for one origin;
* the API (``cubes.api.auth.require_host``): an upload's ``host``, a feed URL's host and a
  deleted page's host need a verified claim of the caller on that very host;
* the parser (``cubes.parser.identity``): an item's link must be on a host its source's
  ``HostScope`` admits -- the feed's or upload's host, and that host's alias when the same
  tenant verified both. The scope is read when the body is parsed, so a feed whose host was
  verified by another tenant since it was registered publishes nothing more;
* the scheduler's article discovery for autoparser hosts: the same scope.

Feeds the operator registered without a tenant publish their own host only: there is no claim
to make an alias of.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shared.origins import origin_host
from shared.urls import is_ip_literal

if TYPE_CHECKING:
    from shared.stores.tenants import TenantStore

__all__ = ["HostScope", "scope_for", "tenant_scope", "www_alias"]

_WWW = "www."


def www_alias(host: str) -> str | None:
    """The other spelling of a canonical host (``www.x.y`` <-> ``x.y``), or None when it has none.

    IP literals have no alias, nor does a host whose bare part would be a single label
    (``www.com`` is not an alias of the top-level domain ``com``).
    """
    if not host or is_ip_literal(host):
        return None
    bare = host[len(_WWW) :] if host.startswith(_WWW) else host
    if "." not in bare:
        return None
    return bare if bare != host else _WWW + host


@dataclass(frozen=True, slots=True)
class HostScope:
    """The hosts one source (a feed, an upload) may publish pages on.

    ``alias`` is set only when the source's tenant holds verified claims on both spellings.
    ``verified`` is False when the tenant no longer holds a right on ``host`` itself (it lapsed,
    or the claim moved to another origin): then nothing is admitted. ``origins``: the origins of
    the tenant's rights on the host and its alias (None: a source of no tenant, any origin of it).
    """

    host: str
    alias: str | None = None
    verified: bool = True
    origins: frozenset[str] | None = None

    def admits(self, host: str, origin: str | None = None) -> bool:
        """Whether a page on ``host`` (at ``origin``, canonical) may be published from this source."""
        if not self.verified or not (host == self.host or (self.alias is not None and host == self.alias)):
            return False
        return self.origins is None or origin in self.origins

    def refusal(self, host: str, origin: str | None = None) -> str:
        """Why a page on ``host`` is refused, with what the webmaster can do about it."""
        if not self.verified:
            return (
                f"the host {self.host!r} is not verified for this tenant any more "
                "(its proof lapsed past its grace, or the claim moved to another origin): nothing of it is published"
            )
        if self.origins is not None and (host == self.host or host == self.alias) and origin not in self.origins:
            mine = ", ".join(sorted(self.origins))
            return (
                f"item link is on {origin}, an origin this tenant holds no right on (its rights here: {mine}); "
                "a right covers the scheme, host and port that were proven"
            )
        why = (
            f"item link is on host {host!r}, not on the feed's host {self.host!r}; "
            "a feed may only publish pages of its own site"
        )
        if host == www_alias(self.host):
            why += (
                f" ({host} and {self.host} are two hosts: they count as one site once the same tenant "
                f"has verified both; claim and verify {host} too)"
            )
        return why


def scope_for(host: str, verified: Iterable[str] | None, origins: Iterable[str] | None = None) -> HostScope:
    """The scope of a source on ``host`` for a tenant whose verified hosts are ``verified``.

    ``verified`` None: a source without a tenant (the operator's): its own host, no alias, any origin.
    ``origins``: the origins of the tenant's rights (None: not checked).
    """
    if verified is None:
        return HostScope(host)
    hosts = frozenset(verified)
    alias = www_alias(host)
    alias = alias if alias in hosts else None
    kept = None if origins is None else frozenset(o for o in origins if origin_host(o) in (host, alias))
    return HostScope(host, alias, verified=host in hosts, origins=kept)


async def tenant_scope(tenants: TenantStore, tenant_id: str | None, host: str) -> HostScope:
    """``scope_for`` with the tenant's rights read from the store now (one query)."""
    if not tenant_id:
        return scope_for(host, None)
    rights = [claim for claim in await tenants.hosts_of(tenant_id) if claim.verified]
    return scope_for(host, [c.host for c in rights], [c.origin for c in rights])
