"""SQLite delay store (DESIGN.md section 3: media -> delay -> kvwriter).

A parked document is a row in ``delay_docs`` plus one ``delay_pending`` row
per missing media URL. Every method that releases documents runs under
``BEGIN IMMEDIATE``: the pending rows are removed and the now-complete
documents deleted *and returned* in one transaction, so of two concurrent
callers (tasks or processes) exactly one gets each document.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime

from shared.stores.codec import check_pending, now_us, parked_from_row, to_us
from shared.stores.rows import ParkedDoc, ParkOutcome
from shared.stores.sqlite import SqliteDb

__all__ = ["SqliteDelayStore"]

_DOC_COLUMNS = "url, host, version, doc_json, deadline, parked_at"


def _pending_of(conn: sqlite3.Connection, url: str) -> frozenset[str]:
    rows = conn.execute("SELECT media_url FROM delay_pending WHERE doc_url = ?", (url,)).fetchall()
    return frozenset(r[0] for r in rows)


class SqliteDelayStore:
    def __init__(self, db: SqliteDb) -> None:
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
        media = check_pending(pending)
        parked_at = now_us(now)
        deadline_us = to_us(deadline)

        def run(conn: sqlite3.Connection) -> ParkOutcome:
            row = conn.execute("SELECT version FROM delay_docs WHERE url = ?", (url,)).fetchone()
            if row is not None:
                if version < row[0]:
                    return ParkOutcome.stale
                if version == row[0]:
                    return ParkOutcome.unchanged
                conn.execute("DELETE FROM delay_pending WHERE doc_url = ?", (url,))
            conn.execute(
                f"INSERT INTO delay_docs ({_DOC_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (url) DO UPDATE SET host = excluded.host, version = excluded.version,"
                " doc_json = excluded.doc_json, deadline = excluded.deadline, parked_at = excluded.parked_at",
                (url, host, version, doc_json, deadline_us, parked_at),
            )
            conn.executemany(
                "INSERT INTO delay_pending (media_url, doc_url) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(m, url) for m in sorted(media)],
            )
            return ParkOutcome.parked if row is None else ParkOutcome.replaced

        return await self._db.write(run)

    async def resolve(self, media_url: str) -> list[ParkedDoc]:
        def run(conn: sqlite3.Connection) -> list[ParkedDoc]:
            docs = [
                r[0]
                for r in conn.execute(
                    "DELETE FROM delay_pending WHERE media_url = ? RETURNING doc_url", (media_url,)
                ).fetchall()
            ]
            released: list[ParkedDoc] = []
            for doc_url in sorted(docs):
                row = conn.execute(
                    f"DELETE FROM delay_docs WHERE url = ? AND NOT EXISTS"
                    f" (SELECT 1 FROM delay_pending WHERE doc_url = ?) RETURNING {_DOC_COLUMNS}",
                    (doc_url, doc_url),
                ).fetchone()
                if row is not None:
                    released.append(parked_from_row(row, frozenset()))
            return released

        return await self._db.write(run)

    async def due(self, now: datetime, limit: int = 100) -> list[ParkedDoc]:
        now_stamp = to_us(now)

        def run(conn: sqlite3.Connection) -> list[ParkedDoc]:
            rows = conn.execute(
                f"SELECT {_DOC_COLUMNS} FROM delay_docs WHERE deadline <= ? ORDER BY deadline, url LIMIT ?",
                (now_stamp, limit),
            ).fetchall()
            released = []
            for row in rows:
                # what is still missing travels with the released doc (the kvwriter renders without it)
                missing = _pending_of(conn, row[0])
                conn.execute("DELETE FROM delay_pending WHERE doc_url = ?", (row[0],))
                conn.execute("DELETE FROM delay_docs WHERE url = ?", (row[0],))
                released.append(parked_from_row(row, missing))
            return released

        return await self._db.write(run)

    async def get(self, url: str) -> ParkedDoc | None:
        def run(conn: sqlite3.Connection) -> ParkedDoc | None:
            # both reads in one read transaction, so the pending set matches the row
            conn.execute("BEGIN")
            try:
                row = conn.execute(f"SELECT {_DOC_COLUMNS} FROM delay_docs WHERE url = ?", (url,)).fetchone()
                return None if row is None else parked_from_row(row, _pending_of(conn, url))
            finally:
                conn.execute("COMMIT")

        return await self._db.read(run)

    async def discard(self, url: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            conn.execute("DELETE FROM delay_pending WHERE doc_url = ?", (url,))
            return conn.execute("DELETE FROM delay_docs WHERE url = ?", (url,)).rowcount > 0

        return await self._db.write(run)

    async def count(self) -> int:
        row = await self._db.fetchone("SELECT count(*) FROM delay_docs")
        assert row is not None
        return int(row[0])

    async def waiting_by_host(self) -> dict[str, int]:
        rows = await self._db.fetch("SELECT host, count(*) FROM delay_docs GROUP BY host ORDER BY host")
        return {r[0]: int(r[1]) for r in rows}
