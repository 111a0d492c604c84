"""The hash store's contract: dedupe hashes, URL ownership, feed-item guids (docs/architecture.md section 4).

The ``HashStore`` Protocol, its rows, and the decisions both engines take
inside their transaction (``next_version``, ``claim_outcome`` and their batch
forms ``plan_hashes``, ``plan_claims``), so the engines decide alike. The
statements both engines share are in ``sql/hashes.py``; the read-modify-write
methods are per engine (``sqlite/hashes.py``, ``postgres/hashes.py``), since
their atomicity is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple, Protocol

from shared.stores.codec import now_us

__all__ = [
    "ClaimOutcome",
    "ClaimPlan",
    "HashCheck",
    "HashEntry",
    "HashPlan",
    "HashStore",
    "Owner",
    "claim_outcome",
    "next_version",
    "plan_claims",
    "plan_hashes",
]


class ClaimOutcome(StrEnum):
    claimed = "claimed"  # nobody owned the URL; the claimer owns it now
    owned = "owned"  # the claimer owned it already (priority refreshed)
    taken_over = "taken_over"  # the claimer's priority is higher than the owner's: it owns it now
    outranked = "outranked"  # another source with an equal or higher priority owns it: nothing changed


class HashCheck(NamedTuple):
    changed: bool  # new or different content: the parser publishes it
    version: int  # the version to publish (the stored one when unchanged)


@dataclass(frozen=True, slots=True)
class HashEntry:
    source_id: str
    url: str
    content_hash: str
    version: int
    updated_at: datetime
    #: when the body that recorded this hash was read from its source (a fetch's ``fetched_at``, an
    #: upload's ``received_at``): the identity of that read, so that another attempt at the same fetch
    #: knows what an earlier one already published (None: recorded without one)
    seen_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Owner:
    url: str
    source_id: str
    priority: int  # higher wins (``shared.messages.SOURCE_PRIORITY``)
    claimed_at: datetime


class HashStore(Protocol):
    """Content hashes per (source, URL) for the parser's dedupe, URL ownership and guids."""

    async def check_and_set(
        self,
        source_id: str,
        url: str,
        content_hash: str,
        *,
        now: datetime | None = None,
        seen_at: datetime | None = None,
    ) -> HashCheck:
        """Atomically compare and store. Unchanged -> ``(False, stored version)``, nothing written.

        Changed or new -> ``(True, v)`` with ``v = max(highest version of url over
        all sources + 1, now in microseconds since the epoch)``: strictly increasing per URL; the
        entry's ``seen_at`` is ``seen_at`` (the read of the source that recorded it).
        """
        ...

    async def get(self, source_id: str, url: str) -> HashEntry | None: ...

    async def forget(self, source_id: str, url: str) -> bool:
        """Drop the hash (the item left the feed); True when there was one."""
        ...

    async def urls_of_source(self, source_id: str, limit: int | None = None, *, after: str | None = None) -> list[str]:
        """The URLs ``source_id`` has a hash for, in URL order (the first ``limit`` when given; only those
        past ``after`` when given: a page at a time, for a source of a million URLs)."""
        ...

    async def claim(self, url: str, source_id: str, priority: int, *, now: datetime | None = None) -> ClaimOutcome:
        """Take ownership of ``url``: a strictly higher priority takes it over; ties keep the owner."""
        ...

    async def owner(self, url: str) -> Owner | None: ...

    async def release(self, url: str, source_id: str) -> bool:
        """Give up ownership (only if ``source_id`` owns it); True when it did."""
        ...

    async def remember_guid(self, source_id: str, guid: str, url: str) -> None:
        """Map a feed item's guid to its URL (the latest mapping wins)."""
        ...

    async def url_for_guid(self, source_id: str, guid: str) -> str | None: ...

    # Batch forms, for a catalog of 100,000 offers: one round trip (or transaction) per call instead of
    # one per item. Each is equivalent to calling its one-by-one method for every item in order. Keep a
    # call to a few thousand items: PostgreSQL takes one advisory lock per URL for the transaction, and
    # its lock table holds ``max_locks_per_transaction`` x connections entries (6,400 by default).

    async def get_many(self, source_id: str, urls: Iterable[str]) -> dict[str, HashEntry]:
        """``get`` for many URLs: the entries that exist, by URL (missing URLs are absent)."""
        ...

    async def check_and_set_many(
        self,
        source_id: str,
        items: Sequence[tuple[str, str]],
        *,
        now: datetime | None = None,
        seen_at: datetime | None = None,
    ) -> list[HashCheck]:
        """``check_and_set`` of every ``(url, content_hash)`` in order, in one transaction; results in order.

        The same version rule: a changed URL gets ``max(highest version over all sources + 1, now)``,
        so versions stay strictly increasing per URL (a URL twice in ``items`` gets two versions).
        """
        ...

    async def owners(self, urls: Iterable[str]) -> dict[str, Owner]:
        """``owner`` for many URLs: the owned ones, by URL."""
        ...

    async def claim_many(
        self, urls: Sequence[str], source_id: str, priority: int, *, now: datetime | None = None
    ) -> list[ClaimOutcome]:
        """``claim`` of every URL in order, in one transaction; outcomes in order."""
        ...

    async def remember_guids(self, source_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """``remember_guid`` of every ``(guid, url)`` in order (the last mapping of a guid wins)."""
        ...

    async def urls_for_guids(self, source_id: str, guids: Iterable[str]) -> dict[str, str]:
        """``url_for_guid`` for many guids: the known ones, guid -> URL."""
        ...


# --------------------------------------------------------------------------- rules both engines apply


def claim_outcome(prev: tuple[str, int] | None, source_id: str, priority: int) -> ClaimOutcome:
    """Who owns a URL after ``source_id`` claims it with ``priority``, given the (owner, priority)."""
    if prev is None:
        return ClaimOutcome.claimed
    owner, owner_priority = prev
    if owner == source_id:
        return ClaimOutcome.owned
    return ClaimOutcome.taken_over if priority > owner_priority else ClaimOutcome.outranked


def next_version(highest: int | None, now: datetime | None) -> int:
    """A version above every stored one for the URL and, normally, the current time in microseconds.

    Time-based so that a version stays monotonic even if the hash store is lost.
    """
    return max((highest or 0) + 1, now_us(now))


@dataclass
class HashPlan:
    """What ``check_and_set_many`` answers and the rows it writes (one per URL: the last state)."""

    results: list[HashCheck] = field(default_factory=list)
    #: url -> (source_id, url, content_hash, version, updated_at, seen_at), ready to bind
    rows: dict[str, tuple[str, str, str, int, int, int | None]] = field(default_factory=dict)


def plan_hashes(
    source_id: str,
    items: Sequence[tuple[str, str]],
    mine: dict[str, tuple[str, int]],
    highest: dict[str, int],
    now: datetime | None,
    stamp: int,
    seen: int | None = None,
) -> HashPlan:
    """``check_and_set`` of each item in order, given what is stored (``mine``: url -> (hash, version)
    of this source; ``highest``: url -> highest version over all sources). Both dicts are updated as
    the items are applied, so a URL that comes twice is decided as the one-by-one calls would."""
    plan = HashPlan()
    for url, content_hash in items:
        prev = mine.get(url)
        if prev is not None and prev[0] == content_hash:
            plan.results.append(HashCheck(False, prev[1]))
            continue
        version = next_version(highest.get(url), now)
        mine[url] = (content_hash, version)
        highest[url] = version  # next_version is above every stored version of the URL
        plan.rows[url] = (source_id, url, content_hash, version, stamp, seen)
        plan.results.append(HashCheck(True, version))
    return plan


@dataclass
class ClaimPlan:
    results: list[ClaimOutcome] = field(default_factory=list)
    #: url -> (url, source_id, priority, claimed_at) of the URLs whose owner row is (re)written
    rows: dict[str, tuple[str, str, int, int]] = field(default_factory=dict)


def plan_claims(
    urls: Sequence[str], source_id: str, priority: int, owners: dict[str, tuple[str, int]], stamp: int
) -> ClaimPlan:
    """``claim`` of each URL in order, given the stored owners (url -> (source, priority)), updated as it goes."""
    plan = ClaimPlan()
    for url in urls:
        outcome = claim_outcome(owners.get(url), source_id, priority)
        if outcome is not ClaimOutcome.outranked:
            owners[url] = (source_id, priority)
            plan.rows[url] = (url, source_id, priority, stamp)
        plan.results.append(outcome)
    return plan
