"""The problem history's statements, the same on both engines (``shared/problems/history.py``).

A feed's fetches have one owner at a time (the runtime's revoke), so reading the open occurrences and
writing the report's transitions is never raced for one feed. A few rows per report. Each occurrence
opened or resolved, and a feed's fetches turning failing or working again (``feed_state_kind``), is an
event for the feed's tenant (``shared/notify/events.py``), added with it.
"""

from __future__ import annotations

import builtins
from datetime import datetime

from shared.notify.events import EventKind, feed_state_kind, problem_kind
from shared.problems.codes import CODES
from shared.problems.history import Occurrence, additive, transitions
from shared.stores.codec import from_us, to_us
from shared.stores.problems import FetchReport
from shared.stores.sql.notify import emit_feed_event
from shared.stores.sql.runner import SqlRunner

__all__ = ["SqlProblemHistory"]

_COLUMNS = "feed_id, code, first_seen, last_seen, seen, resolved_at"


class SqlProblemHistory:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def observe(self, report: FetchReport) -> None:
        rows = await self._db.fetch(
            "SELECT code, last_seen, first_seen FROM problem_history WHERE feed_id = ? AND resolved_at IS NULL",
            report.feed_id,
        )
        open_: dict[str, datetime] = {}
        first: dict[str, int] = {}
        for code, last, since in rows:
            seen = from_us(last)
            assert seen is not None
            open_[str(code)] = seen
            first[str(code)] = int(since)
        at = to_us(report.fetched_at)
        changes = transitions(open_, set(report.counts), report.fetched_at, additive=additive(report.result))
        for t in changes:
            if t.kind != "seen":
                await self._tell(report, t.code, first.get(t.code, at or 0), resolved=t.kind == "resolved")
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

        await self._feed_state(report)

    async def _tell(self, report: FetchReport, code: str, since: int, *, resolved: bool) -> None:
        row = CODES.get(code)
        found = next((p for p in report.problems if p.code == code), None)
        detail = {
            "code": code,
            "state": "resolved" if resolved else "new",
            "severity": row.severity if row else None,
            "message": found.message if found is not None and not resolved else (row.title if row else code),
            "hint": row.hint if row else None,
        }
        kind = problem_kind(code, resolved=resolved)
        state = "resolved" if resolved else "new"
        await emit_feed_event(
            self._db, f"{report.feed_id}/{code}/{since}/{state}", report.feed_id, kind, report.fetched_at, detail
        )

    async def _feed_state(self, report: FetchReport) -> None:
        """A feed's event when this fetch's result turns it failing or working again (the report before
        it, by time, is the state it was in)."""
        before = await self._db.fetchone(
            "SELECT result FROM fetch_reports WHERE feed_id = ? AND fetched_at < ? ORDER BY fetched_at DESC LIMIT 1",
            report.feed_id,
            to_us(report.fetched_at),
        )
        kind = feed_state_kind(None if before is None else str(before[0]), report.result)
        if kind is None:
            return
        first = report.problems[0] if report.problems else None
        detail = {"result": report.result, "http_status": report.http_status}
        if kind is EventKind.feed_failing and first is not None:
            detail |= {"code": first.code, "message": first.message, "hint": first.hint}
        await emit_feed_event(
            self._db,
            f"{report.feed_id}/{to_us(report.fetched_at)}/{kind.value}",
            report.feed_id,
            kind,
            report.fetched_at,
            detail,
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
