"""Pages follow their source: what a source no longer has is removed (docs/architecture.md section 3).

A YML catalog is *full*: each fetch lists every offer the shop sells, so an
offer missing from it is discontinued, and its page -- with a stale price --
must go. ``catalog_removals`` compares the URLs this feed published (the hash
store's ``urls_of_source``) with those of the catalog just read, and removes
the missing ones (tombstones through ``ItemRecorder.remove_many``: the KV
store and the search index forget the page, the hash store remembers it was
removed). Only a catalog read to its end counts: one cut off by an XML error
removes nothing.

**The guard.** A catalog that loses more than ``MAX_LOSS`` of its offers in one
fetch is more likely broken (an export that failed half-way, a wrong file)
than a shop that closed half its range. Then nothing is removed: the feed gets
a ``catalog.held`` warning, a marker is kept (``<feed URL>#held``), and the
body is not recorded as seen, so the next fetch reads the same catalog again.
If that fetch still lacks them -- "the next fetch agrees", which the webmaster
can bring about at once with "fetch now" -- they are removed. A catalog that
comes back whole clears the marker.

``source_removals`` removes every page a source owns (a deleted feed); pages
another source owns now are left to it.
"""

from __future__ import annotations

from collections.abc import Collection, Container
from dataclasses import dataclass

from cubes.parser.documents import Removal
from cubes.parser.model import ItemError, Severity
from cubes.parser.yml import CATEGORY_PARAM
from shared.hashing import TOMBSTONE
from shared.stores import HashStore
from shared.urls import host_of

__all__ = ["HELD_SUFFIX", "MAX_LOSS", "MIN_GUARDED", "CatalogPlan", "catalog_removals", "source_removals"]

#: the share of a catalog's offers one fetch may lose before the loss is held for a second look
MAX_LOSS = 0.5
#: below this many offers the guard does not apply (a shop of three offers may well sell two)
MIN_GUARDED = 4
#: the hash store key of a held loss: the feed URL with a fragment no page URL has
HELD_SUFFIX = "#held"
#: what a category listing page's URL holds (``yml.category_url``)
_CATEGORY = f"?{CATEGORY_PARAM}="
#: URLs read back per store call
_BATCH = 1000
#: the source's URLs read per query when comparing them with a catalog just read
_PAGE = 10_000


@dataclass(slots=True)
class CatalogPlan:
    """What to do with the offers a catalog lost: remove them, or hold them (and why)."""

    removals: list[Removal]
    held: bool = False
    #: the live offers of the previous fetch, and how many of them this one lacks
    previous: int = 0
    lost: int = 0

    def warning(self) -> ItemError:
        return ItemError(
            f"the catalog lost {self.lost} of its {self.previous} offers in one fetch: more than "
            f"{MAX_LOSS:.0%}, so their pages are kept for now; they are removed when the next fetch "
            "lacks them too",
            severity=Severity.warning,
            code="catalog.held",
        )


async def _live(hashes: HashStore, source_id: str, urls: list[str]) -> list[str]:
    """Those of ``urls`` whose page is published (their stored hash is not a tombstone)."""
    out: list[str] = []
    for start in range(0, len(urls), _BATCH):
        chunk = urls[start : start + _BATCH]
        entries = await hashes.get_many(source_id, chunk)
        out.extend(u for u in chunk if (e := entries.get(u)) is not None and e.content_hash != TOMBSTONE)
    return out


def _on(url: str, host: str) -> bool:
    try:
        return host_of(url) == host
    except ValueError:
        return False


def _removal(url: str) -> Removal:
    return Removal(url, host_of(url), None, None)


async def catalog_removals(hashes: HashStore, source_id: str, feed_url: str, current: Container[str]) -> CatalogPlan:
    """The plan for the offers of ``source_id`` not in ``current`` (the URLs of the catalog just read)."""
    held_key = feed_url + HELD_SUFFIX
    # a page of the source's URLs at a time: a million-offer catalog's URLs as one list were ~150 MB
    # on top of the load (bench/parser.py case d peaked at 386 MB, over its 256 MB floor)
    lost: list[str] = []
    offers_known = offers_gone = offers_lost = 0
    after: str | None = None
    while True:
        page = await hashes.urls_of_source(source_id, _PAGE, after=after)
        known = [u for u in page if "#" not in u]
        gone = [u for u in known if u not in current]
        lost_here = await _live(hashes, source_id, gone)
        lost.extend(lost_here)
        # the guard counts offers: the category listing pages follow them (they go when their offers go)
        offers_known += sum(1 for u in known if _CATEGORY not in u)
        offers_gone += sum(1 for u in gone if _CATEGORY not in u)
        offers_lost += sum(1 for u in lost_here if _CATEGORY not in u)
        if len(page) < _PAGE:
            break
        after = page[-1]
    previous = offers_known - offers_gone + offers_lost  # what was live: still there, or lost now
    marker = await hashes.get(source_id, held_key)
    was_held = marker is not None and marker.content_hash != TOMBSTONE
    if previous >= MIN_GUARDED and offers_lost > MAX_LOSS * previous and not was_held:
        await hashes.check_and_set(source_id, held_key, f"held:{offers_lost}")
        return CatalogPlan([], held=True, previous=previous, lost=offers_lost)
    if was_held:
        await hashes.check_and_set(source_id, held_key, TOMBSTONE)  # the next fetch agreed, or it came back
    return CatalogPlan([_removal(u) for u in lost], previous=previous, lost=offers_lost)


async def source_removals(
    hashes: HashStore, source_id: str, keep: Collection[str] = (), *, host: str | None = None
) -> list[Removal]:
    """Every page ``source_id`` published and still owns (a deleted feed's), except ``keep``; on ``host`` only
    when given (an upload tenant's pages of one host)."""
    known = [
        u
        for u in await hashes.urls_of_source(source_id)
        if "#" not in u and u not in keep and (host is None or _on(u, host))
    ]
    live = await _live(hashes, source_id, known)
    out: list[Removal] = []
    for start in range(0, len(live), _BATCH):
        chunk = live[start : start + _BATCH]
        owners = await hashes.owners(chunk)
        out.extend(_removal(u) for u in chunk if (o := owners.get(u)) is not None and o.source_id == source_id)
    return out
