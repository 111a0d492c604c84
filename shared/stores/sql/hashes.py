"""The hash store's statements both engines share (docs/architecture.md section 4, "stores").

Reads, ``forget``, ``release`` and ``remember_guid`` are single statements,
atomic on both engines. The read-modify-write methods (``check_and_set``,
``claim`` and their batch forms) are per engine, because their atomicity is:
``sqlite/hashes.py`` and ``postgres/hashes.py`` subclass ``SqlHashStore``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shared.stores.codec import from_us
from shared.stores.hashes import HashEntry, Owner
from shared.stores.sql.runner import SqlRunner, chunks

__all__ = ["ENTRY_COLUMNS", "OWNER_COLUMNS", "SqlHashStore", "entry_from_row", "owner_from_row"]

ENTRY_COLUMNS = "source_id, url, content_hash, version, updated_at, seen_at"
OWNER_COLUMNS = "url, source_id, priority, claimed_at"


def entry_from_row(row: Sequence[Any]) -> HashEntry:
    updated = from_us(row[4])
    assert updated is not None
    return HashEntry(
        source_id=row[0], url=row[1], content_hash=row[2], version=row[3], updated_at=updated, seen_at=from_us(row[5])
    )


def owner_from_row(row: Sequence[Any]) -> Owner:
    claimed = from_us(row[3])
    assert claimed is not None
    return Owner(url=row[0], source_id=row[1], priority=row[2], claimed_at=claimed)


class SqlHashStore:
    def __init__(self, runner: SqlRunner) -> None:
        self._sql = runner

    async def get(self, source_id: str, url: str) -> HashEntry | None:
        row = await self._sql.fetchone(
            f"SELECT {ENTRY_COLUMNS} FROM doc_hashes WHERE source_id = ? AND url = ?",
            source_id,
            url,
        )
        return None if row is None else entry_from_row(row)

    async def get_many(self, source_id: str, urls: Iterable[str]) -> dict[str, HashEntry]:
        found: dict[str, HashEntry] = {}
        for chunk in chunks(list(dict.fromkeys(urls))):
            marks = ", ".join("?" * len(chunk))
            rows = await self._sql.fetch(
                f"SELECT {ENTRY_COLUMNS} FROM doc_hashes WHERE source_id = ? AND url IN ({marks})",
                source_id,
                *chunk,
            )
            for row in rows:
                found[row[1]] = entry_from_row(row)
        return found

    async def forget(self, source_id: str, url: str) -> bool:
        count = await self._sql.execute("DELETE FROM doc_hashes WHERE source_id = ? AND url = ?", source_id, url)
        return count > 0

    async def urls_of_source(self, source_id: str, limit: int | None = None, *, after: str | None = None) -> list[str]:
        sql = "SELECT url FROM doc_hashes WHERE source_id = ?"
        args: list[object] = [source_id]
        if after is not None:
            sql += " AND url > ?"
            args.append(after)
        sql += " ORDER BY url"
        if limit:
            sql += " LIMIT ?"
            args.append(limit)
        rows = await self._sql.fetch(sql, *args)
        return [r[0] for r in rows]

    async def owner(self, url: str) -> Owner | None:
        row = await self._sql.fetchone(f"SELECT {OWNER_COLUMNS} FROM url_owners WHERE url = ?", url)
        return None if row is None else owner_from_row(row)

    async def owners(self, urls: Iterable[str]) -> dict[str, Owner]:
        found: dict[str, Owner] = {}
        for chunk in chunks(list(dict.fromkeys(urls))):
            marks = ", ".join("?" * len(chunk))
            rows = await self._sql.fetch(f"SELECT {OWNER_COLUMNS} FROM url_owners WHERE url IN ({marks})", *chunk)
            for row in rows:
                found[row[0]] = owner_from_row(row)
        return found

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

    async def urls_for_guids(self, source_id: str, guids: Iterable[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for chunk in chunks(list(dict.fromkeys(guids))):
            marks = ", ".join("?" * len(chunk))
            rows = await self._sql.fetch(
                f"SELECT guid, url FROM guids WHERE source_id = ? AND guid IN ({marks})", source_id, *chunk
            )
            for row in rows:
                found[row[0]] = str(row[1])
        return found
