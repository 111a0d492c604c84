"""PostgreSQL page store (the KV store) and hash store (DESIGN.md section 4, "stores").

The versioned guard lives in the statement itself: ``INSERT … ON CONFLICT
(url) DO UPDATE … WHERE excluded.version > pages.version``. PostgreSQL
re-checks that condition against the latest committed row when writers
collide, so concurrent writers always leave the highest version, without
a lock held across round trips. The outcome is classified from the row the
statement saw before writing.

The hash store's read-modify-write methods take a transaction-scoped
advisory lock on the URL, which also covers URLs that have no row yet. The
batch forms lock all their URLs first, in the order of the lock keys (so two
batches never deadlock; a single call holds one lock), then read with
``= ANY($n)``, decide in Python (``hashes.plan_*``) and write with one
``INSERT … SELECT FROM unnest(…)``: four statements per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import asyncpg

from shared.stores.codec import (
    PAGE_COLUMNS,
    claim_outcome,
    delete_outcome,
    from_us,
    next_version,
    now_us,
    page_from_row,
    page_params,
    search_terms,
    tombstone_params,
    upsert_outcome,
)
from shared.stores.hashes import SqlHashStore, plan_claims, plan_hashes
from shared.stores.postgres import PgDb
from shared.stores.rows import ClaimOutcome, DeleteOutcome, HashCheck, Page, SearchHit, UpsertOutcome
from shared.urls import host_of

__all__ = ["PgHashStore", "PgPageStore"]

_COLUMNS = [c.strip() for c in PAGE_COLUMNS.split(",")]
_VALUES = ", ".join(f"${i}" for i in range(1, len(_COLUMNS) + 1))
_UPDATE_ALL = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[1:])


def _lock_all(namespace: str) -> str:
    # sorted keys: every batch takes its locks in one global order, so two batches never deadlock
    return (
        "SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT"
        f" hashtextextended('{namespace}:' || u, 0) AS k FROM unnest($1::text[]) AS u ORDER BY k) AS keys"
    )


_LOCK_HASHES = _lock_all("hash")
_LOCK_OWNERS = _lock_all("owner")
_WRITE_HASHES = (
    "INSERT INTO doc_hashes (source_id, url, content_hash, version, updated_at)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])"
    " ON CONFLICT (source_id, url) DO UPDATE SET content_hash = excluded.content_hash,"
    " version = excluded.version, updated_at = excluded.updated_at"
)
_WRITE_OWNERS = (
    "INSERT INTO url_owners (url, source_id, priority, claimed_at)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])"
    " ON CONFLICT (url) DO UPDATE SET source_id = excluded.source_id,"
    " priority = excluded.priority, claimed_at = excluded.claimed_at"
)
_WRITE_GUIDS = (
    "INSERT INTO guids (source_id, guid, url) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])"
    " ON CONFLICT (source_id, guid) DO UPDATE SET url = excluded.url"
)


def _guarded_write(guard: str) -> str:
    # prev: the row as this statement's snapshot saw it, for classifying the outcome
    return (
        "WITH prev AS (SELECT version, deleted FROM pages WHERE url = $1),"
        f" w AS (INSERT INTO pages ({PAGE_COLUMNS}) VALUES ({_VALUES})"
        f" ON CONFLICT (url) DO UPDATE SET {_UPDATE_ALL} WHERE {guard} RETURNING 1)"
        " SELECT (SELECT version FROM prev), (SELECT deleted FROM prev), EXISTS (SELECT 1 FROM w)"
    )


_UPSERT = _guarded_write("excluded.version > pages.version")
# a delete wins a tie with a live page of the same version (see codec.delete_outcome)
_TOMBSTONE = _guarded_write(
    "excluded.version > pages.version OR (excluded.version = pages.version AND NOT pages.deleted)"
)
#: most search results are read from the first page; ts_headline runs only on the page shown
_SEARCH = (
    "SELECT p.url, p.host, p.title,"
    ' ts_headline(\'simple\', p.text, q, \'StartSel="", StopSel="", MaxWords=35, MinWords=15,'
    ' MaxFragments=1, FragmentDelimiter=" … "\'), hit.rank, p.written_at'
    " FROM (SELECT url, ts_rank_cd(tsv, q) AS rank FROM pages, plainto_tsquery('simple', $1) q"
    "       WHERE tsv @@ q AND NOT deleted ORDER BY rank DESC, url LIMIT $2 OFFSET $3) hit"
    " JOIN pages p ON p.url = hit.url, plainto_tsquery('simple', $1) q"
    " ORDER BY hit.rank DESC, p.url"
)


async def _write(conn: asyncpg.Connection | asyncpg.Pool, page: Page) -> UpsertOutcome:
    prev_version, prev_deleted, written = await conn.fetchrow(_UPSERT, *page_params(page))
    prev = None if prev_version is None else (prev_version, bool(prev_deleted))
    outcome = upsert_outcome(prev, page.version)
    if written:
        return outcome
    # not written although the snapshot said it would be: a concurrent writer stored a higher version
    return outcome if outcome in (UpsertOutcome.stale, UpsertOutcome.unchanged) else UpsertOutcome.stale


class PgPageStore:
    def __init__(self, db: PgDb) -> None:
        self._db = db

    async def upsert(self, page: Page) -> UpsertOutcome:
        async with self._db.guard():
            return await _write(self._db.pool, page)

    async def upsert_many(self, pages: Sequence[Page]) -> list[UpsertOutcome]:
        if not pages:
            return []

        async def run(conn: asyncpg.Connection) -> list[UpsertOutcome]:
            return [await _write(conn, page) for page in pages]

        return await self._db.tx(run)

    async def delete(self, url: str, version: int, *, now: datetime | None = None) -> DeleteOutcome:
        params = tombstone_params(url, host_of(url), version, now_us(now))
        async with self._db.guard():
            prev_version, prev_deleted, written = await self._db.pool.fetchrow(_TOMBSTONE, *params)
        prev = None if prev_version is None else (prev_version, bool(prev_deleted))
        outcome = delete_outcome(prev, version)
        if not written and outcome in (DeleteOutcome.deleted, DeleteOutcome.absent):
            return DeleteOutcome.stale  # a concurrent writer stored a higher version first
        return outcome

    async def get(self, url: str, *, include_deleted: bool = False) -> Page | None:
        sql = f"SELECT {PAGE_COLUMNS} FROM pages WHERE url = $1"
        if not include_deleted:
            sql += " AND NOT deleted"
        async with self._db.guard():
            row = await self._db.pool.fetchrow(sql, url)
        return None if row is None else page_from_row(row)

    async def search(self, query: str, limit: int = 20, offset: int = 0) -> list[SearchHit]:
        terms = search_terms(query)
        if not terms or limit <= 0:
            return []
        async with self._db.guard():
            rows = await self._db.pool.fetch(_SEARCH, " ".join(terms), limit, max(offset, 0))
        return [
            SearchHit(
                url=r[0],
                host=r[1],
                title=r[2],
                snippet=r[3] or "",
                rank=float(r[4]),
                written_at=from_us(r[5]),
            )
            for r in rows
        ]

    async def recent(self, limit: int = 20) -> list[SearchHit]:
        rows = await self._db.fetch(
            "SELECT url, host, title, substr(text, 1, 240), written_at FROM pages WHERE NOT deleted"
            " ORDER BY written_at DESC NULLS LAST LIMIT ?",
            limit,
        )
        return [
            SearchHit(url=r[0], host=r[1], title=r[2], snippet=r[3], rank=0.0, written_at=from_us(r[4])) for r in rows
        ]

    async def count(self) -> int:
        row = await self._db.fetchone("SELECT count(*) FROM pages WHERE NOT deleted")
        assert row is not None
        return int(row[0])

    async def random_urls(self, n: int) -> list[str]:
        rows = await self._db.fetch("SELECT url FROM pages WHERE NOT deleted ORDER BY random() LIMIT ?", n)
        return [r[0] for r in rows]


class PgHashStore(SqlHashStore):
    """check_and_set and claim under a per-URL advisory lock; the rest is in ``hashes.py``."""

    def __init__(self, db: PgDb) -> None:
        super().__init__(db)
        self._db = db

    async def check_and_set(
        self, source_id: str, url: str, content_hash: str, *, now: datetime | None = None
    ) -> HashCheck:
        stamp = now_us(now)

        async def run(conn: asyncpg.Connection) -> HashCheck:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('hash:' || $1, 0))", url)
            row = await conn.fetchrow(
                "SELECT content_hash, version FROM doc_hashes WHERE source_id = $1 AND url = $2",
                source_id,
                url,
            )
            if row is not None and row[0] == content_hash:
                return HashCheck(False, row[1])
            highest = await conn.fetchval("SELECT max(version) FROM doc_hashes WHERE url = $1", url)
            version = next_version(highest, now)
            await conn.execute(
                "INSERT INTO doc_hashes (source_id, url, content_hash, version, updated_at)"
                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (source_id, url) DO UPDATE SET"
                " content_hash = excluded.content_hash, version = excluded.version,"
                " updated_at = excluded.updated_at",
                source_id,
                url,
                content_hash,
                version,
                stamp,
            )
            return HashCheck(True, version)

        return await self._db.tx(run)

    async def claim(self, url: str, source_id: str, priority: int, *, now: datetime | None = None) -> ClaimOutcome:
        stamp = now_us(now)

        async def run(conn: asyncpg.Connection) -> ClaimOutcome:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('owner:' || $1, 0))", url)
            row = await conn.fetchrow("SELECT source_id, priority FROM url_owners WHERE url = $1", url)
            outcome = claim_outcome(None if row is None else (row[0], row[1]), source_id, priority)
            if outcome is not ClaimOutcome.outranked:
                await conn.execute(
                    "INSERT INTO url_owners (url, source_id, priority, claimed_at) VALUES ($1, $2, $3, $4)"
                    " ON CONFLICT (url) DO UPDATE SET source_id = excluded.source_id,"
                    " priority = excluded.priority, claimed_at = excluded.claimed_at",
                    url,
                    source_id,
                    priority,
                    stamp,
                )
            return outcome

        return await self._db.tx(run)

    async def check_and_set_many(
        self, source_id: str, items: Sequence[tuple[str, str]], *, now: datetime | None = None
    ) -> list[HashCheck]:
        if not items:
            return []
        stamp = now_us(now)
        urls = list(dict.fromkeys(url for url, _ in items))

        async def run(conn: asyncpg.Connection) -> list[HashCheck]:
            await conn.execute(_LOCK_HASHES, urls)
            rows = await conn.fetch(
                "SELECT url, content_hash, version FROM doc_hashes WHERE source_id = $1 AND url = ANY($2::text[])",
                source_id,
                urls,
            )
            mine = {r[0]: (r[1], r[2]) for r in rows}
            rows = await conn.fetch(
                "SELECT url, max(version) FROM doc_hashes WHERE url = ANY($1::text[]) GROUP BY url", urls
            )
            highest = {r[0]: r[1] for r in rows}
            plan = plan_hashes(source_id, items, mine, highest, now, stamp)
            if plan.rows:
                # one row per URL (ON CONFLICT may not touch a row twice in one statement): its last state
                await conn.execute(_WRITE_HASHES, *_columns(plan.rows.values(), 5))
            return plan.results

        return await self._db.tx(run)

    async def claim_many(
        self, urls: Sequence[str], source_id: str, priority: int, *, now: datetime | None = None
    ) -> list[ClaimOutcome]:
        if not urls:
            return []
        stamp = now_us(now)
        distinct = list(dict.fromkeys(urls))

        async def run(conn: asyncpg.Connection) -> list[ClaimOutcome]:
            await conn.execute(_LOCK_OWNERS, distinct)
            rows = await conn.fetch(
                "SELECT url, source_id, priority FROM url_owners WHERE url = ANY($1::text[])", distinct
            )
            plan = plan_claims(urls, source_id, priority, {r[0]: (r[1], r[2]) for r in rows}, stamp)
            if plan.rows:
                await conn.execute(_WRITE_OWNERS, *_columns(plan.rows.values(), 4))
            return plan.results

        return await self._db.tx(run)

    async def remember_guids(self, source_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        if not pairs:
            return
        last = dict(pairs)  # the last mapping of a guid wins, as one-by-one; one row per guid per statement
        async with self._db.guard():
            await self._db.pool.execute(_WRITE_GUIDS, [source_id] * len(last), list(last), list(last.values()))


def _columns(rows: Any, width: int) -> list[list[Any]]:
    """Rows as ``width`` column lists, the parameters of an ``unnest`` insert."""
    cols: list[list[Any]] = [[] for _ in range(width)]
    for row in rows:
        for col, value in zip(cols, row, strict=True):
            col.append(value)
    return cols
