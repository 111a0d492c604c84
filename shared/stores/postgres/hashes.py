"""PostgreSQL hash store (docs/architecture.md section 4, "stores").

Engine specific for its read-modify-write methods: they take a
transaction-scoped advisory lock on the URL, which also covers URLs that have
no row yet. The batch forms lock all their URLs first, in the order of the
lock keys (so two batches never deadlock; a single call holds one lock), then
read with ``= ANY($n)``, decide in Python (``hashes.plan_*``) and write with
one ``INSERT … SELECT FROM unnest(…)``: four statements per batch. The batch
reads take one array parameter (``= ANY($1)``) instead of ``sql/hashes.py``'s
``IN (?, ?, …)``, whose text changes with the number of keys: each length
would be a statement of its own to prepare, and they would crowd asyncpg's
per-connection statement cache. The rest is ``sql/hashes.py``.

An unchanged document -- most items of most polls of a feed -- first costs one plain read
(``_MINE``, no transaction, no lock): when every item's stored hash is the one given, nothing is
written and that committed state is the answer, as if the call had run at the moment of the read
(a write racing it is serialized after it). Only when something differs does the locked path run,
reading again under its locks: BEGIN, lock, read, read, write, COMMIT. So a re-check of an
unchanged batch is 1 round trip instead of 5 (one URL: instead of 4), a changed one 7 instead of 6.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import asyncpg

from shared.stores.codec import now_us, to_us
from shared.stores.hashes import (
    ClaimOutcome,
    HashCheck,
    HashEntry,
    Owner,
    claim_outcome,
    next_version,
    plan_claims,
    plan_hashes,
)
from shared.stores.postgres.db import PgDb, unnest_columns
from shared.stores.sql.hashes import ENTRY_COLUMNS, OWNER_COLUMNS, SqlHashStore, entry_from_row, owner_from_row

__all__ = ["PgHashStore"]


def _lock_all(namespace: str) -> str:
    # sorted keys: every batch takes its locks in one global order, so two batches never deadlock
    return (
        "SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT"
        f" hashtextextended('{namespace}:' || u, 0) AS k FROM unnest($1::text[]) AS u ORDER BY k) AS keys"
    )


_LOCK_HASHES = _lock_all("hash")
_MINE = "SELECT url, content_hash, version FROM doc_hashes WHERE source_id = $1 AND url = ANY($2::text[])"
_LOCK_OWNERS = _lock_all("owner")
_WRITE_HASHES = (
    "INSERT INTO doc_hashes (source_id, url, content_hash, version, updated_at, seen_at)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])"
    " ON CONFLICT (source_id, url) DO UPDATE SET content_hash = excluded.content_hash,"
    " version = excluded.version, updated_at = excluded.updated_at, seen_at = excluded.seen_at"
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


class PgHashStore(SqlHashStore):
    """check_and_set and claim under a per-URL advisory lock; the rest is in ``hashes.py``."""

    def __init__(self, db: PgDb) -> None:
        super().__init__(db)
        self._db = db

    async def get_many(self, source_id: str, urls: Iterable[str]) -> dict[str, HashEntry]:
        wanted = list(dict.fromkeys(urls))
        if not wanted:
            return {}
        async with self._db.connection() as conn:
            rows = await conn.fetch(
                f"SELECT {ENTRY_COLUMNS} FROM doc_hashes WHERE source_id = $1 AND url = ANY($2::text[])",
                source_id,
                wanted,
            )
        return {row[1]: entry_from_row(row) for row in rows}

    async def owners(self, urls: Iterable[str]) -> dict[str, Owner]:
        wanted = list(dict.fromkeys(urls))
        if not wanted:
            return {}
        async with self._db.connection() as conn:
            rows = await conn.fetch(f"SELECT {OWNER_COLUMNS} FROM url_owners WHERE url = ANY($1::text[])", wanted)
        return {row[0]: owner_from_row(row) for row in rows}

    async def urls_for_guids(self, source_id: str, guids: Iterable[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(guids))
        if not wanted:
            return {}
        async with self._db.connection() as conn:
            rows = await conn.fetch(
                "SELECT guid, url FROM guids WHERE source_id = $1 AND guid = ANY($2::text[])", source_id, wanted
            )
        return {row[0]: str(row[1]) for row in rows}

    async def check_and_set(
        self,
        source_id: str,
        url: str,
        content_hash: str,
        *,
        now: datetime | None = None,
        seen_at: datetime | None = None,
    ) -> HashCheck:
        stamp, seen = now_us(now), to_us(seen_at)
        unchanged = await self._unchanged(source_id, [(url, content_hash)])
        if unchanged is not None:
            return unchanged[0]

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
                "INSERT INTO doc_hashes (source_id, url, content_hash, version, updated_at, seen_at)"
                " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (source_id, url) DO UPDATE SET"
                " content_hash = excluded.content_hash, version = excluded.version,"
                " updated_at = excluded.updated_at, seen_at = excluded.seen_at",
                source_id,
                url,
                content_hash,
                version,
                stamp,
                seen,
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
        self,
        source_id: str,
        items: Sequence[tuple[str, str]],
        *,
        now: datetime | None = None,
        seen_at: datetime | None = None,
    ) -> list[HashCheck]:
        if not items:
            return []
        unchanged = await self._unchanged(source_id, items)
        if unchanged is not None:
            return unchanged
        stamp, seen = now_us(now), to_us(seen_at)
        urls = list(dict.fromkeys(url for url, _ in items))

        async def run(conn: asyncpg.Connection) -> list[HashCheck]:
            await conn.execute(_LOCK_HASHES, urls)
            rows = await conn.fetch(_MINE, source_id, urls)
            mine = {r[0]: (r[1], r[2]) for r in rows}
            rows = await conn.fetch(
                "SELECT url, max(version) FROM doc_hashes WHERE url = ANY($1::text[]) GROUP BY url", urls
            )
            highest = {r[0]: r[1] for r in rows}
            plan = plan_hashes(source_id, items, mine, highest, now, stamp, seen)
            if plan.rows:
                # one row per URL (ON CONFLICT may not touch a row twice in one statement): its last state
                await conn.execute(_WRITE_HASHES, *unnest_columns(plan.rows.values(), 6))
            return plan.results

        return await self._db.tx(run)

    async def _unchanged(self, source_id: str, items: Sequence[tuple[str, str]]) -> list[HashCheck] | None:
        """The answers when every item's stored hash is the one given (nothing to write), else None."""
        async with self._db.connection() as conn:
            rows = await conn.fetch(_MINE, source_id, list(dict.fromkeys(url for url, _ in items)))
        stored = {r[0]: (r[1], r[2]) for r in rows}
        answers = []
        for url, content_hash in items:
            prev = stored.get(url)
            if prev is None or prev[0] != content_hash:
                return None
            answers.append(HashCheck(False, prev[1]))
        return answers

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
                await conn.execute(_WRITE_OWNERS, *unnest_columns(plan.rows.values(), 4))
            return plan.results

        return await self._db.tx(run)

    async def remember_guids(self, source_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        if not pairs:
            return
        last = dict(pairs)  # the last mapping of a guid wins, as one-by-one; one row per guid per statement
        async with self._db.connection() as conn:
            await conn.execute(_WRITE_GUIDS, [source_id] * len(last), list(last), list(last.values()))
