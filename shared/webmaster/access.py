"""Who may touch what: the one authorization rule of the webmaster API and the console (docs/architecture.md
section 6, "Per tenant, in" and "Sites have owners").

The API (``cubes/api``, a bearer token) and the console (``cubes/frontend/console``, a cookie
session) are two doors to the same services; each of their actions asks here, so the two can never
decide differently (a console action that skipped the owner check its API twin made let a tenant
switch the autoparser of a feed on a host it no longer held). The doors only differ in how they say
no: the API answers ``403`` / ``404`` with the refusal's ``code``, the console re-renders the page
with its message.

* ``host_claim``: the caller's claim on a host; with ``verified`` (the default) its right must be
  in force. No claim: ``host_not_owned``; a claim without a right: ``host_not_verified``. Hosts are
  public names, so saying "not yours" reveals nothing.
* ``own_feed``: the caller's live feed; another tenant's answers exactly as an unknown id does
  (``not_found``), since answering otherwise would confirm that the other tenant's feed exists.
* ``origin_claim``: the caller's right that covers an origin (scheme, host and port), what
  registering, changing or checking a feed asks of the feed URL's origin (``origin_not_held``
  otherwise): the crawler fetches a site on a tenant's behalf only where its right is, and a
  feed on another port or scheme of the host publishes nothing of the tenant's anyway.
* ``feed_in_force``: the caller's feed, on an origin it still holds a right on (what fetching it
  now asks: without the right its fetches publish nothing). Reading or removing a feed needs only
  ``own_feed``.
* ``page_access``: deleting a published page needs a right on the page's origin (scheme, host and
  port: ``origin_not_held`` otherwise) and the page must be the caller's, or nobody's
  (``page_not_owned``): the page rule of ``shared.webmaster.rights``. The refusal never names the tenant
  the page belongs to.
* ``permit``: what the caller's role allows (team access: ``shared/webmaster/team.py``). A viewer reads only; an
  editor also manages feeds, uploads and pages (every operation that is not a read), but not the
  team; an owner does everything, the team's users, invitations and tokens too. Each door names
  the operation's ``Need`` with ``need_of`` (a read is a GET; the team's operations are the team's),
  so the API and the console decide alike. A call made with an API token has the role of its scope
  (``ROLE_OF_SCOPE``); the tenant's own token is an owner's. Refused: ``role_forbids``.
"""

from __future__ import annotations

from enum import StrEnum

from shared.errors import TurbocubesError
from shared.origins import origin_host, origin_of
from shared.stores import Feed, FeedStore, HostClaim, Stores, TenantStore
from shared.webmaster.rights import page_owner

__all__ = [
    "ROLE_OF_SCOPE",
    "AccessRefused",
    "Need",
    "Role",
    "feed_in_force",
    "host_claim",
    "may",
    "need_of",
    "origin_claim",
    "own_feed",
    "page_access",
    "permit",
]


class Role(StrEnum):
    OWNER = "owner"
    EDITOR = "editor"
    VIEWER = "viewer"


class Need(StrEnum):
    """What an operation asks of the caller's role."""

    READ = "read"  # see feeds, pages, tasks, problems, hosts
    WRITE = "write"  # change them: feeds, uploads, pages, hosts, branding
    TEAM = "team"  # the team itself: users, invitations, API tokens


#: an API token's scope -> the role a call made with it has
ROLE_OF_SCOPE = {"read": Role.VIEWER, "write": Role.EDITOR, "owner": Role.OWNER}
_ALLOWED = {
    Role.VIEWER: frozenset({Need.READ}),
    Role.EDITOR: frozenset({Need.READ, Need.WRITE}),
    Role.OWNER: frozenset(Need),
}
_WHO = {Need.READ: "any member", Need.WRITE: "an editor or an owner", Need.TEAM: "an owner"}
_READS = frozenset({"GET", "HEAD", "OPTIONS"})


class AccessRefused(TurbocubesError):
    """The caller may not do this. ``code``: ``host_not_owned``, ``host_not_verified`` or ``not_found``."""

    def __init__(self, code: str, message: str, *, host: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.host = host

    @property
    def missing(self) -> bool:
        """True when the refusal must read as "no such thing" (another tenant's object)."""
        return self.code == "not_found"


async def host_claim(tenants: TenantStore, tenant_id: str, host: str, *, verified: bool = True) -> HostClaim:
    """The tenant's claim on ``host``; ``AccessRefused`` when it has none, or (``verified``) no right by it."""
    for claim in await tenants.hosts_of(tenant_id):
        if claim.host == host:
            if verified and not claim.verified:
                raise AccessRefused(
                    "host_not_verified",
                    f"host {host} is not verified yet: publish the verification token and "
                    f"POST /api/v1/hosts/{host}/verify",
                    host=host,
                )
            return claim
    raise AccessRefused("host_not_owned", f"host {host} does not belong to this tenant", host=host)


async def own_feed(feeds: FeedStore, tenant_id: str, feed_id: str) -> Feed:
    """The tenant's live feed ``feed_id``; ``AccessRefused("not_found")`` for an unknown one or another's."""
    feed = await feeds.get(feed_id)
    if feed is None or feed.deleted or feed.tenant_id != tenant_id:
        raise AccessRefused("not_found", "no such feed")
    return feed


async def origin_claim(tenants: TenantStore, tenant_id: str, origin: str) -> HostClaim:
    """The caller's right on ``origin``'s host (``host_claim``), if it covers ``origin`` (canonical) itself."""
    claim = await host_claim(tenants, tenant_id, origin_host(origin))
    if claim.origin != origin:
        raise AccessRefused(
            "origin_not_held",
            f"your right on {claim.host} covers {claim.origin}, not {origin}: a right covers the scheme, host "
            "and port that were proven",
            host=claim.host,
        )
    return claim


async def feed_in_force(feeds: FeedStore, tenants: TenantStore, tenant_id: str, feed_id: str) -> Feed:
    """``own_feed``, on an origin the tenant holds a right on now (``origin_claim``)."""
    feed = await own_feed(feeds, tenant_id, feed_id)
    await origin_claim(tenants, tenant_id, origin_of(feed.url))
    return feed


async def page_access(stores: Stores, tenant_id: str, url: str) -> HostClaim:
    """The caller's right that covers the page ``url`` (canonical), if the page is its own or nobody's."""
    origin = origin_of(url)
    claim = await origin_claim(stores.tenants, tenant_id, origin)
    if not (await page_owner(stores, url, origin)).yields_to(tenant_id):
        raise AccessRefused(
            "page_not_owned",
            f"{url} was published by another tenant's source, which holds a right on {origin}: only it may "
            "delete the page",
            host=claim.host,
        )
    return claim


def need_of(method: str, *, team: bool = False) -> Need:
    """The need of an operation: the team's are ``TEAM``; otherwise a GET is a read, anything else a write."""
    if team:
        return Need.TEAM
    return Need.READ if method.upper() in _READS else Need.WRITE


def may(role: Role | str, need: Need) -> bool:
    try:
        return need in _ALLOWED[Role(role)]
    except ValueError:
        return False  # a role this code does not know allows nothing


def permit(role: Role | str, need: Need) -> None:
    """``AccessRefused("role_forbids")`` unless ``role`` allows ``need``."""
    if not may(role, need):
        raise AccessRefused("role_forbids", f"your role ({role}) may not do this: it needs {_WHO[need]}")
