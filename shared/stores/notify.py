"""The notification store's contract: settings, the outbox of events and the delivery log
(docs/architecture.md section 10, "Notifications").

``notify_events`` is the outbox: the stores that decide a fact add its ``Event`` in the same write
(``emit_feed_event`` for a feed's, ``add_event`` for the rest); the notifier takes the events not yet
told (``untold``), decides each one's channels (``shared.notify.settings.channels``) and records a
``Delivery`` per channel with the event marked told (``tell``). A delivery is sent when due: taken
under a lease (``due``: replicas that sweep at once take each one once), its attempt recorded
(``attempted``). ``deliveries`` is the tenant's log, the newest first.

One implementation for both engines: ``sql/notify.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from shared.notify.events import Event
from shared.notify.settings import Channel, NotifySettings

__all__ = ["Delivery", "DeliveryStatus", "NotifyStore"]


class DeliveryStatus(StrEnum):
    #: to be sent at ``next_at`` (the first attempt, or a retry after a failure)
    pending = "pending"
    delivered = "delivered"
    #: every attempt failed: given up (the endpoint is a problem the webmaster sees)
    dead = "dead"
    #: waits for the tenant's next digest
    queued = "queued"


@dataclass(frozen=True, slots=True)
class Delivery:
    delivery_id: str
    tenant_id: str
    event: Event
    channel: Channel
    #: the URL or address it goes to (kept as it was when the event was told)
    target: str
    status: DeliveryStatus
    attempts: int
    next_at: datetime
    created_at: datetime
    last_at: datetime | None = None
    http_status: int | None = None
    error: str | None = None


class NotifyStore(Protocol):
    async def settings(self, tenant_id: str) -> NotifySettings | None: ...

    async def put_settings(self, settings: NotifySettings, *, now: datetime) -> None: ...

    async def add_event(self, event: Event) -> None:
        """Add ``event`` to the outbox (idempotent by its id)."""
        ...

    async def untold(self, *, limit: int) -> list[Event]:
        """Events not yet told, the oldest first."""
        ...

    async def tell(self, event_id: str, deliveries: Sequence[Delivery]) -> None:
        """Record the deliveries of an event (idempotent by their ids) and mark it told; an event told to
        nobody is dropped (only the delivery log reads events again)."""
        ...

    async def due(self, now: datetime, *, lease_until: datetime, limit: int) -> list[Delivery]:
        """Pending deliveries due by ``now``, each taken until ``lease_until`` by this caller only."""
        ...

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
    ) -> None: ...

    async def deliveries(self, tenant_id: str, *, limit: int = 50) -> list[Delivery]:
        """The tenant's deliveries, the newest first."""
        ...

    async def digest_tenants(self, before: datetime, *, limit: int) -> list[str]:
        """Tenants with queued digest deliveries whose last digest was sent before ``before`` (never sent:
        whose oldest queued delivery is older than that, so a first digest also gathers a day)."""
        ...

    async def digest_sent(self, tenant_id: str, delivery_ids: Sequence[str], *, at: datetime) -> None:
        """Mark those queued deliveries delivered and the tenant's digest sent at ``at``."""
        ...

    async def prune(self, before: datetime, *, limit: int) -> int:
        """Forget finished deliveries (delivered, dead) created before ``before`` -- except each tenant's
        newest finished one of each channel, which says whether its endpoint works -- and the told
        events left with no delivery; at most ``limit`` of each. How many deliveries went."""
        ...

    async def queued(self, tenant_id: str, *, limit: int) -> list[Delivery]:
        """The tenant's deliveries waiting for its digest, the oldest first."""
        ...
