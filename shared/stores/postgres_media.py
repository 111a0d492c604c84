"""PostgreSQL delay store (DESIGN.md section 3: media -> delay -> kvwriter).

Releasing is race-free because the documents a media URL concerns are
row-locked (``FOR UPDATE``, in URL order so two resolvers cannot deadlock)
before their pending rows are removed and their completeness is checked:
of two concurrent resolvers for one document, the second waits, then sees
the first one's removal, so exactly one releases it — and a document whose
last two media arrive at once is never left parked. ``due`` takes
``FOR UPDATE SKIP LOCKED`` so several delay instances split the due
documents instead of queueing on each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import asyncpg

from shared.stores.codec import check_pending, now_us, parked_from_row, to_us
from shared.stores.postgres import PgDb
from shared.stores.rows import ParkedDoc, ParkOutcome

__all__ = ["PgDelayStore"]

_DOC_COLUMNS = "url, host, version, doc_json, deadline, parked_at"


class PgDelayStore:
    def __init__(self, db: PgDb) -> None:
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
                f"INSERT INTO delay_docs ({_DOC_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
                " ON CONFLICT (url) DO UPDATE SET host = excluded.host, version = excluded.version,"
                " doc_json = excluded.doc_json, deadline = excluded.deadline, parked_at = excluded.parked_at",
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

    async def resolve(self, media_url: str) -> list[ParkedDoc]:
        async def run(conn: asyncpg.Connection) -> list[ParkedDoc]:
            docs = [r[0] for r in await conn.fetch("SELECT doc_url FROM delay_pending WHERE media_url = $1", media_url)]
            if not docs:
                return []
            # Order matters: lock the documents first (in URL order), then remove the pending rows,
            # then check completeness; see the module docstring.
            await conn.execute("SELECT 1 FROM delay_docs WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE", docs)
            await conn.execute("DELETE FROM delay_pending WHERE media_url = $1", media_url)
            rows = await conn.fetch(
                f"DELETE FROM delay_docs d WHERE url = ANY($1::text[])"
                " AND NOT EXISTS (SELECT 1 FROM delay_pending p WHERE p.doc_url = d.url)"
                f" RETURNING {_DOC_COLUMNS}",
                docs,
            )
            return [parked_from_row(row, frozenset()) for row in sorted(rows, key=lambda r: r[0])]

        return await self._db.tx(run)

    async def due(self, now: datetime, limit: int = 100) -> list[ParkedDoc]:
        async def run(conn: asyncpg.Connection) -> list[ParkedDoc]:
            rows = await conn.fetch(
                f"DELETE FROM delay_docs WHERE url IN (SELECT url FROM delay_docs WHERE deadline <= $1"
                f" ORDER BY deadline, url LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING {_DOC_COLUMNS}",
                to_us(now),
                limit,
            )
            if not rows:
                return []
            urls = [r[0] for r in rows]
            missing: dict[str, set[str]] = {u: set() for u in urls}
            for doc_url, media_url in await conn.fetch(
                "DELETE FROM delay_pending WHERE doc_url = ANY($1::text[]) RETURNING doc_url, media_url", urls
            ):
                missing[doc_url].add(media_url)
            released = [parked_from_row(r, frozenset(missing[r[0]])) for r in rows]
            return sorted(released, key=lambda d: (d.deadline, d.url))

        return await self._db.tx(run)

    async def get(self, url: str) -> ParkedDoc | None:
        row = await self._db.fetchone(
            f"SELECT {_DOC_COLUMNS}, ARRAY(SELECT media_url FROM delay_pending p WHERE p.doc_url = d.url)"
            " FROM delay_docs d WHERE url = ?",
            url,
        )
        return None if row is None else parked_from_row(row, frozenset(row[6]))

    async def discard(self, url: str) -> bool:
        async def run(conn: asyncpg.Connection) -> bool:
            await conn.execute("SELECT 1 FROM delay_docs WHERE url = $1 FOR UPDATE", url)
            await conn.execute("DELETE FROM delay_pending WHERE doc_url = $1", url)
            status: str = await conn.execute("DELETE FROM delay_docs WHERE url = $1", url)
            return status != "DELETE 0"

        return await self._db.tx(run)

    async def count(self) -> int:
        row = await self._db.fetchone("SELECT count(*) FROM delay_docs")
        assert row is not None
        return int(row[0])

    async def waiting_by_host(self) -> dict[str, int]:
        rows = await self._db.fetch("SELECT host, count(*) FROM delay_docs GROUP BY host ORDER BY host")
        return {r[0]: int(r[1]) for r in rows}
