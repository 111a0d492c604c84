"""The crawl-lane store's contract: what a host's lane must not forget (docs/architecture.md section 6).

A host's lane lives in the one crawler process that owns the host's partition
of ``crawl.requests``. What the partner told that process — wait until this
deadline (Retry-After, a 429 back-off), go this slow (the adapted rate),
leave this much between requests (Crawl-delay), and what its robots.txt says
— is kept here, so the process that owns the host after a rebalance or a
restart never fetches sooner than the old one was told to wait, and does not
ask for robots.txt again before it is due.

A store, not a compacted topic: a new owner needs one host's state at its
first request for that host — a point read — rather than replaying a whole
partition's changelog before it may start; robots.txt bodies (up to 512 KiB)
do not belong in log records; and the writes are rare (a pause, a robots.txt a
day, the adapted rate every few seconds at most), so the store's load is
small. Times are wall-clock epoch seconds: monotonic clocks differ per
process. One implementation for both engines: ``sql/lanes.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["LaneState", "LaneStore", "RobotsRecord"]


@dataclass(frozen=True, slots=True)
class LaneState:
    """A host's politeness state, as its owner last saved it (epoch seconds)."""

    host: str
    #: no request before this (Retry-After, a 429 back-off); only ever moves later in the store
    paused_until: float
    pause_reason: str
    #: the policy's adapted requests per second, and what drives it
    rate: float
    incidents: int
    last_incident_at: float | None
    latency_avg_s: float | None
    #: robots.txt's Crawl-delay applied to the lane (0: none)
    crawl_delay: float
    #: the earliest next start the lane allowed when saved (the bucket, the Crawl-delay spacing)
    not_before: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class RobotsRecord:
    """What an origin's robots.txt said, and until when that holds (epoch seconds)."""

    origin: str
    fetched_at: float
    expires_at: float
    #: None: ``body`` is the robots.txt to parse; True / False: allow / disallow everything
    allow_all: bool | None
    body: str | None
    #: the outcome to report when disallowed (a FetchStatus value) and why
    status: str
    reason: str


class LaneStore(Protocol):
    async def get_lane(self, host: str) -> LaneState | None: ...

    async def put_lanes(self, states: Sequence[LaneState]) -> None:
        """Save states; an older save never overwrites a newer one, and a pause is never shortened."""
        ...

    async def get_robots(self, origin: str) -> RobotsRecord | None: ...

    async def put_robots(self, record: RobotsRecord) -> None:
        """Save an origin's robots.txt; an older fetch never overwrites a newer one."""
        ...
