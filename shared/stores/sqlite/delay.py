"""SQLite delay store (docs/architecture.md section 3: media -> delay -> kvwriter).

Engine specific because its atomicity is: every method that releases runs
under ``BEGIN IMMEDIATE`` (one writer, the group commit of ``db.py``), so of
two concurrent callers (tasks or processes) exactly one gets each document per
lease. Releasing never deletes: ``resolve`` and ``due`` mark the documents
they hand out ``released_at = now`` (a lease) and only ``confirm``, called once
their publish is durable, removes them; a release not confirmed within the
lease is handed out again by ``due``. So a crash between a release and its
publish costs a duplicate, never a document. The counts are ``sql/delay.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime, timedelta

from shared.stores.codec import now_us, to_us
from shared.stores.delay import ParkedDoc, ParkOutcome, check_pending
from shared.stores.sql.delay import DOC_COLUMNS, ROW_COLUMNS, SqlDelayStore, parked_from_row
from shared.stores.sqlite.db import SqliteDb

__all__ = ["SqliteDelayStore"]


def _pending_of(conn: sqlite3.Connection, url: str) -> frozenset[str]:
    rows = conn.execute("SELECT media_url FROM delay_pending WHERE doc_url = ?", (url,)).fetchall()
    return frozenset(r[0] for r in rows)


class SqliteDelayStore(SqlDelayStore):
    def __init__(self, db: SqliteDb) -> None:
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
                f"INSERT INTO delay_docs ({DOC_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (url) DO UPDATE SET host = excluded.host, version = excluded.version,"
                " doc_json = excluded.doc_json, deadline = excluded.deadline, parked_at = excluded.parked_at,"
                # a newer version waits again, even if the older one was released and is in flight
                " released_at = NULL",
                (url, host, version, doc_json, deadline_us, parked_at),
            )
            conn.executemany(
                "INSERT INTO delay_pending (media_url, doc_url) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(m, url) for m in sorted(media)],
            )
            return ParkOutcome.parked if row is None else ParkOutcome.replaced

        return await self._db.write(run)

    async def resolve(self, media_url: str, *, now: datetime | None = None) -> list[ParkedDoc]:
        released_at = now_us(now)

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
                    "UPDATE delay_docs SET released_at = ? WHERE url = ? AND released_at IS NULL AND NOT EXISTS"
                    f" (SELECT 1 FROM delay_pending WHERE doc_url = ?) RETURNING {ROW_COLUMNS}",
                    (released_at, doc_url, doc_url),
                ).fetchone()
                if row is not None:
                    released.append(parked_from_row(row, frozenset()))
            return released

        return await self._db.write(run)

    async def due(self, now: datetime, limit: int = 100, *, lease_s: float = 60.0) -> list[ParkedDoc]:
        if lease_s <= 0:
            raise ValueError(f"lease_s must be > 0, not {lease_s}")
        now_stamp = now_us(now)
        expired = now_us(now - timedelta(seconds=lease_s))

        def run(conn: sqlite3.Connection) -> list[ParkedDoc]:
            rows = conn.execute(
                f"SELECT {DOC_COLUMNS} FROM delay_docs"
                " WHERE (released_at IS NULL AND deadline <= ?) OR released_at <= ?"
                " ORDER BY deadline, url LIMIT ?",
                (now_stamp, expired, limit),
            ).fetchall()
            released = []
            for row in rows:
                conn.execute("UPDATE delay_docs SET released_at = ? WHERE url = ?", (now_stamp, row[0]))
                # what is still missing travels with the released doc (the kvwriter renders without it);
                # the pending rows stay until ``confirm`` so a re-release reports the same
                released.append(parked_from_row((*row, now_stamp), _pending_of(conn, row[0])))
            return released

        return await self._db.write(run)

    async def confirm(self, released: Iterable[tuple[str, int]]) -> int:
        pairs = sorted(set(released))

        def run(conn: sqlite3.Connection) -> int:
            gone = 0
            for url, version in pairs:
                if conn.execute(
                    "DELETE FROM delay_docs WHERE url = ? AND version = ? AND released_at IS NOT NULL",
                    (url, version),
                ).rowcount:
                    conn.execute("DELETE FROM delay_pending WHERE doc_url = ?", (url,))
                    gone += 1
            return gone

        return await self._db.write(run) if pairs else 0

    async def get(self, url: str) -> ParkedDoc | None:
        def run(conn: sqlite3.Connection) -> ParkedDoc | None:
            # both reads in one read transaction, so the pending set matches the row
            conn.execute("BEGIN")
            try:
                row = conn.execute(f"SELECT {ROW_COLUMNS} FROM delay_docs WHERE url = ?", (url,)).fetchone()
                return None if row is None else parked_from_row(row, _pending_of(conn, url))
            finally:
                conn.execute("COMMIT")

        return await self._db.read(run)

    async def discard(self, url: str) -> bool:
        def run(conn: sqlite3.Connection) -> bool:
            conn.execute("DELETE FROM delay_pending WHERE doc_url = ?", (url,))
            return conn.execute("DELETE FROM delay_docs WHERE url = ?", (url,)).rowcount > 0

        return await self._db.write(run)
