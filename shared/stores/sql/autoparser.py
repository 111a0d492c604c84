"""The autoparser store, written once for both engines (docs/architecture.md section 4).

A few writes per host and minute (a template every few pages, a pair per feed-owned page,
a calibration per ``train``), so each method is one statement, or two independent ones
(``add_pair``: the upsert, then the prune of the host's oldest pairs past the cap). A
pair's page is kept zlib-compressed: HTML shrinks about five times.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson

from shared.stores.autoparser import MAX_PAIRS_PER_HOST, HostCalibration, Pair
from shared.stores.codec import from_us, now_us, to_us
from shared.stores.sql.runner import SqlRunner

__all__ = ["SqlAutoparserStore"]


def _pair(row: Sequence[Any]) -> Pair:
    return Pair(
        host=row[0],
        url=row[1],
        html=zlib.decompress(bytes(row[2])),
        text=row[3],
        title=row[4],
        captured_at=from_us(row[5]),
    )


class SqlAutoparserStore:
    def __init__(self, runner: SqlRunner) -> None:
        self._sql = runner

    async def get_template(self, host: str) -> bytes | None:
        row = await self._sql.fetchone("SELECT data FROM autoparser_templates WHERE host = ?", host)
        return None if row is None else bytes(row[0])

    async def put_template(self, host: str, data: bytes, *, now: datetime | None = None) -> None:
        await self._sql.execute(
            "INSERT INTO autoparser_templates (host, data, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (host) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at",
            host,
            data,
            now_us(now),
        )

    async def add_pair(self, pair: Pair) -> None:
        captured = to_us(pair.captured_at) if pair.captured_at is not None else now_us(None)
        await self._sql.execute(
            "INSERT INTO autoparser_pairs (host, url, html, text, title, captured_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (host, url) DO UPDATE SET html = excluded.html, text = excluded.text, "
            "title = excluded.title, captured_at = excluded.captured_at",
            pair.host,
            pair.url,
            zlib.compress(pair.html, 6),
            pair.text,
            pair.title,
            captured,
        )
        # the newest MAX_PAIRS_PER_HOST stay: the pair at that offset (newest first) and older go
        await self._sql.execute(
            "DELETE FROM autoparser_pairs WHERE host = ? AND captured_at <= ("
            "SELECT captured_at FROM autoparser_pairs WHERE host = ? "
            "ORDER BY captured_at DESC, url DESC LIMIT 1 OFFSET ?)",
            pair.host,
            pair.host,
            MAX_PAIRS_PER_HOST,
        )

    async def pairs(self, host: str) -> list[Pair]:
        rows = await self._sql.fetch(
            "SELECT host, url, html, text, title, captured_at FROM autoparser_pairs WHERE host = ? "
            "ORDER BY captured_at, url",
            host,
        )
        return [_pair(r) for r in rows]

    async def pair_hosts(self) -> dict[str, int]:
        rows = await self._sql.fetch("SELECT host, COUNT(*) FROM autoparser_pairs GROUP BY host ORDER BY host")
        return {r[0]: int(r[1]) for r in rows}

    async def get_calibration(self, host: str) -> HostCalibration | None:
        row = await self._sql.fetchone(
            "SELECT host, kind, threshold, model, figures, trained_at FROM autoparser_calibrations WHERE host = ?",
            host,
        )
        if row is None:
            return None
        return HostCalibration(
            host=row[0],
            kind=row[1],
            threshold=row[2],
            model=bytes(row[3]) if row[3] is not None else b"",
            figures=orjson.loads(row[4]),
            trained_at=from_us(row[5]),
        )

    async def put_calibration(self, calibration: HostCalibration) -> None:
        c = calibration
        await self._sql.execute(
            "INSERT INTO autoparser_calibrations (host, kind, threshold, model, figures, trained_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (host) DO UPDATE SET kind = excluded.kind, "
            "threshold = excluded.threshold, model = excluded.model, figures = excluded.figures, "
            "trained_at = excluded.trained_at",
            c.host,
            c.kind,
            c.threshold,
            c.model or None,
            orjson.dumps(c.figures).decode(),
            to_us(c.trained_at) if c.trained_at is not None else now_us(None),
        )

    async def drop_calibration(self, host: str) -> bool:
        return await self._sql.execute("DELETE FROM autoparser_calibrations WHERE host = ?", host) > 0
