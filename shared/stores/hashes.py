"""Hash store methods both engines share (DESIGN.md section 4, "stores").

The parser's dedupe hashes per (source, URL), URL ownership among sources, and
feed-item guids. The read-modify-write methods (``check_and_set``, ``claim``)
are per engine, because their atomicity is: ``sqlite_pages.py`` and
``postgres_pages.py`` subclass ``SqlHashStore`` and add them.
"""

from __future__ import annotations

from shared.stores.codec import from_us
from shared.stores.registry import SqlRunner
from shared.stores.rows import HashEntry, Owner

__all__ = ["SqlHashStore"]


class SqlHashStore:
    def __init__(self, runner: SqlRunner) -> None:
        self._sql = runner

    async def get(self, source_id: str, url: str) -> HashEntry | None:
        row = await self._sql.fetchone(
            "SELECT source_id, url, content_hash, version, updated_at FROM doc_hashes WHERE source_id = ? AND url = ?",
            source_id,
            url,
        )
        if row is None:
            return None
        updated = from_us(row[4])
        assert updated is not None
        return HashEntry(source_id=row[0], url=row[1], content_hash=row[2], version=row[3], updated_at=updated)

    async def forget(self, source_id: str, url: str) -> bool:
        count = await self._sql.execute("DELETE FROM doc_hashes WHERE source_id = ? AND url = ?", source_id, url)
        return count > 0

    async def urls_of_source(self, source_id: str) -> list[str]:
        rows = await self._sql.fetch("SELECT url FROM doc_hashes WHERE source_id = ? ORDER BY url", source_id)
        return [r[0] for r in rows]

    async def owner(self, url: str) -> Owner | None:
        row = await self._sql.fetchone("SELECT url, source_id, priority, claimed_at FROM url_owners WHERE url = ?", url)
        if row is None:
            return None
        claimed = from_us(row[3])
        assert claimed is not None
        return Owner(url=row[0], source_id=row[1], priority=row[2], claimed_at=claimed)

    async def release(self, url: str, source_id: str) -> bool:
        count = await self._sql.execute("DELETE FROM url_owners WHERE url = ? AND source_id = ?", url, source_id)
        return count > 0

    async def remember_guid(self, source_id: str, guid: str, url: str) -> None:
        await self._sql.execute(
            "INSERT INTO guids (source_id, guid, url) VALUES (?, ?, ?)"
            " ON CONFLICT (source_id, guid) DO UPDATE SET url = excluded.url",
            source_id,
            guid,
            url,
        )

    async def url_for_guid(self, source_id: str, guid: str) -> str | None:
        row = await self._sql.fetchone("SELECT url FROM guids WHERE source_id = ? AND guid = ?", source_id, guid)
        return None if row is None else str(row[0])
