"""SQLite page store, the KV store (docs/architecture.md section 4, "stores").

Engine specific because its guard is: each write reads the stored version and
writes under the same ``BEGIN IMMEDIATE`` lock (the group commit of
``db.py``), so concurrent writers (tasks or processes) always leave the
highest version; and every write queues the page for the search index in the
same transaction (triggers, migration 24; ``search_queue.py`` drains it). ``upsert_many`` puts a batch in
one transaction, which is what lets the kvwriter write thousands of pages per
second (one commit per batch instead of one per page).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from shared.stores.codec import now_us
from shared.stores.pages import (
    DeleteOutcome,
    Page,
    SearchHit,
    UpsertOutcome,
    delete_outcome,
    upsert_outcome,
)
from shared.stores.sql.pages import (
    PAGE_COLUMNS,
    PUBLIC_PAGE,
    RECENT_COLUMNS,
    page_from_row,
    page_params,
    recent_hit,
    tombstone_params,
)
from shared.stores.sqlite.db import LONG_BATCH, SqliteDb
from shared.urls import host_of

__all__ = ["SqlitePageStore"]

_PLACEHOLDERS = ", ".join("?" * len(PAGE_COLUMNS.split(",")))
_UPDATE_ALL = ", ".join(f"{c.strip()} = excluded.{c.strip()}" for c in PAGE_COLUMNS.split(",")[1:])
_WRITE_PAGE = (
    f"INSERT INTO pages ({PAGE_COLUMNS}) VALUES ({_PLACEHOLDERS}) ON CONFLICT (url) DO UPDATE SET {_UPDATE_ALL}"
)
_PREV = "SELECT version, deleted FROM pages WHERE url = ?"


def _upsert_one(conn: sqlite3.Connection, page: Page) -> UpsertOutcome:
    row = conn.execute(_PREV, (page.url,)).fetchone()
    outcome = upsert_outcome(None if row is None else (row[0], bool(row[1])), page.version)
    if outcome in (UpsertOutcome.inserted, UpsertOutcome.updated):
        conn.execute(_WRITE_PAGE, page_params(page))  # its trigger queues the page for the search index
    return outcome


class SqlitePageStore:
    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def upsert(self, page: Page) -> UpsertOutcome:
        return await self._db.write(lambda conn: _upsert_one(conn, page))

    async def upsert_many(self, pages: Sequence[Page]) -> list[UpsertOutcome]:
        if not pages:
            return []
        return await self._db.write(
            lambda conn: [_upsert_one(conn, page) for page in pages],
            long=len(pages) > LONG_BATCH,
        )

    async def delete(self, url: str, version: int, *, now: datetime | None = None) -> DeleteOutcome:
        host = host_of(url)
        stamp = now_us(now)

        def run(conn: sqlite3.Connection) -> DeleteOutcome:
            row = conn.execute(_PREV, (url,)).fetchone()
            outcome = delete_outcome(None if row is None else (row[0], bool(row[1])), version)
            if outcome in (DeleteOutcome.deleted, DeleteOutcome.absent):
                conn.execute(_WRITE_PAGE, tombstone_params(url, host, version, stamp))
            return outcome

        return await self._db.write(run)

    async def get(self, url: str, *, include_deleted: bool = False) -> Page | None:
        sql = f"SELECT {PAGE_COLUMNS} FROM pages WHERE url = ?"
        if not include_deleted:
            sql += " AND NOT deleted"
        row = await self._db.read_inline(lambda conn: conn.execute(sql, (url,)).fetchone())
        return None if row is None else page_from_row(row)

    async def recent(self, limit: int = 20) -> list[SearchHit]:
        sql = f"SELECT {RECENT_COLUMNS} FROM pages WHERE NOT deleted AND {PUBLIC_PAGE} ORDER BY written_at DESC LIMIT ?"
        rows = await self._db.read(lambda conn: conn.execute(sql, (limit,)).fetchall())
        return [recent_hit(r) for r in rows]

    async def count(self) -> int:
        row = await self._db.read(
            lambda conn: conn.execute(f"SELECT count(*) FROM pages WHERE NOT deleted AND {PUBLIC_PAGE}").fetchone()
        )
        return int(row[0])

    async def random_urls(self, n: int) -> list[str]:
        rows = await self._db.read(
            lambda conn: conn.execute(
                f"SELECT url FROM pages WHERE NOT deleted AND {PUBLIC_PAGE} ORDER BY random() LIMIT ?", (n,)
            ).fetchall()
        )
        return [r[0] for r in rows]
