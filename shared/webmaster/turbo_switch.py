"""Turbo off, and on again: a host's pages taken down and brought back (docs/architecture.md section 10).

A webmaster switches its Turbo pages of a host off or on (``PUT /api/v1/hosts/{host}/turbo``,
``turbocubes hosts turbo``, the console's host page); every door calls ``switch``, one rule:

* **off**: the switch is recorded (``TenantStore.set_turbo``) and each of the tenant's feeds of the
  host is fetched now, through the host's lane; at that fetch the parser removes every page of the
  tenant there from Turbo and search (``cubes/parser/lifecycle.py``, ``host_off``: the feed's, the
  tenant's uploads', and the autoparser's once no holder of the host keeps its pages on). When this
  switch turns the host off for every holder, the operator's feeds of the host are fetched now too,
  since their pages follow every holder's switch (``TenantStore.turbo_enabled``).
* **on**: what the sources still publish comes back.

  - the feeds are fetched now: the hash store remembers the removals, so every item a feed still
    has is published again (nothing reads as unchanged);
  - the autoparser's pages of the host, when this switch turns the host on again and a live feed
    of the host asks for its autoparser: each page it had and that was removed is fetched again
    through the host's lane (at most ``RESTORE_MAX``), and published again if it is still an
    article. It used to stay removed: the scheduler's discovery takes a page the autoparser has a
    record of (its removal too) for one it knows, and orders it never again;
  - the tenant's uploads cannot come back by themselves: a removed page keeps no document (its
    tombstone fences older versions, nothing else), so ``Switched.uploads`` counts them for the
    webmaster to upload again.

Its counts are the host page's (``shared.webmaster.overview.host_overview``, ``shared.pages.state``): "your
pages on Turbo" before a switch off, "removed" before a switch on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shared.hashing import TOMBSTONE
from shared.pages.state import counts
from shared.stores import Feed, HashStore, PageState, Stores
from shared.webmaster.feeds import AUTOPARSER_PREFIX, FeedRegistry
from shared.webmaster.overview import host_overview

__all__ = ["RESTORE_MAX", "Switched", "switch"]

#: autoparser pages fetched again at one switch: a day of discovery rounds' worth, in the host's lane
RESTORE_MAX = 10_000
#: URLs read from the hash store at a time
_PAGE = 1_000


def _pages(n: int) -> str:
    return f"{n} page{'' if n == 1 else 's'}"


@dataclass(frozen=True, slots=True)
class Switched:
    """What a switch did, for the answer (the API's JSON, the CLI's line, the console's notice)."""

    host: str
    enabled: bool
    #: the feeds of the host fetched now (their fetches apply the switch): the tenant's, then the others'
    feeds: list[str] = field(default_factory=list)
    #: how many of ``feeds`` are the operator's: this switch changed the host for every source of no
    #: tenant (the tenant held the host's only right in force, or was the last holder to switch)
    others: int = 0
    #: off: the tenant's pages of the host on Turbo at the switch, removed at those fetches
    live: int = 0
    #: on: the tenant's pages of the host removed at the switch (the feeds publish again those they still have)
    removed: int = 0
    #: on: the autoparser's removed pages fetched again now
    autoparser_pages: int = 0
    #: on: the tenant's removed uploaded pages, which only a new upload brings back
    uploads: int = 0
    #: the switch was already in this position (the fetches are ordered again all the same)
    unchanged: bool = False

    def json(self) -> dict[str, object]:
        return {
            "host": self.host,
            "turbo": self.enabled,
            "fetching": self.feeds,
            "other_feeds_fetching": self.others,
            "pages_on_turbo": self.live,
            "pages_removed": self.removed,
            "autoparser_pages_fetched_again": self.autoparser_pages,
            "uploaded_pages_to_upload_again": self.uploads,
            "said": self.said(),
        }

    def said(self) -> str:
        """The switch in a sentence: what happens now, what the webmaster sees and can do."""
        yours = len(self.feeds) - self.others
        fetched = f"{yours} feed{'' if yours == 1 else 's'} of yours fetched now"
        others = f"{self.others} other feed{'' if self.others == 1 else 's'}"
        if not self.enabled:
            already = " (they were off already)" if self.unchanged else ""
            out = (
                f"Turbo pages of {self.host} switched off{already}: {_pages(self.live)} of yours on Turbo are "
                f"taken off Turbo and search as your feeds are read ({fetched}); nothing of yours is published "
                "there until you switch them on again."
            )
            if self.others:
                out += (
                    f" No other holder of the host keeps its pages on, so the host's other pages go too "
                    f"(its {others}, fetched now, and the autoparser's)."
                )
            return out
        if self.unchanged:
            return f"Turbo pages of {self.host} are on ({fetched})."
        out = (
            f"Turbo pages of {self.host} switched on: {fetched}, each publishing again what it still has "
            f"({_pages(self.removed)} of yours were off Turbo)"
        )
        if self.others:
            out += f"; the host's {others} are fetched now too"
        if self.autoparser_pages:
            out += f"; {_pages(self.autoparser_pages)} the autoparser had published are fetched again"
        out += "."
        if self.uploads:
            again = "it" if self.uploads == 1 else "them"
            out += f" {_pages(self.uploads)} you uploaded cannot come back without a new upload: upload {again} again."
        return out


async def switch(stores: Stores, registry: FeedRegistry, tenant_id: str, host: str, *, enabled: bool) -> Switched:
    """Switch ``tenant_id``'s Turbo pages of ``host`` (a verified host of theirs) and set about applying it."""
    was_on = await stores.tenants.turbo_enabled(host, tenant_id)
    host_was_on = await stores.tenants.turbo_enabled(host)
    mine = [f for f in await stores.feeds.list(tenant_id) if f.host == host and not f.deleted]
    before = (await host_overview(stores, host, mine, tenant_id=tenant_id)).counts
    await stores.tenants.set_turbo(tenant_id, host, enabled)
    host_on = await stores.tenants.turbo_enabled(host)
    others: list[Feed] = []
    if host_on != host_was_on:  # the operator's feeds of the host follow every holder's switch
        others = [f for f in await stores.feeds.list() if f.host == host and not f.deleted and not f.tenant_id]
    for feed in (*mine, *others):
        await registry.fetch_now(feed.feed_id)
    ids = [f.feed_id for f in (*mine, *others)]
    if not enabled:
        return Switched(host, enabled, ids, len(others), live=before.on_turbo, unchanged=not was_on)
    if was_on:
        return Switched(host, enabled, ids, len(others), unchanged=True)
    autoparser: list[str] = []
    if not host_was_on and await _autoparser_on(stores, host):
        autoparser = await _removed(stores.hashes, AUTOPARSER_PREFIX + host, RESTORE_MAX)
        await registry.fetch_pages(host, autoparser)
    uploads = (await counts(stores, [(f"tenant:{tenant_id}", host, None)]))[PageState.removed]
    return Switched(
        host,
        enabled,
        ids,
        len(others),
        removed=before[PageState.removed],
        autoparser_pages=len(autoparser),
        uploads=uploads,
    )


async def _autoparser_on(stores: Stores, host: str) -> bool:
    """Whether some live feed of ``host`` asks for its autoparser (else its pages stay the autoparser's past)."""
    return any(f.host == host and not f.deleted for f in await stores.feeds.list(autoparser_only=True))


async def _removed(hashes: HashStore, source_id: str, limit: int) -> list[str]:
    """Up to ``limit`` removed pages of ``source_id`` (their hash is the tombstone), in URL order."""
    out: list[str] = []
    after: str | None = None
    while len(out) < limit:
        urls = await hashes.urls_of_source(source_id, _PAGE, after=after)
        if not urls:
            break
        after = urls[-1]
        entries = await hashes.get_many(source_id, [u for u in urls if "#" not in u])
        out += [u for u, e in entries.items() if e.content_hash == TOMBSTONE]
    return sorted(out)[:limit]
