"""PostgreSQL delay store (DESIGN.md section 3: media -> delay -> kvwriter).

Engine specific because its locking is (row locks, ``SKIP LOCKED``).

Releasing never deletes: ``resolve`` and ``due`` mark the documents they hand
out ``released_at = now`` (a lease) and only ``confirm``, called once their
publish is durable, removes them; a release not confirmed within the lease is
handed out again by ``due``. A crash in between costs a duplicate, never a document.

Releasing is race-free because the documents a media URL concerns are
row-locked (``FOR UPDATE``, in URL order so two resolvers cannot deadlock)
before their pending rows are removed and their completeness is checked:
of two concurrent resolvers for one document, the second waits, then sees
the first one's release, so exactly one releases it — and a document whose
last two media arrive at once is never left parked. ``due`` takes
``FOR UPDATE SKIP LOCKED`` so several delay instances split the due
documents instead of queueing on each other. ``confirm`` locks in URL order too.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

import asyncpg

from shared.stores.codec import now_us, to_us
from shared.stores.delay import ParkedDoc, ParkOutcome, check_pending
from shared.stores.postgres.db import PgDb
from shared.stores.sql.delay import DOC_COLUMNS, ROW_COLUMNS, SqlDelayStore, parked_from_row

__all__ = ["PgDelayStore"]


class PgDelayStore(SqlDelayStore):
    def __init__(self, db: PgDb) -> None:
        super().__init__(db)
        self._db = db

    async def park(
        self,
        url: str,
        version: int,
        doc_json: bytes,
        pending: Iterable[str],
        deadline: datetime,
        *,
        host: str = "",
        now: datetime | None = None,
    ) -> ParkOutcome:
        media = sorted(check_pending(pending))
        parked_at = now_us(now)
        deadline_us = to_us(deadline)

        async def run(conn: asyncpg.Connection) -> ParkOutcome:
            # serializes parks of one URL, including the first one (no row to lock yet)
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('delay:' || $1, 0))", url)
            stored = await conn.fetchval("SELECT version FROM delay_docs WHERE url = $1 FOR UPDATE", url)
            if stored is not None:
                if version < stored:
                    return ParkOutcome.stale
                if version == stored:
                    return ParkOutcome.unchanged
                await conn.execute("DELETE FROM delay_pending WHERE doc_url = $1", url)
            await conn.execute(
                f"INSERT INTO delay_docs ({DOC_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
                " ON CONFLICT (url) DO UPDATE SET host = excluded.host, version = excluded.version,"
                " doc_json = excluded.doc_json, deadline = excluded.deadline, parked_at = excluded.parked_at,"
                # a newer version waits again, even if the older one was released and is in flight
                " released_at = NULL",
                url,
                host,
                version,
                doc_json,
                deadline_us,
                parked_at,
            )
            await conn.execute(
                "INSERT INTO delay_pending (media_url, doc_url) SELECT m, $2 FROM unnest($1::text[]) AS m"
                " ON CONFLICT DO NOTHING",
                media,
                url,
            )
            return ParkOutcome.parked if stored is None else ParkOutcome.replaced

        return await self._db.tx(run)

    async def resolve(self, media_url: str, *, now: datetime | None = None) -> list[ParkedDoc]:
        released_at = now_us(now)

        async def run(conn: asyncpg.Connection) -> list[ParkedDoc]:
            docs = [r[0] for r in await conn.fetch("SELECT doc_url FROM delay_pending WHERE media_url = $1", media_url)]
            if not docs:
                return []
            # Order matters: lock the documents first (in URL order), then remove the pending rows,
            # then check completeness; see the module docstring.
            await conn.execute("SELECT 1 FROM delay_docs WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE", docs)
            await conn.execute("DELETE FROM delay_pending WHERE media_url = $1", media_url)
            rows = await conn.fetch(
                "UPDATE delay_docs d SET released_at = $2 WHERE url = ANY($1::text[]) AND released_at IS NULL"
                " AND NOT EXISTS (SELECT 1 FROM delay_pending p WHERE p.doc_url = d.url)"
                f" RETURNING {ROW_COLUMNS}",
                docs,
                released_at,
            )
            return [parked_from_row(row, frozenset()) for row in sorted(rows, key=lambda r: r[0])]

        return await self._db.tx(run)

    async def due(self, now: datetime, limit: int = 100, *, lease_s: float = 60.0) -> list[ParkedDoc]:
        if lease_s <= 0:
            raise ValueError(f"lease_s must be > 0, not {lease_s}")
        now_stamp = now_us(now)
        expired = now_us(now - timedelta(seconds=lease_s))

        async def run(conn: asyncpg.Connection) -> list[ParkedDoc]:
            rows = await conn.fetch(
                "UPDATE delay_docs SET released_at = $1 WHERE url IN (SELECT url FROM delay_docs"
                " WHERE (released_at IS NULL AND deadline <= $1) OR released_at <= $2"
                f" ORDER BY deadline, url LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING {ROW_COLUMNS}",
                now_stamp,
                expired,
                limit,
            )
            if not rows:
                return []
            urls = [r[0] for r in rows]
            missing: dict[str, set[str]] = {u: set() for u in urls}
            # the pending rows stay until ``confirm``, so a re-release reports the same missing media
            for doc_url, media_url in await conn.fetch(
                "SELECT doc_url, media_url FROM delay_pending WHERE doc_url = ANY($1::text[])", urls
            ):
                missing[doc_url].add(media_url)
            released = [parked_from_row(r, frozenset(missing[r[0]])) for r in rows]
            return sorted(released, key=lambda d: (d.deadline, d.url))

        return await self._db.tx(run)

    async def confirm(self, released: Iterable[tuple[str, int]]) -> int:
        pairs = sorted(set(released))
        if not pairs:
            return 0

        async def run(conn: asyncpg.Connection) -> int:
            urls = [u for u, _ in pairs]
            await conn.execute("SELECT 1 FROM delay_docs WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE", urls)
            gone = [
                r[0]
                for r in await conn.fetch(
                    "DELETE FROM delay_docs d USING unnest($1::text[], $2::bigint[]) AS c(url, version)"
                    " WHERE d.url = c.url AND d.version = c.version AND d.released_at IS NOT NULL RETURNING d.url",
                    urls,
                    [v for _, v in pairs],
                )
            ]
            if gone:
                await conn.execute("DELETE FROM delay_pending WHERE doc_url = ANY($1::text[])", gone)
            return len(gone)

        return await self._db.tx(run)

    async def get(self, url: str) -> ParkedDoc | None:
        row = await self._db.fetchone(
            f"SELECT {ROW_COLUMNS}, ARRAY(SELECT media_url FROM delay_pending p WHERE p.doc_url = d.url)"
            " FROM delay_docs d WHERE url = ?",
            url,
        )
        return None if row is None else parked_from_row(row, frozenset(row[7]))

    async def discard(self, url: str) -> bool:
        async def run(conn: asyncpg.Connection) -> bool:
            await conn.execute("SELECT 1 FROM delay_docs WHERE url = $1 FOR UPDATE", url)
            await conn.execute("DELETE FROM delay_pending WHERE doc_url = $1", url)
            status: str = await conn.execute("DELETE FROM delay_docs WHERE url = $1", url)
            return status != "DELETE 0"

        return await self._db.tx(run)
