"""PostgreSQL page store, the KV store (docs/architecture.md section 4, "stores").

Engine specific because its guard is: the versioned guard lives in the
statement itself, ``INSERT … ON CONFLICT (url) DO UPDATE … WHERE
excluded.version > pages.version``. PostgreSQL re-checks that condition
against the latest committed row when writers collide, so concurrent writers
always leave the highest version, without a lock held across round trips. The
outcome is classified from the row the statement saw before writing. Each
statement also queues the rows it wrote for the search index (``search_queue``,
``search_queue.py`` drains it): one more row insert in the same statement, no
round trip, and nothing of the search index's own work in the page's write.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import asyncpg

from shared.stores.codec import now_us
from shared.stores.pages import (
    DeleteOutcome,
    Page,
    SearchHit,
    UpsertOutcome,
    delete_outcome,
    upsert_outcome,
)
from shared.stores.postgres.db import PgDb, unnest_columns
from shared.stores.sql.pages import (
    PAGE_COLUMNS,
    PUBLIC_PAGE,
    RECENT_COLUMNS,
    page_from_row,
    page_params,
    recent_hit,
    tombstone_params,
)
from shared.urls import host_of

__all__ = ["PgPageStore"]

_COLUMNS = [c.strip() for c in PAGE_COLUMNS.split(",")]
_VALUES = ", ".join(f"${i}" for i in range(1, len(_COLUMNS) + 1))
_UPDATE_ALL = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[1:])


#: the rows a statement wrote (its ``w``) queued for the search index, in the same statement
_QUEUE = "q AS (INSERT INTO search_queue (url) SELECT url FROM w)"


def _guarded_write(guard: str) -> str:
    # prev: the row as this statement's snapshot saw it, for classifying the outcome
    return (
        "WITH prev AS (SELECT version, deleted FROM pages WHERE url = $1),"
        f" w AS (INSERT INTO pages ({PAGE_COLUMNS}) VALUES ({_VALUES})"
        f" ON CONFLICT (url) DO UPDATE SET {_UPDATE_ALL} WHERE {guard} RETURNING url),"
        f" {_QUEUE}"
        " SELECT (SELECT version FROM prev), (SELECT deleted FROM prev), EXISTS (SELECT 1 FROM w)"
    )


_UPSERT = _guarded_write("excluded.version > pages.version")

#: the array type of each column, for ``unnest``; a column added to PAGE_COLUMNS must be added here
_ARRAY_TYPES = {
    "url": "text",
    "host": "text",
    "version": "bigint",
    "html": "text",
    "doc_json": "bytea",
    "title": "text",
    "text": "text",
    "content_hash": "text",
    "etag": "text",
    "seen_at": "bigint",
    "parsed_at": "bigint",
    "media_ready_at": "bigint",
    "written_at": "bigint",
    "deleted": "boolean",
    "source_kind": "text",
    "kind": "text",
    "published_at": "bigint",
    "lang": "text",
    "ready": "bytea",
    "shop": "text",
    "category": "text",
    "price": "double precision",
    "vendor": "text",
    "params": "text",
    "card": "text",
}
assert list(_ARRAY_TYPES) == _COLUMNS, "PAGE_COLUMNS and _ARRAY_TYPES differ"
_ARRAYS = ", ".join(f"${i}::{t}[]" for i, t in enumerate(_ARRAY_TYPES.values(), start=1))
#: ``upsert`` of a batch in one statement: each row classified from the row the snapshot saw
_UPSERT_MANY = (
    f"WITH t AS (SELECT * FROM unnest({_ARRAYS}) WITH ORDINALITY AS t({PAGE_COLUMNS}, ord)),"
    " prev AS (SELECT p.url, p.version, p.deleted FROM pages p JOIN t USING (url)),"
    f" w AS (INSERT INTO pages ({PAGE_COLUMNS}) SELECT {PAGE_COLUMNS} FROM t ORDER BY url"
    f" ON CONFLICT (url) DO UPDATE SET {_UPDATE_ALL} WHERE excluded.version > pages.version RETURNING url),"
    f" {_QUEUE}"
    " SELECT prev.version, prev.deleted, w.url IS NOT NULL FROM t LEFT JOIN prev USING (url)"
    " LEFT JOIN w USING (url) ORDER BY t.ord"
)
# a delete wins a tie with a live page of the same version (see codec.delete_outcome)
_TOMBSTONE = _guarded_write(
    "excluded.version > pages.version OR (excluded.version = pages.version AND NOT pages.deleted)"
)


def _upsert_outcome(prev_version: int | None, prev_deleted: bool | None, written: bool, version: int) -> UpsertOutcome:
    prev = None if prev_version is None else (prev_version, bool(prev_deleted))
    outcome = upsert_outcome(prev, version)
    if written:
        return outcome
    # not written although the snapshot said it would be: a concurrent writer stored a higher version
    return outcome if outcome in (UpsertOutcome.stale, UpsertOutcome.unchanged) else UpsertOutcome.stale


async def _write(conn: asyncpg.Connection, page: Page) -> UpsertOutcome:
    prev_version, prev_deleted, written = await conn.fetchrow(_UPSERT, *page_params(page))
    return _upsert_outcome(prev_version, prev_deleted, written, page.version)


async def _write_many(conn: asyncpg.Connection, pages: Sequence[Page]) -> list[UpsertOutcome]:
    """One statement for ``pages`` (distinct URLs: ON CONFLICT may not touch a row twice)."""
    rows = await conn.fetch(_UPSERT_MANY, *unnest_columns((page_params(p) for p in pages), len(_COLUMNS)))
    return [_upsert_outcome(r[0], r[1], r[2], p.version) for r, p in zip(rows, pages, strict=True)]


def _rounds(pages: Sequence[Page]) -> list[list[tuple[int, Page]]]:
    """``pages`` (with their positions) split so that no round holds a URL twice, in order."""
    rounds: list[list[tuple[int, Page]]] = []
    seen: dict[str, int] = {}
    for i, page in enumerate(pages):
        n = seen.get(page.url, 0)
        seen[page.url] = n + 1
        if n == len(rounds):
            rounds.append([])
        rounds[n].append((i, page))
    return rounds


class PgPageStore:
    def __init__(self, db: PgDb) -> None:
        self._db = db

    async def upsert(self, page: Page) -> UpsertOutcome:
        async with self._db.connection() as conn:
            return await _write(conn, page)

    async def upsert_many(self, pages: Sequence[Page]) -> list[UpsertOutcome]:
        """One statement for the batch (one round trip, its own transaction); a URL that comes
        again goes in a later statement of one transaction, as one-by-one calls would see it."""
        if not pages:
            return []
        rounds = _rounds(pages)
        if len(rounds) == 1:
            async with self._db.connection() as conn:
                return await _write_many(conn, pages)

        async def run(conn: asyncpg.Connection) -> list[UpsertOutcome]:
            out: list[UpsertOutcome] = [UpsertOutcome.stale] * len(pages)
            for round_ in rounds:
                for (i, _), outcome in zip(round_, await _write_many(conn, [p for _, p in round_]), strict=True):
                    out[i] = outcome
            return out

        return await self._db.tx(run)

    async def delete(self, url: str, version: int, *, now: datetime | None = None) -> DeleteOutcome:
        params = tombstone_params(url, host_of(url), version, now_us(now))
        async with self._db.connection() as conn:
            prev_version, prev_deleted, written = await conn.fetchrow(_TOMBSTONE, *params)
        prev = None if prev_version is None else (prev_version, bool(prev_deleted))
        outcome = delete_outcome(prev, version)
        if not written and outcome in (DeleteOutcome.deleted, DeleteOutcome.absent):
            return DeleteOutcome.stale  # a concurrent writer stored a higher version first
        return outcome

    async def get(self, url: str, *, include_deleted: bool = False) -> Page | None:
        sql = f"SELECT {PAGE_COLUMNS} FROM pages WHERE url = $1"
        if not include_deleted:
            sql += " AND NOT deleted"
        async with self._db.connection() as conn:
            row = await conn.fetchrow(sql, url)
        return None if row is None else page_from_row(row)

    async def recent(self, limit: int = 20) -> list[SearchHit]:
        rows = await self._db.fetch(
            f"SELECT {RECENT_COLUMNS} FROM pages WHERE NOT deleted AND {PUBLIC_PAGE}"
            " ORDER BY written_at DESC NULLS LAST LIMIT ?",
            limit,
        )
        return [recent_hit(r) for r in rows]

    async def count(self) -> int:
        row = await self._db.fetchone(f"SELECT count(*) FROM pages WHERE NOT deleted AND {PUBLIC_PAGE}")
        assert row is not None
        return int(row[0])

    async def random_urls(self, n: int) -> list[str]:
        rows = await self._db.fetch(
            f"SELECT url FROM pages WHERE NOT deleted AND {PUBLIC_PAGE} ORDER BY random() LIMIT ?", n
        )
        return [r[0] for r in rows]
