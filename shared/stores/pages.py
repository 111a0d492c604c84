"""The page store's contract: the KV store of Turbo pages (docs/architecture.md section 4, "stores").

The ``PageStore`` Protocol, its rows and outcomes, and the versioning rules
both engines apply (``upsert_outcome``, ``delete_outcome``): the highest
version wins, a delete wins a tie. Engines: ``sqlite/pages.py`` and
``postgres/pages.py`` (the versioned guard is engine specific); the row codec
is in ``sql/pages.py``. Search over the pages is its own role (``search.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from shared.stores.shop import Offer

__all__ = [
    "DeleteOutcome",
    "Page",
    "PageStore",
    "SearchHit",
    "UpsertOutcome",
    "delete_outcome",
    "upsert_outcome",
]


class UpsertOutcome(StrEnum):
    inserted = "inserted"  # no live row before (absent, or a tombstone of a lower version)
    updated = "updated"  # a live row of a lower version was replaced
    stale = "stale"  # the stored row (or tombstone) has a higher version: nothing written
    unchanged = "unchanged"  # the same version is already stored (a redelivery): nothing written


class DeleteOutcome(StrEnum):
    deleted = "deleted"  # a live page of a lower version became a tombstone
    absent = "absent"  # there was no page; the tombstone is recorded anyway (it fences late upserts)
    stale = "stale"  # the stored page or tombstone has a higher version: nothing written
    unchanged = "unchanged"  # a tombstone of this version exists already


@dataclass(frozen=True, slots=True)
class Page:
    """One Turbo page in the KV store, keyed by its canonical URL."""

    url: str
    host: str
    version: int
    html: str = ""  # the rendered Turbo page
    doc_json: bytes = b""  # the JSON form (served by /api/v1/pages)
    title: str = ""
    text: str = ""  # plain text, indexed for search with the title
    content_hash: str = ""
    etag: str = ""
    seen_at: datetime | None = None
    parsed_at: datetime | None = None
    media_ready_at: datetime | None = None
    written_at: datetime | None = None
    deleted: bool = False  # a tombstone: ``get`` hides it unless asked
    source_kind: str = ""
    #: for search: news, article or product (``shared.search.kinds``); "" for a page of no type
    kind: str = ""
    #: when the source says it was published (search's date filter and freshness)
    published_at: datetime | None = None
    #: two-letter language (``shared.search.analysis.page_lang``): PostgreSQL's text-search configuration
    lang: str = ""
    #: the ready document the page was rendered from (zlib of its JSON; b"" for none): the kvwriter
    #: renders the page again from it when an image it shows changed at its source
    ready: bytes = b""
    #: whose shop the page is (a catalog's offer or category listing; ``shared/stores/shop.py``), else ""
    shop: str = ""
    #: what its category's page lists of a catalog's offer (None: no offer)
    offer: Offer | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    url: str
    host: str
    title: str
    snippet: str  # an excerpt of the text around the match (plain text, not HTML)
    rank: float  # larger is better; comparable only within one result list
    written_at: datetime | None = None
    #: when the source says it was published: what a listing shows (else ``written_at``)
    published_at: datetime | None = None


class PageStore(Protocol):
    """The KV store of Turbo pages. Key: canonical URL. The highest version wins."""

    async def upsert(self, page: Page) -> UpsertOutcome:
        """Write ``page`` unless a row (page or tombstone) of an equal or higher version exists."""
        ...

    async def upsert_many(self, pages: Sequence[Page]) -> list[UpsertOutcome]:
        """``upsert`` for a batch in one transaction (the kvwriter's fast path); outcomes in order."""
        ...

    async def delete(self, url: str, version: int, *, now: datetime | None = None) -> DeleteOutcome:
        """Tombstone ``url`` at ``version``: a later upsert of a version <= ``version`` is stale."""
        ...

    async def get(self, url: str, *, include_deleted: bool = False) -> Page | None:
        """The page at ``url``; ``None`` when absent or tombstoned (unless ``include_deleted``)."""
        ...

    async def recent(self, limit: int = 20) -> list[SearchHit]:
        """The most recently written live pages (the frontend's home page)."""
        ...

    async def count(self) -> int:
        """Live (not tombstoned) pages."""
        ...

    async def random_urls(self, n: int) -> list[str]:
        """Up to ``n`` distinct live URLs picked at random (benchmarks)."""
        ...


# --------------------------------------------------------------------------- rules both engines apply


def upsert_outcome(prev: tuple[int, bool] | None, version: int) -> UpsertOutcome:
    """What a page upsert of ``version`` does, given the stored (version, deleted) or None.

    Only a strictly higher version is written; an equal version is a redelivery
    (``unchanged`` for a live page, ``stale`` against a tombstone, since a delete
    wins a tie).
    """
    if prev is None:
        return UpsertOutcome.inserted
    stored, deleted = prev
    if version > stored:
        return UpsertOutcome.inserted if deleted else UpsertOutcome.updated
    if version == stored and not deleted:
        return UpsertOutcome.unchanged
    return UpsertOutcome.stale


def delete_outcome(prev: tuple[int, bool] | None, version: int) -> DeleteOutcome:
    """What a tombstone of ``version`` does; it is written for ``deleted`` and ``absent``.

    A delete wins a tie with a live page of the same version; a higher
    tombstone version over a lower tombstone is recorded (it fences more).
    """
    if prev is None:
        return DeleteOutcome.absent
    stored, deleted = prev
    if deleted:
        if version > stored:
            return DeleteOutcome.absent
        return DeleteOutcome.unchanged if version == stored else DeleteOutcome.stale
    return DeleteOutcome.deleted if version >= stored else DeleteOutcome.stale
