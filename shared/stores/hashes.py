"""Hash store methods both engines share (DESIGN.md section 4, "stores").

The parser's dedupe hashes per (source, URL), URL ownership among sources, and
feed-item guids. The read-modify-write methods (``check_and_set``, ``claim``
and their batch forms) are per engine, because their atomicity is:
``sqlite_pages.py`` and ``postgres_pages.py`` subclass ``SqlHashStore`` and
add them; the decisions they take inside their transaction are computed here
(``plan_hashes``, ``plan_claims``) so both engines decide alike.

Batch reads go ``_CHUNK`` keys per statement: one round trip per chunk, and
well under SQLite's limit of bound parameters (32,766) on any version.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from shared.stores.codec import claim_outcome, from_us, next_version
from shared.stores.registry import SqlRunner
from shared.stores.rows import ClaimOutcome, HashCheck, HashEntry, Owner

__all__ = ["CHUNK", "ClaimPlan", "HashPlan", "SqlHashStore", "chunks", "plan_claims", "plan_hashes"]

#: keys per statement of a batch read or write: one round trip each; 500 keeps a statement small
#: (its plan and parameters) while 100,000 keys still take only 200 round trips
CHUNK = 500


def chunks(values: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


@dataclass
class HashPlan:
    """What ``check_and_set_many`` answers and the rows it writes (one per URL: the last state)."""

    results: list[HashCheck] = field(default_factory=list)
    #: url -> (source_id, url, content_hash, version, updated_at), ready to bind
    rows: dict[str, tuple[str, str, str, int, int]] = field(default_factory=dict)


def plan_hashes(
    source_id: str,
    items: Sequence[tuple[str, str]],
    mine: dict[str, tuple[str, int]],
    highest: dict[str, int],
    now: datetime | None,
    stamp: int,
) -> HashPlan:
    """``check_and_set`` of each item in order, given what is stored (``mine``: url -> (hash, version)
    of this source; ``highest``: url -> highest version over all sources). Both dicts are updated as
    the items are applied, so a URL that comes twice is decided as the one-by-one calls would."""
    plan = HashPlan()
    for url, content_hash in items:
        prev = mine.get(url)
        if prev is not None and prev[0] == content_hash:
            plan.results.append(HashCheck(False, prev[1]))
            continue
        version = next_version(highest.get(url), now)
        mine[url] = (content_hash, version)
        highest[url] = version  # next_version is above every stored version of the URL
        plan.rows[url] = (source_id, url, content_hash, version, stamp)
        plan.results.append(HashCheck(True, version))
    return plan


@dataclass
class ClaimPlan:
    results: list[ClaimOutcome] = field(default_factory=list)
    #: url -> (url, source_id, priority, claimed_at) of the URLs whose owner row is (re)written
    rows: dict[str, tuple[str, str, int, int]] = field(default_factory=dict)


def plan_claims(
    urls: Sequence[str], source_id: str, priority: int, owners: dict[str, tuple[str, int]], stamp: int
) -> ClaimPlan:
    """``claim`` of each URL in order, given the stored owners (url -> (source, priority)), updated as it goes."""
    plan = ClaimPlan()
    for url in urls:
        outcome = claim_outcome(owners.get(url), source_id, priority)
        if outcome is not ClaimOutcome.outranked:
            owners[url] = (source_id, priority)
            plan.rows[url] = (url, source_id, priority, stamp)
        plan.results.append(outcome)
    return plan


def _entry(row: Sequence[Any]) -> HashEntry:
    updated = from_us(row[4])
    assert updated is not None
    return HashEntry(source_id=row[0], url=row[1], content_hash=row[2], version=row[3], updated_at=updated)


def _owner(row: Sequence[Any]) -> Owner:
    claimed = from_us(row[3])
    assert claimed is not None
    return Owner(url=row[0], source_id=row[1], priority=row[2], claimed_at=claimed)


class SqlHashStore:
    def __init__(self, runner: SqlRunner) -> None:
        self._sql = runner

    async def get(self, source_id: str, url: str) -> HashEntry | None:
        row = await self._sql.fetchone(
            "SELECT source_id, url, content_hash, version, updated_at FROM doc_hashes WHERE source_id = ? AND url = ?",
            source_id,
            url,
        )
        return None if row is None else _entry(row)

    async def get_many(self, source_id: str, urls: Iterable[str]) -> dict[str, HashEntry]:
        found: dict[str, HashEntry] = {}
        for chunk in chunks(list(dict.fromkeys(urls))):
            marks = ", ".join("?" * len(chunk))
            rows = await self._sql.fetch(
                "SELECT source_id, url, content_hash, version, updated_at FROM doc_hashes"
                f" WHERE source_id = ? AND url IN ({marks})",
                source_id,
                *chunk,
            )
            for row in rows:
                found[row[1]] = _entry(row)
        return found

    async def forget(self, source_id: str, url: str) -> bool:
        count = await self._sql.execute("DELETE FROM doc_hashes WHERE source_id = ? AND url = ?", source_id, url)
        return count > 0

    async def urls_of_source(self, source_id: str) -> list[str]:
        rows = await self._sql.fetch("SELECT url FROM doc_hashes WHERE source_id = ? ORDER BY url", source_id)
        return [r[0] for r in rows]

    async def owner(self, url: str) -> Owner | None:
        row = await self._sql.fetchone("SELECT url, source_id, priority, claimed_at FROM url_owners WHERE url = ?", url)
        return None if row is None else _owner(row)

    async def owners(self, urls: Iterable[str]) -> dict[str, Owner]:
        found: dict[str, Owner] = {}
        for chunk in chunks(list(dict.fromkeys(urls))):
            marks = ", ".join("?" * len(chunk))
            rows = await self._sql.fetch(
                f"SELECT url, source_id, priority, claimed_at FROM url_owners WHERE url IN ({marks})", *chunk
            )
            for row in rows:
                found[row[0]] = _owner(row)
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
