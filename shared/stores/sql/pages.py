"""The page store's row codec, shared by both engines (docs/architecture.md section 4, "stores").

No portable page store: the versioned guard is engine specific
(``sqlite/pages.py``, ``postgres/pages.py``), and so is search (``*/search.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared.previews import PREVIEW_PREFIX
from shared.stores.codec import from_us, to_us
from shared.stores.pages import Page, SearchHit
from shared.stores.sql.shop import OFFER_COLUMNS, offer_from_row, offer_params

__all__ = [
    "PAGE_COLUMNS",
    "PUBLIC_PAGE",
    "RECENT_COLUMNS",
    "page_from_row",
    "page_params",
    "recent_hit",
    "tombstone_params",
]

PAGE_COLUMNS = (
    "url, host, version, html, doc_json, title, text, content_hash, etag, seen_at, parsed_at, "
    "media_ready_at, written_at, deleted, source_kind, kind, published_at, lang, ready, " + OFFER_COLUMNS
)


#: what a listing of the latest pages reads of each (``PageStore.recent``); ``recent_hit`` decodes it
RECENT_COLUMNS = "url, host, title, substr(text, 1, 240), written_at, published_at"
#: a row that is a public page, not a check's or a debug upload's preview (``shared/previews.py``): what
#: the counts, the latest pages and a random pick read
PUBLIC_PAGE = f"substr(url, 1, {len(PREVIEW_PREFIX)}) <> '{PREVIEW_PREFIX}'"


def recent_hit(row: Sequence[Any]) -> SearchHit:
    """A row of ``RECENT_COLUMNS`` as the ``SearchHit`` a listing shows (no rank: it is no search)."""
    return SearchHit(
        url=row[0],
        host=row[1],
        title=row[2],
        snippet=row[3],
        rank=0.0,
        written_at=from_us(row[4]),
        published_at=from_us(row[5]),
    )


def page_params(page: Page) -> tuple[Any, ...]:
    """The values of ``PAGE_COLUMNS`` in order."""
    doc = page.doc_json.encode("utf-8") if isinstance(page.doc_json, str) else page.doc_json
    return (
        page.url,
        page.host,
        page.version,
        page.html,
        doc,
        page.title,
        page.text,
        page.content_hash,
        page.etag,
        to_us(page.seen_at),
        to_us(page.parsed_at),
        to_us(page.media_ready_at),
        to_us(page.written_at),
        bool(page.deleted),
        page.source_kind,
        page.kind,
        to_us(page.published_at),
        page.lang,
        page.ready,
        *offer_params(page.shop, page.offer),
    )


def page_from_row(row: Sequence[Any]) -> Page:
    shop, offer = offer_from_row(row[19:25])
    return Page(
        url=row[0],
        host=row[1],
        version=row[2],
        html=row[3],
        doc_json=bytes(row[4]),
        title=row[5],
        text=row[6],
        content_hash=row[7],
        etag=row[8],
        seen_at=from_us(row[9]),
        parsed_at=from_us(row[10]),
        media_ready_at=from_us(row[11]),
        written_at=from_us(row[12]),
        deleted=bool(row[13]),
        source_kind=row[14],
        kind=row[15],
        published_at=from_us(row[16]),
        lang=row[17],
        ready=bytes(row[18] or b""),
        shop=shop,
        offer=offer,
    )


def tombstone_params(url: str, host: str, version: int, written_at: int) -> tuple[Any, ...]:
    """``PAGE_COLUMNS`` values of a tombstone: the content is dropped, the version fences older upserts."""
    empty = ("", b"", "", "", "", "", None, None, None)
    return (url, host, version, *empty, written_at, True, "", "", None, "", b"", *offer_params("", None))
