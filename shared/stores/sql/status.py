"""Status snapshots and page figures, written once for both engines (docs/architecture.md section 4, "stores").

Cubes publish small JSON snapshots (``shared/status.py``: runner stats and lag,
the crawler's lanes, the overload gate) every few seconds; the frontend's
status page and the overload gate read them back. They see a few writes per
second in all, so this is plain SQL over the ``SqlRunner`` (``runner.py``),
like the feed store: one statement per method, atomic on both engines.

``page_counts`` and ``freshness`` read the page store's table for the status
page. ``freshness`` walks the ``pages_written`` index from its newest end, so
it costs ``limit`` rows whatever the size of the store; ``page_counts`` is one
grouped scan (cheap for the stores this project runs; a cluster with millions
of pages would keep a per-host counter instead).
"""

from __future__ import annotations

import builtins
from datetime import datetime
from typing import Any

import orjson

from shared.previews import PREVIEW_PREFIX  # preview pages are not pages of a host
from shared.stores.codec import dumps, from_us, now_us, to_us
from shared.stores.sql.runner import SqlRunner
from shared.stores.status import StatusSnapshot

__all__ = ["SqlStatusStore"]


class SqlStatusStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def put_status(self, name: str, data: dict[str, Any], *, now: datetime | None = None) -> None:
        if not name:
            raise ValueError("a status snapshot needs a name")
        await self._db.execute(
            "INSERT INTO status_snapshots (name, body, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at"
            # a delayed write of an older snapshot must not hide a newer one
            " WHERE status_snapshots.updated_at <= excluded.updated_at",
            name,
            dumps(data),
            now_us(now),
        )

    async def get_status(self, prefix: str = "") -> builtins.list[StatusSnapshot]:
        # substr rather than LIKE: names may hold '_' and '%', and SQLite's LIKE ignores case
        rows = await self._db.fetch(
            "SELECT name, body, updated_at FROM status_snapshots WHERE substr(name, 1, ?) = ? ORDER BY name",
            len(prefix),
            prefix,
        )
        out = []
        for name, body, updated_at in rows:
            data = orjson.loads(body)
            stamp = from_us(updated_at)
            assert stamp is not None
            out.append(StatusSnapshot(name=name, data=data if isinstance(data, dict) else {}, updated_at=stamp))
        return out

    async def prune_status(self, before: datetime) -> int:
        return await self._db.execute("DELETE FROM status_snapshots WHERE updated_at < ?", to_us(before))

    async def page_counts(self) -> dict[str, int]:
        rows = await self._db.fetch(
            "SELECT host, COUNT(*) FROM pages WHERE NOT deleted AND substr(url, 1, ?) <> ? GROUP BY host",
            len(PREVIEW_PREFIX),
            PREVIEW_PREFIX,
        )
        return {str(host): int(n) for host, n in rows}

    async def freshness(self, limit: int = 1000) -> builtins.list[float]:
        rows = await self._db.fetch(
            "SELECT seen_at, written_at FROM pages WHERE NOT deleted AND written_at IS NOT NULL"
            " AND seen_at IS NOT NULL AND substr(url, 1, ?) <> ? ORDER BY written_at DESC LIMIT ?",
            len(PREVIEW_PREFIX),
            PREVIEW_PREFIX,
            max(0, int(limit)),
        )
        return [max(0.0, (written - seen) / 1_000_000) for seen, written in rows]
