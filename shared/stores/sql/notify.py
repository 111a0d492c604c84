"""The notification store, written once for both engines (``shared/stores/notify.py``).

Events and deliveries are few (a feed's problem opening, a task ending), so this is plain SQL over
the ``SqlRunner``. ``emit_feed_event`` is what the problem history calls to add a feed's event in
the same write as the fact: the feed's tenant, host and URL come from its row, so a writer needs
to know nothing but the feed.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson

from shared.notify.events import Event, EventKind
from shared.notify.settings import Channel, NotifySettings, When
from shared.stores.codec import from_us, to_us
from shared.stores.notify import Delivery, DeliveryStatus
from shared.stores.sql.runner import SqlRunner

__all__ = ["SqlNotifyStore", "emit_feed_event", "emit_task_event"]

_EVENT = "e.event_id, e.tenant_id, e.kind, e.at, e.host, e.subject, e.detail"
_DELIVERY = (
    "d.delivery_id, d.tenant_id, d.channel, d.target, d.status, d.attempts, d.next_at, d.created_at, d.last_at,"
    " d.http_status, d.error"
)


def _us(value: datetime) -> int:
    us = to_us(value)
    assert us is not None
    return us


def _at(value: Any) -> datetime:
    at = from_us(value)
    assert at is not None
    return at


def _event(r: Sequence[Any]) -> Event:
    return Event(r[0], r[1], EventKind(r[2]), _at(r[3]), r[4], r[5], orjson.loads(r[6]))


def _delivery(r: Sequence[Any]) -> Delivery:
    return Delivery(
        delivery_id=r[0],
        tenant_id=r[1],
        channel=Channel(r[2]),
        target=r[3],
        status=DeliveryStatus(r[4]),
        attempts=int(r[5]),
        next_at=_at(r[6]),
        created_at=_at(r[7]),
        last_at=from_us(r[8]),
        http_status=None if r[9] is None else int(r[9]),
        error=r[10],
        event=_event(r[11:]),
    )


#: where an event's tenant, host and subject come from, by the source it is about: its table, the source's id
#: column and the subject's column (a feed of no tenant, the operator's, tells no one)
_SOURCES = {
    "feed_id": "SELECT ?, tenant_id, ?, ?, host, url, ? FROM feeds WHERE feed_id = ? AND tenant_id IS NOT NULL",
    "task_id": "SELECT ?, tenant_id, ?, ?, host, task_id, ? FROM tasks WHERE task_id = ?",
}


async def _emit_for(
    db: SqlRunner, key: str, event_id: str, source_id: str, kind: EventKind, at: datetime, detail: dict[str, Any]
) -> None:
    """Add an event for the tenant of the source ``key`` names (``_SOURCES``), in the caller's write."""
    await db.execute(
        f"INSERT INTO notify_events (event_id, tenant_id, kind, at, host, subject, detail) {_SOURCES[key]}"
        " ON CONFLICT DO NOTHING",
        event_id,
        kind.value,
        _us(at),
        orjson.dumps({key: source_id, **detail}).decode(),
        source_id,
    )


async def emit_feed_event(
    db: SqlRunner, event_id: str, feed_id: str, kind: EventKind, at: datetime, detail: dict[str, Any]
) -> None:
    """Add a feed's event for the feed's tenant (a feed of no tenant, the operator's, tells no one)."""
    await _emit_for(db, "feed_id", event_id, feed_id, kind, at, detail)


async def emit_task_event(
    db: SqlRunner, event_id: str, task_id: str, kind: EventKind, at: datetime, detail: dict[str, Any]
) -> None:
    """Add an upload task's event for the task's tenant (the task row knows tenant and host)."""
    await _emit_for(db, "task_id", event_id, task_id, kind, at, detail)


class SqlNotifyStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def settings(self, tenant_id: str) -> NotifySettings | None:
        row = await self._db.fetchone(
            "SELECT webhook_url, email, events, sealed_secret FROM notify_settings WHERE tenant_id = ?", tenant_id
        )
        if row is None:
            return None
        when = {EventKind(k): When(v) for k, v in orjson.loads(row[2]).items()}
        return NotifySettings(tenant_id, row[0], row[1], when, row[3])

    async def put_settings(self, settings: NotifySettings, *, now: datetime) -> None:
        await self._db.execute(
            "INSERT INTO notify_settings (tenant_id, webhook_url, email, events, sealed_secret, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET webhook_url = excluded.webhook_url,"
            " email = excluded.email, events = excluded.events, sealed_secret = excluded.sealed_secret,"
            " updated_at = excluded.updated_at",
            settings.tenant_id,
            settings.webhook_url,
            settings.email,
            orjson.dumps({k.value: v.value for k, v in settings.when.items()}).decode(),
            settings.sealed_secret,
            _us(now),
        )

    async def add_event(self, event: Event) -> None:
        await self._db.execute(
            "INSERT INTO notify_events (event_id, tenant_id, kind, at, host, subject, detail)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            event.event_id,
            event.tenant_id,
            event.kind.value,
            _us(event.at),
            event.host,
            event.subject,
            orjson.dumps(event.detail).decode(),
        )

    async def untold(self, *, limit: int) -> builtins.list[Event]:
        rows = await self._db.fetch(
            f"SELECT {_EVENT} FROM notify_events e WHERE e.told_at IS NULL ORDER BY e.at, e.event_id LIMIT ?", limit
        )
        return [_event(r) for r in rows]

    async def tell(self, event_id: str, deliveries: Sequence[Delivery]) -> None:
        for d in deliveries:
            await self._db.execute(
                "INSERT INTO notify_deliveries (delivery_id, tenant_id, event_id, channel, target, status, attempts,"
                " next_at, created_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT DO NOTHING",
                d.delivery_id,
                d.tenant_id,
                event_id,
                d.channel.value,
                d.target,
                d.status.value,
                _us(d.next_at),
                _us(d.created_at),
            )
        if not deliveries:
            # told to nobody (no settings, or the kind is off): nothing will read it again
            await self._db.execute("DELETE FROM notify_events WHERE event_id = ? AND told_at IS NULL", event_id)
            return
        await self._db.execute(
            "UPDATE notify_events SET told_at = ? WHERE event_id = ? AND told_at IS NULL",
            _us(deliveries[0].created_at),
            event_id,
        )

    async def due(self, now: datetime, *, lease_until: datetime, limit: int) -> builtins.list[Delivery]:
        # taken with the condition repeated in the UPDATE: a replica that took a row first moved its
        # next_at past now, so another's UPDATE (re-checked on PostgreSQL after the row's lock) skips it
        taken = await self._db.execute_returning(
            "UPDATE notify_deliveries SET next_at = ? WHERE delivery_id IN (SELECT delivery_id FROM"
            " notify_deliveries WHERE status = 'pending' AND next_at <= ? ORDER BY next_at LIMIT ?)"
            " AND status = 'pending' AND next_at <= ? RETURNING delivery_id",
            _us(lease_until),
            _us(now),
            limit,
            _us(now),
        )
        return await self._by_ids([r[0] for r in taken])

    async def _by_ids(self, ids: Sequence[str]) -> builtins.list[Delivery]:
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        rows = await self._db.fetch(
            f"SELECT {_DELIVERY}, {_EVENT} FROM notify_deliveries d JOIN notify_events e ON e.event_id = d.event_id"
            f" WHERE d.delivery_id IN ({marks}) ORDER BY d.created_at, d.delivery_id",
            *ids,
        )
        return [_delivery(r) for r in rows]

    async def attempted(
        self,
        delivery_id: str,
        *,
        status: DeliveryStatus,
        attempts: int,
        next_at: datetime,
        at: datetime,
        http_status: int | None,
        error: str | None,
    ) -> None:
        await self._db.execute(
            "UPDATE notify_deliveries SET status = ?, attempts = ?, next_at = ?, last_at = ?, http_status = ?,"
            " error = ? WHERE delivery_id = ?",
            status.value,
            attempts,
            _us(next_at),
            _us(at),
            http_status,
            error,
            delivery_id,
        )

    async def deliveries(self, tenant_id: str, *, limit: int = 50) -> builtins.list[Delivery]:
        rows = await self._db.fetch(
            f"SELECT {_DELIVERY}, {_EVENT} FROM notify_deliveries d JOIN notify_events e ON e.event_id = d.event_id"
            " WHERE d.tenant_id = ? ORDER BY d.created_at DESC, d.delivery_id DESC LIMIT ?",
            tenant_id,
            limit,
        )
        return [_delivery(r) for r in rows]

    async def digest_tenants(self, before: datetime, *, limit: int) -> builtins.list[str]:
        rows = await self._db.fetch(
            "SELECT DISTINCT d.tenant_id FROM notify_deliveries d LEFT JOIN notify_settings s"
            " ON s.tenant_id = d.tenant_id WHERE d.status = 'queued'"
            " AND COALESCE(s.last_digest_at, d.created_at) < ? ORDER BY d.tenant_id LIMIT ?",
            _us(before),
            limit,
        )
        return [r[0] for r in rows]

    async def prune(self, before: datetime, *, limit: int) -> int:
        gone = await self._db.execute(
            "DELETE FROM notify_deliveries WHERE delivery_id IN (SELECT d.delivery_id FROM notify_deliveries d"
            " WHERE d.status IN ('delivered', 'dead') AND d.created_at < ? AND EXISTS (SELECT 1 FROM"
            " notify_deliveries n WHERE n.tenant_id = d.tenant_id AND n.channel = d.channel"
            " AND n.status IN ('delivered', 'dead') AND (n.created_at > d.created_at"
            " OR (n.created_at = d.created_at AND n.delivery_id > d.delivery_id))) LIMIT ?)",
            _us(before),
            limit,
        )
        await self._db.execute(
            "DELETE FROM notify_events WHERE event_id IN (SELECT e.event_id FROM notify_events e"
            " WHERE e.told_at IS NOT NULL AND e.told_at < ? AND NOT EXISTS (SELECT 1 FROM notify_deliveries d"
            " WHERE d.event_id = e.event_id) LIMIT ?)",
            _us(before),
            limit,
        )
        return gone

    async def queued(self, tenant_id: str, *, limit: int) -> builtins.list[Delivery]:
        rows = await self._db.fetch(
            f"SELECT {_DELIVERY}, {_EVENT} FROM notify_deliveries d JOIN notify_events e ON e.event_id = d.event_id"
            " WHERE d.tenant_id = ? AND d.status = 'queued' ORDER BY d.created_at, d.delivery_id LIMIT ?",
            tenant_id,
            limit,
        )
        return [_delivery(r) for r in rows]

    async def digest_sent(self, tenant_id: str, delivery_ids: Sequence[str], *, at: datetime) -> None:
        for delivery_id in delivery_ids:
            await self._db.execute(
                "UPDATE notify_deliveries SET status = 'delivered', attempts = attempts + 1, last_at = ?"
                " WHERE delivery_id = ? AND tenant_id = ?",
                _us(at),
                delivery_id,
                tenant_id,
            )
        await self._db.execute("UPDATE notify_settings SET last_digest_at = ? WHERE tenant_id = ?", _us(at), tenant_id)
