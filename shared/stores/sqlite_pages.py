"""SQLite page store (the KV store) and hash store (DESIGN.md section 4, "stores").

Each write runs whole on the writer thread inside one ``BEGIN IMMEDIATE``
transaction: the stored version is read and the guarded write done under
the same lock, so concurrent writers (tasks or processes) always leave the
highest version. ``upsert_many`` puts a batch in one transaction, which is
what lets the kvwriter write thousands of pages per second (one commit per
batch instead of one per page). The hash store's batch forms do the same for
the parser's first load of a big catalog: per chunk of 500 URLs, two reads,
the decisions in Python (``hashes.plan_*``), one ``executemany``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

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
from shared.stores.hashes import SqlHashStore, chunks, plan_claims, plan_hashes
from shared.stores.rows import (
    ClaimOutcome,
    DeleteOutcome,
    HashCheck,
    Page,
    SearchHit,
    UpsertOutcome,
)
from shared.stores.sqlite import LONG_BATCH, SqliteDb
from shared.urls import host_of

__all__ = ["SqliteHashStore", "SqlitePageStore"]

_PLACEHOLDERS = ", ".join("?" * len(PAGE_COLUMNS.split(",")))
_UPDATE_ALL = ", ".join(f"{c.strip()} = excluded.{c.strip()}" for c in PAGE_COLUMNS.split(",")[1:])
_WRITE_PAGE = (
    f"INSERT INTO pages ({PAGE_COLUMNS}) VALUES ({_PLACEHOLDERS}) ON CONFLICT (url) DO UPDATE SET {_UPDATE_ALL}"
)
_PREV = "SELECT version, deleted FROM pages WHERE url = ?"
_WRITE_HASH = (
    "INSERT INTO doc_hashes (source_id, url, content_hash, version, updated_at) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (source_id, url) DO UPDATE SET content_hash = excluded.content_hash,"
    " version = excluded.version, updated_at = excluded.updated_at"
)
_WRITE_OWNER = (
    "INSERT INTO url_owners (url, source_id, priority, claimed_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (url) DO UPDATE SET source_id = excluded.source_id,"
    " priority = excluded.priority, claimed_at = excluded.claimed_at"
)
_WRITE_GUID = (
    "INSERT INTO guids (source_id, guid, url) VALUES (?, ?, ?)"
    " ON CONFLICT (source_id, guid) DO UPDATE SET url = excluded.url"
)
#: title matches weigh more than body matches (bm25 column weights: title, text)
_BM25 = "bm25(pages_fts, 5.0, 1.0)"
#: words of context around a match in a search snippet
SNIPPET_TOKENS = 24


def _upsert_one(conn: sqlite3.Connection, page: Page) -> UpsertOutcome:
    row = conn.execute(_PREV, (page.url,)).fetchone()
    outcome = upsert_outcome(None if row is None else (row[0], bool(row[1])), page.version)
    if outcome in (UpsertOutcome.inserted, UpsertOutcome.updated):
        conn.execute(_WRITE_PAGE, page_params(page))
    return outcome


def _fts_query(query: str) -> str | None:
    terms = search_terms(query)
    # each term quoted: FTS5 operators (AND, NEAR, *, :) in user text are taken literally
    return " ".join(f'"{term}"' for term in terms) if terms else None


class SqlitePageStore:
    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def upsert(self, page: Page) -> UpsertOutcome:
        return await self._db.write(lambda conn: _upsert_one(conn, page))

    async def upsert_many(self, pages: Sequence[Page]) -> list[UpsertOutcome]:
        if not pages:
            return []
        return await self._db.write(
            lambda conn: [_upsert_one(conn, page) for page in pages], long=len(pages) > LONG_BATCH
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

    async def search(self, query: str, limit: int = 20, offset: int = 0) -> list[SearchHit]:
        match = _fts_query(query)
        if match is None or limit <= 0:
            return []
        sql = (
            f"SELECT p.url, p.host, p.title, snippet(pages_fts, 1, '', '', '…', {SNIPPET_TOKENS}),"
            f" -{_BM25}, p.written_at FROM pages_fts JOIN pages p ON p.rowid = pages_fts.rowid"
            f" WHERE pages_fts MATCH ? ORDER BY {_BM25} LIMIT ? OFFSET ?"
        )
        rows = await self._db.read(lambda conn: conn.execute(sql, (match, limit, max(offset, 0))).fetchall())
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
        sql = (
            "SELECT url, host, title, substr(text, 1, 240), written_at FROM pages WHERE NOT deleted"
            " ORDER BY written_at DESC LIMIT ?"
        )
        rows = await self._db.read(lambda conn: conn.execute(sql, (limit,)).fetchall())
        return [
            SearchHit(url=r[0], host=r[1], title=r[2], snippet=r[3], rank=0.0, written_at=from_us(r[4])) for r in rows
        ]

    async def count(self) -> int:
        row = await self._db.read(lambda conn: conn.execute("SELECT count(*) FROM pages WHERE NOT deleted").fetchone())
        return int(row[0])

    async def random_urls(self, n: int) -> list[str]:
        rows = await self._db.read(
            lambda conn: conn.execute(
                "SELECT url FROM pages WHERE NOT deleted ORDER BY random() LIMIT ?", (n,)
            ).fetchall()
        )
        return [r[0] for r in rows]


class SqliteHashStore(SqlHashStore):
    """check_and_set and claim run under BEGIN IMMEDIATE; the rest is in ``hashes.py``."""

    def __init__(self, db: SqliteDb) -> None:
        super().__init__(db)
        self._db = db

    async def check_and_set(
        self, source_id: str, url: str, content_hash: str, *, now: datetime | None = None
    ) -> HashCheck:
        stamp = now_us(now)

        def run(conn: sqlite3.Connection) -> HashCheck:
            row = conn.execute(
                "SELECT content_hash, version FROM doc_hashes WHERE source_id = ? AND url = ?",
                (source_id, url),
            ).fetchone()
            if row is not None and row[0] == content_hash:
                return HashCheck(False, row[1])
            highest = conn.execute("SELECT max(version) FROM doc_hashes WHERE url = ?", (url,)).fetchone()[0]
            version = next_version(highest, now)
            conn.execute(_WRITE_HASH, (source_id, url, content_hash, version, stamp))
            return HashCheck(True, version)

        return await self._db.write(run)

    async def check_and_set_many(
        self, source_id: str, items: Sequence[tuple[str, str]], *, now: datetime | None = None
    ) -> list[HashCheck]:
        if not items:
            return []
        stamp = now_us(now)

        def run(conn: sqlite3.Connection) -> list[HashCheck]:
            # chunk by chunk: read the chunk's rows in two statements, decide, write with executemany;
            # a URL repeated in a later chunk is read after the earlier chunk's writes, as one-by-one
            results: list[HashCheck] = []
            for chunk in chunks(items):
                urls = list(dict.fromkeys(url for url, _ in chunk))
                marks = ", ".join("?" * len(urls))
                mine = {
                    r[0]: (r[1], r[2])
                    for r in conn.execute(
                        f"SELECT url, content_hash, version FROM doc_hashes WHERE source_id = ? AND url IN ({marks})",
                        (source_id, *urls),
                    )
                }
                highest = dict(
                    conn.execute(f"SELECT url, max(version) FROM doc_hashes WHERE url IN ({marks}) GROUP BY url", urls)
                )
                plan = plan_hashes(source_id, chunk, mine, highest, now, stamp)
                conn.executemany(_WRITE_HASH, plan.rows.values())
                results.extend(plan.results)
            return results

        return await self._db.write(run, long=len(items) > LONG_BATCH)

    async def claim(self, url: str, source_id: str, priority: int, *, now: datetime | None = None) -> ClaimOutcome:
        stamp = now_us(now)

        def run(conn: sqlite3.Connection) -> ClaimOutcome:
            row = conn.execute("SELECT source_id, priority FROM url_owners WHERE url = ?", (url,)).fetchone()
            outcome = claim_outcome(None if row is None else (row[0], row[1]), source_id, priority)
            if outcome is not ClaimOutcome.outranked:
                conn.execute(_WRITE_OWNER, (url, source_id, priority, stamp))
            return outcome

        return await self._db.write(run)

    async def claim_many(
        self, urls: Sequence[str], source_id: str, priority: int, *, now: datetime | None = None
    ) -> list[ClaimOutcome]:
        if not urls:
            return []
        stamp = now_us(now)

        def run(conn: sqlite3.Connection) -> list[ClaimOutcome]:
            results: list[ClaimOutcome] = []
            for chunk in chunks(urls):
                distinct = list(dict.fromkeys(chunk))
                marks = ", ".join("?" * len(distinct))
                owners = {
                    r[0]: (r[1], r[2])
                    for r in conn.execute(
                        f"SELECT url, source_id, priority FROM url_owners WHERE url IN ({marks})", distinct
                    )
                }
                plan = plan_claims(chunk, source_id, priority, owners, stamp)
                conn.executemany(_WRITE_OWNER, plan.rows.values())
                results.extend(plan.results)
            return results

        return await self._db.write(run, long=len(urls) > LONG_BATCH)

    async def remember_guids(self, source_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        if not pairs:
            return
        rows = [(source_id, guid, url) for guid, url in pairs]

        def run(conn: sqlite3.Connection) -> None:
            conn.executemany(_WRITE_GUID, rows)  # in order: the last mapping of a guid wins

        await self._db.write(run, long=len(rows) > LONG_BATCH)
