"""The notice store's contract: changes of rights on an origin, and who was told (docs/architecture.md section 6).

``shared.webmaster.rights`` decides what happened and whom to tell; this store keeps it. Every change is one
``RightsEvent`` (``rights_events``: the log of an origin's rights, which also answers "who ever held
a right here") and one ``Notice`` per tenant told (``notices``: what the console and ``GET
/api/v1/notices`` show). A deliverer of webhooks or e-mail reads notices in ``notice_id`` order
(time first, like a UUIDv7), so the table is its outbox.

One implementation for both engines: ``sql/notices.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

__all__ = ["Notice", "NoticeStore", "RightChange", "RightsEvent"]


class RightChange(StrEnum):
    """What happened to one tenant's right on one origin."""

    #: its proof was found: it holds a right on the origin from now on
    granted = "granted"
    #: a re-check did not find its proof: the right ends at ``ends_at`` unless the proof is back by then
    lapsing = "lapsing"
    #: the proof was found again within the grace: the right goes on
    restored = "restored"
    #: the grace ran out without the proof: the right ended
    ended = "ended"
    #: its holder claimed another origin of the host (or gave the claim up): the right ended
    withdrawn = "withdrawn"


@dataclass(frozen=True, slots=True)
class RightsEvent:
    event_id: str
    origin: str
    host: str
    change: RightChange
    #: the tenant whose right changed
    subject: str
    at: datetime
    #: when a lapsing right ends (``lapsing`` only)
    ends_at: datetime | None = None
    #: how the proof was found (``granted`` / ``restored``)
    method: str | None = None


@dataclass(frozen=True, slots=True)
class Notice:
    """One tenant's copy of an event, in words for that tenant (never naming another tenant)."""

    notice_id: str
    tenant_id: str
    event: RightsEvent
    #: True when the right that changed is the reader's own
    yours: bool
    message: str


class NoticeStore(Protocol):
    async def record(self, event: RightsEvent, notices: list[Notice]) -> None:
        """Keep ``event`` and the notices of everyone told (idempotent by their ids)."""
        ...

    async def notices(self, tenant_id: str, *, limit: int = 50) -> list[Notice]:
        """The tenant's notices, the newest first."""
        ...

    async def past_holders(self, origin: str) -> set[str]:
        """Every tenant that was ever granted a right on ``origin``."""
        ...
