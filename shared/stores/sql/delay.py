"""The delay store's row codec and the reads both engines share (docs/architecture.md section 3).

Parking and releasing are per engine (``sqlite/delay.py``, ``postgres/delay.py``):
what keeps two releasers from both handing out one document is the engine's
locking. A parked document is a row in ``delay_docs`` plus one ``delay_pending``
row per missing media URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared.stores.codec import from_us
from shared.stores.delay import ParkedDoc
from shared.stores.sql.runner import SqlRunner, chunks

__all__ = ["DOC_COLUMNS", "ROW_COLUMNS", "SqlDelayStore", "parked_from_row"]

#: what ``park`` writes
DOC_COLUMNS = "url, host, version, doc_json, deadline, parked_at"
#: what the reads decode (``parked_from_row``)
ROW_COLUMNS = DOC_COLUMNS + ", released_at"


def parked_from_row(row: Sequence[Any], pending: frozenset[str]) -> ParkedDoc:
    """``row``: the ``ROW_COLUMNS``."""
    deadline = from_us(row[4])
    parked_at = from_us(row[5])
    assert deadline is not None
    assert parked_at is not None
    return ParkedDoc(
        url=row[0],
        host=row[1],
        version=row[2],
        doc_json=bytes(row[3]),
        pending=pending,
        deadline=deadline,
        parked_at=parked_at,
        released_at=from_us(row[6]),
    )


class SqlDelayStore:
    """The counts; the engines add parking and releasing."""

    def __init__(self, runner: SqlRunner) -> None:
        self._sql = runner

    async def count(self) -> int:
        row = await self._sql.fetchone("SELECT count(*) FROM delay_docs WHERE released_at IS NULL")
        assert row is not None
        return int(row[0])

    async def waiting_by_host(self) -> dict[str, int]:
        rows = await self._sql.fetch(
            "SELECT host, count(*) FROM delay_docs WHERE released_at IS NULL GROUP BY host ORDER BY host"
        )
        return {r[0]: int(r[1]) for r in rows}

    async def waiting_on(self, host: str, limit: int = 100) -> list[ParkedDoc]:
        docs = await self._sql.fetch(
            "SELECT url, host, version, deadline, parked_at, released_at FROM delay_docs"
            " WHERE host = ? AND released_at IS NULL ORDER BY deadline, url LIMIT ?",
            host,
            limit,
        )
        pending: dict[str, set[str]] = {d[0]: set() for d in docs}
        for chunk in chunks(list(pending)):
            marks = ", ".join("?" * len(chunk))
            for media_url, doc_url in await self._sql.fetch(
                f"SELECT media_url, doc_url FROM delay_pending WHERE doc_url IN ({marks})", *chunk
            ):
                pending[doc_url].add(media_url)
        return [parked_from_row((d[0], d[1], d[2], b"", d[3], d[4], d[5]), frozenset(pending[d[0]])) for d in docs]
