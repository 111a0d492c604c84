"""The delay store's contract: documents parked until their media is cached (docs/architecture.md section 3).

Media parks a document with the media URLs it still misses; delay releases it
when the last one is cached (``resolve``) or its deadline passes (``due``).
Releasing is a lease: only ``confirm``, once the publish is durable, removes a
document, so a crash in between costs a duplicate, never a document. Engines:
``sqlite/delay.py`` and ``postgres/delay.py`` (their locking differs); the row
codec and the portable reads are in ``sql/delay.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

__all__ = ["DelayStore", "ParkOutcome", "ParkedDoc", "check_pending"]


class ParkOutcome(StrEnum):
    parked = "parked"  # first parked version of the URL
    replaced = "replaced"  # a lower parked version was replaced (its pending set too)
    stale = "stale"  # a higher version is parked: ignored
    unchanged = "unchanged"  # this version is parked already


@dataclass(frozen=True, slots=True)
class ParkedDoc:
    url: str
    host: str
    version: int
    doc_json: bytes
    pending: frozenset[str]  # media URLs still missing (empty in what ``resolve`` returns)
    deadline: datetime  # released by ``due`` after this, ready or not
    parked_at: datetime
    #: when it was last handed out (a lease until ``confirm``); None while it waits
    released_at: datetime | None = None


class DelayStore(Protocol):
    """Documents parked until their media is in the CDN or their deadline passes."""

    async def park(
        self,
        url: str,
        version: int,
        doc_json: bytes,
        pending: Iterable[str],
        deadline: datetime,
        *,
        host: str = "",
        now: datetime | None = None,
    ) -> ParkOutcome:
        """Park (or replace a lower version of) a document. ``pending`` must not be empty.

        A media URL cached between the caller's registry check and ``park`` is
        not seen here: the caller re-checks after parking and calls ``resolve``.
        """
        ...

    async def resolve(self, media_url: str, *, now: datetime | None = None) -> list[ParkedDoc]:
        """Remove ``media_url`` from every pending set; return the waiting docs now complete.

        They are not removed but RELEASED (``released_at = now``, a lease) until the
        caller ``confirm``s their publish; an unconfirmed release comes back from
        ``due`` after the lease. Atomic: concurrent callers never both release one
        document, and two media resolved concurrently never leave a complete document parked.
        """
        ...

    async def due(self, now: datetime, limit: int = 100, *, lease_s: float = 60.0) -> list[ParkedDoc]:
        """Release (``released_at = now``) and return up to ``limit`` docs, oldest deadline first.

        Those are the waiting docs whose deadline is <= ``now`` (``pending`` = the media
        still missing), and the released docs not confirmed within ``lease_s`` (their
        publish evidently did not happen: they are handed out again, a duplicate at worst).
        Concurrent callers (``FOR UPDATE SKIP LOCKED`` / one writer) never share a doc.
        """
        ...

    async def confirm(self, released: Iterable[tuple[str, int]]) -> int:
        """Drop released docs, given as ``(url, version)``, whose publish is durable; how many.

        Only the released version goes: a newer version parked meanwhile (it waits
        again) survives, as does a doc that is waiting, not released.
        """
        ...

    async def get(self, url: str) -> ParkedDoc | None:
        """The doc held for ``url``, waiting or released (then ``released_at`` is set)."""
        ...

    async def discard(self, url: str) -> bool:
        """Drop a parked doc (deleted upstream), released or not; True when there was one."""
        ...

    async def count(self) -> int:
        """Docs waiting (released ones awaiting ``confirm`` are not counted)."""
        ...

    async def waiting_by_host(self) -> dict[str, int]:
        """Docs waiting, per host (as ``count``)."""
        ...

    async def waiting_on(self, host: str, limit: int = 100) -> list[ParkedDoc]:
        """Docs of ``host`` waiting (not released), the soonest deadline first, each with the media
        still missing (``pending``) and without ``doc_json`` (the webmaster's view needs neither)."""
        ...


def check_pending(pending: Iterable[str]) -> frozenset[str]:
    """The pending media as a set; an empty one is a caller's bug (nothing to wait for)."""
    media = frozenset(pending)
    if not media:
        raise ValueError("nothing pending: a document with all its media ready is published, not parked")
    return media
