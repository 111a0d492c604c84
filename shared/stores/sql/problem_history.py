"""The problem history's statements, the same on both engines (``shared/problem_history.py``).

A feed's fetches have one owner at a time (the runtime's revoke), so reading the open occurrences and
writing the report's transitions is never raced for one feed. A few rows per report.
"""

from __future__ import annotations

import builtins
from datetime import datetime

from shared.problem_history import ADDITIVE_RESULTS, Occurrence, transitions
from shared.stores.codec import from_us, to_us
from shared.stores.problems import FetchReport
from shared.stores.sql.runner import SqlRunner

__all__ = ["SqlProblemHistory"]

_COLUMNS = "feed_id, code, first_seen, last_seen, seen, resolved_at"


class SqlProblemHistory:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def observe(self, report: FetchReport) -> None:
        rows = await self._db.fetch(
            "SELECT code, last_seen FROM problem_history WHERE feed_id = ? AND resolved_at IS NULL", report.feed_id
        )
        open_: dict[str, datetime] = {}
        for code, last in rows:
            seen = from_us(last)
            assert seen is not None
            open_[str(code)] = seen
        at = to_us(report.fetched_at)
        additive = report.result in ADDITIVE_RESULTS
        for t in transitions(open_, set(report.counts), report.fetched_at, additive=additive):
            if t.kind == "opened":
                await self._db.execute(
                    f"INSERT INTO problem_history ({_COLUMNS}) VALUES (?, ?, ?, ?, 1, NULL) ON CONFLICT DO NOTHING",
                    report.feed_id,
                    t.code,
                    at,
                    at,
                )
            elif t.kind == "seen":
                await self._db.execute(
                    "UPDATE problem_history SET last_seen = ?, seen = seen + 1"
                    " WHERE feed_id = ? AND code = ? AND resolved_at IS NULL",
                    at,
                    report.feed_id,
                    t.code,
                )
            else:
                await self._db.execute(
                    "UPDATE problem_history SET resolved_at = ? WHERE feed_id = ? AND code = ? AND resolved_at IS NULL",
                    at,
                    report.feed_id,
                    t.code,
                )

    async def history(self, feed_id: str, *, limit: int = 100) -> builtins.list[Occurrence]:
        rows = await self._db.fetch(
            f"SELECT {_COLUMNS} FROM problem_history WHERE feed_id = ?"
            " ORDER BY (resolved_at IS NULL) DESC, last_seen DESC, code LIMIT ?",
            feed_id,
            limit,
        )
        out = []
        for r in rows:
            first, last = from_us(r[2]), from_us(r[3])
            assert first is not None
            assert last is not None
            out.append(Occurrence(r[0], r[1], first, last, int(r[4]), from_us(r[5])))
        return out
