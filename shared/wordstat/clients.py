"""One count per client, query and day, without keeping who the client was (docs/architecture.md section 3, "wordstat").

A search is counted once per client, query and UTC day: the frontend sends, with
the search, ``client_key(day_key, address, query)`` — an HMAC of the client's
address and the query under a key of that day — and the store counts a key once
(``ws_clients``, kept two days). So searching a query again and again from one
address adds one search a day, not one a request: padding a guessed query over
the privacy threshold costs as many distinct addresses (or days) as it is short.

Nothing here keeps the address: the key is random, one per UTC day
(``WordstatStore.day_key``), and dropped with the day's client keys two days on,
after which no one, the database's owner included, can tell whose a key was. The
query is in the HMAC, so one client's searches of a day are not linked to each
other either. A client is what the throttles count (``shared.attempts.client_key``): an
IPv6 client is its /64, an IPv4-mapped IPv6 address its IPv4 address.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from datetime import UTC, datetime
from typing import Protocol

from shared import attempts

__all__ = ["CLIENT_KEY_CHARS", "DAYS_KEPT", "DayKeys", "client_key", "day_of"]

#: hex characters of a client key (128 bits: no two clients of a day collide in practice)
CLIENT_KEY_CHARS = 32
#: a day's key and client keys are kept this many days (today and yesterday: a search counted late)
DAYS_KEPT = 2


def day_of(at: datetime) -> int:
    """The UTC day of a time as ``YYYYMMDD``."""
    utc = at.astimezone(UTC)
    return utc.year * 10_000 + utc.month * 100 + utc.day


def client_key(day_key: bytes, address: str | None, query: str) -> str:
    """The key one client's search of ``query`` is counted under on the day of ``day_key``."""
    message = f"{attempts.client_key(address) if address else ''}\n{query}".encode()
    return hmac.new(day_key, message, hashlib.sha256).hexdigest()[:CLIENT_KEY_CHARS]


class _DayKeyStore(Protocol):
    async def day_key(self, day: int) -> bytes: ...


class DayKeys:
    """Each day's key, read from the store once a day per process (the frontend's, before a search is sent)."""

    def __init__(self, store: _DayKeyStore) -> None:
        self._store = store
        self._day = 0
        self._key = b""
        self._lock = asyncio.Lock()

    async def client_key(self, at: datetime, address: str | None, query: str) -> str:
        """The key of this client's search of ``query`` at ``at``."""
        day = day_of(at)
        if day != self._day:
            async with self._lock:
                if day != self._day:
                    self._key, self._day = await self._store.day_key(day), day
        return client_key(self._key, address, query)
