"""The notice store, written once for both engines (docs/architecture.md sections 4 and 6).

A change of rights is rare (a verification, a lapse), so this is plain SQL over the ``SqlRunner``:
the event, then its notices in one multi-row statement, and each notice as an event for its tenant's
notifications (``shared/notify/events.py``).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from shared.notify.events import Event, EventKind
from shared.stores.codec import from_us, now_us
from shared.stores.notices import Notice, RightChange, RightsEvent
from shared.stores.sql.notify import SqlNotifyStore
from shared.stores.sql.runner import SqlRunner

__all__ = ["SqlNoticeStore"]

_EVENT_COLUMNS = "e.event_id, e.origin, e.host, e.change, e.subject, e.at, e.ends_at, e.method"


def _event(row: Sequence[Any]) -> RightsEvent:
    at = from_us(row[5])
    assert at is not None
    return RightsEvent(
        event_id=row[0],
        origin=row[1],
        host=row[2],
        change=RightChange(row[3]),
        subject=row[4],
        at=at,
        ends_at=from_us(row[6]),
        method=row[7],
    )


class SqlNoticeStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def record(self, event: RightsEvent, notices: builtins.list[Notice]) -> None:
        await self._db.execute(
            "INSERT INTO rights_events (event_id, origin, host, change, subject, at, ends_at, method)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            event.event_id,
            event.origin,
            event.host,
            event.change.value,
            event.subject,
            now_us(event.at),
            None if event.ends_at is None else now_us(event.ends_at),
            event.method,
        )
        if not notices:
            return
        values = ", ".join("(?, ?, ?, ?, ?, ?)" for _ in notices)
        args: list[Any] = []
        for n in notices:
            args += [n.notice_id, n.tenant_id, event.event_id, now_us(event.at), n.yours, n.message]
        await self._db.execute(
            f"INSERT INTO notices (notice_id, tenant_id, event_id, at, yours, message) VALUES {values}"
            " ON CONFLICT DO NOTHING",
            *args,
        )
        outbox = SqlNotifyStore(self._db)
        for n in notices:
            detail = {"change": event.change.value, "yours": n.yours, "message": n.message, "origin": event.origin}
            if event.ends_at is not None:
                detail["ends_after"] = event.ends_at.isoformat()
            await outbox.add_event(
                Event(n.notice_id, n.tenant_id, EventKind.right_changed, event.at, event.host, event.origin, detail)
            )

    async def notices(self, tenant_id: str, *, limit: int = 50) -> builtins.list[Notice]:
        rows = await self._db.fetch(
            f"SELECT n.notice_id, n.tenant_id, n.yours, n.message, {_EVENT_COLUMNS}"
            " FROM notices n JOIN rights_events e ON e.event_id = n.event_id"
            " WHERE n.tenant_id = ? ORDER BY n.at DESC, n.notice_id DESC LIMIT ?",
            tenant_id,
            limit,
        )
        return [Notice(r[0], r[1], _event(r[4:]), bool(r[2]), r[3]) for r in rows]

    async def past_holders(self, origin: str) -> builtins.set[str]:
        rows = await self._db.fetch(
            "SELECT DISTINCT subject FROM rights_events WHERE origin = ? AND change = ?",
            origin,
            RightChange.granted.value,
        )
        return {str(r[0]) for r in rows}
