"""SQLite hash store (docs/architecture.md section 4, "stores").

Engine specific for its read-modify-write methods: ``check_and_set`` and
``claim`` read and write inside one ``BEGIN IMMEDIATE`` transaction (one
writer), so the check and the write see the same state. The batch forms do the
same for the parser's first load of a big catalog: per chunk of 500 URLs, two
reads, the decisions in Python (``hashes.plan_*``), one ``executemany``. The
rest is ``sql/hashes.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from shared.stores.codec import now_us, to_us
from shared.stores.hashes import ClaimOutcome, HashCheck, claim_outcome, next_version, plan_claims, plan_hashes
from shared.stores.sql.hashes import SqlHashStore
from shared.stores.sql.runner import chunks
from shared.stores.sqlite.db import LONG_BATCH, SqliteDb

__all__ = ["SqliteHashStore"]

_WRITE_HASH = (
    "INSERT INTO doc_hashes (source_id, url, content_hash, version, updated_at, seen_at) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (source_id, url) DO UPDATE SET content_hash = excluded.content_hash,"
    " version = excluded.version, updated_at = excluded.updated_at, seen_at = excluded.seen_at"
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


class SqliteHashStore(SqlHashStore):
    """check_and_set and claim run under BEGIN IMMEDIATE; the rest is in ``hashes.py``."""

    def __init__(self, db: SqliteDb) -> None:
        super().__init__(db)
        self._db = db

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

        def run(conn: sqlite3.Connection) -> HashCheck:
            row = conn.execute(
                "SELECT content_hash, version FROM doc_hashes WHERE source_id = ? AND url = ?",
                (source_id, url),
            ).fetchone()
            if row is not None and row[0] == content_hash:
                return HashCheck(False, row[1])
            highest = conn.execute("SELECT max(version) FROM doc_hashes WHERE url = ?", (url,)).fetchone()[0]
            version = next_version(highest, now)
            conn.execute(_WRITE_HASH, (source_id, url, content_hash, version, stamp, seen))
            return HashCheck(True, version)

        return await self._db.write(run)

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
        stamp, seen = now_us(now), to_us(seen_at)

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
                plan = plan_hashes(source_id, chunk, mine, highest, now, stamp, seen)
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
