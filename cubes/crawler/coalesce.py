"""Fetch once, distribute to all (docs/architecture.md section 6).

Identical requests (same kind, URL and conditional validators) share one
fetch:

* **in flight** — a request arriving while the URL is being fetched joins
  that fetch; the leader's one result carries every requester that joined;
* **fresh** — within ``window_s`` after the fetch, a request is answered from
  the remembered result with no new request to the partner. Requesters that
  were already served get nothing new (a feed asked for twice lands once);
  new requesters get a copy carrying just them, so each asker is answered.
  A requester served already that asks again is fetched for again (a WebSub
  push, an operator's "fetch now": they want what is there now) — unless the
  request names the same scheduled poll (``due_at``, the scheduler's due time)
  as the one served: that is the same poll emitted twice (a scheduler replica
  taking over the partition of one that died between publishing it and
  recording it), and it gets nothing, so a failover costs the partner no
  request.

A webmaster's "fetch now" or feed check (a requester ``fetch:<id>`` / ``check:<task>``,
``shared.webmaster.feeds.FRESH_PREFIXES``) is never answered from a remembered result, even as a new
requester: they fixed the feed a moment ago and want to see the fix. It may still join a fetch in
flight (started at most one request ago).

The remembered results are bounded by a byte budget (bodies inside results
are at most ``crawler.inline_body_max``; larger ones are blob references).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from shared.clock import Clock
from shared.messages import CrawlResult, FetchStatus
from shared.webmaster.feeds import FRESH_PREFIXES

__all__ = ["Coalescer", "Share"]

#: bytes of remembered result bodies kept for the freshness window
MEMORY_BUDGET = 64 * 1024 * 1024
#: outcomes that say "not now" rather than "this is the answer": a requester asking again (a cdn
#: re-order after a 503, say) must reach the partner again, not get the remembered failure
_NOT_REMEMBERED = frozenset(
    {
        FetchStatus.throttled,
        FetchStatus.http_5xx,
        FetchStatus.timeout,
        FetchStatus.connect_error,
        FetchStatus.dns_error,
    }
)

Key = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Share:
    """A request's part of a (possibly shared) fetch."""

    #: None: nothing to publish (another request's result already carries these requesters)
    result: CrawlResult | None
    #: True when this request started the fetch
    leader: bool = False


DueAt = datetime | None


@dataclass(slots=True)
class _Flight:
    future: asyncio.Future[CrawlResult]
    requesters: list[str] = field(default_factory=list)
    #: requester -> the scheduled poll it asked for (only requesters that named one)
    polls: dict[str, datetime] = field(default_factory=dict)


@dataclass(slots=True)
class _Fresh:
    result: CrawlResult
    expires_at: float
    served: set[str]
    cost: int
    polls: dict[str, datetime] = field(default_factory=dict)


class Coalescer:
    def __init__(self, clock: Clock, window_s: float, *, budget: int = MEMORY_BUDGET) -> None:
        self.clock = clock
        self.window_s = window_s
        self.budget = budget
        self._flights: dict[Key, _Flight] = {}
        self._fresh: OrderedDict[Key, _Fresh] = OrderedDict()
        self._used = 0

    async def run(
        self,
        key: Key,
        requesters: Sequence[str],
        fetch: Callable[[], Awaitable[CrawlResult]],
        *,
        due_at: DueAt = None,
    ) -> Share:
        """``fetch()`` unless an identical fetch is in flight or fresh; see the module docstring."""
        flight = self._flights.get(key)
        while flight is not None:
            flight.requesters.extend(r for r in requesters if r not in flight.requesters)
            if due_at is not None:
                flight.polls.update(dict.fromkeys(requesters, due_at))
            await asyncio.wait({flight.future})  # never raises, and our own cancellation still works
            if not flight.future.cancelled():
                flight.future.result()  # the leader's error is ours too
                return Share(None)
            # the leader was cancelled (a handler timeout): this request fetches itself
            flight = self._flights.get(key)
        fresh = self._lookup(key)
        if fresh is not None and any(r.startswith(FRESH_PREFIXES) for r in requesters):
            self._forget(key)  # "fetch now": what is there now (see the module docstring)
            fresh = None
        if fresh is not None:
            new = [r for r in dict.fromkeys(requesters) if r not in fresh.served]
            if new:
                fresh.served.update(new)
                if due_at is not None:
                    fresh.polls.update(dict.fromkeys(new, due_at))
                return Share(fresh.result.model_copy(update={"requesters": new}))
            if due_at is not None and all(fresh.polls.get(r) == due_at for r in requesters):
                return Share(None)  # the same scheduled poll emitted again: it was served
            # everyone asking was served already: they ask again on purpose (a WebSub push, an
            # operator's nudge): the remembered result is not what they want
            self._forget(key)
        flight = _Flight(asyncio.get_running_loop().create_future(), list(dict.fromkeys(requesters)))
        if due_at is not None:
            flight.polls.update(dict.fromkeys(requesters, due_at))
        self._flights[key] = flight
        try:
            result = await fetch()
        except asyncio.CancelledError:
            flight.future.cancel()
            raise
        except Exception as exc:
            flight.future.set_exception(exc)
            flight.future.exception()  # mark retrieved; joiners re-raise it themselves
            raise
        finally:
            # order matters: no await between the fetch's end and reading the requesters,
            # so nobody can join a flight whose result is already built
            del self._flights[key]
        if flight.requesters != result.requesters:  # someone joined: the one result carries them all
            result = result.model_copy(update={"requesters": flight.requesters})
        flight.future.set_result(result)
        self._remember(key, result, set(flight.requesters), flight.polls)
        return Share(result, leader=True)

    def _lookup(self, key: Key) -> _Fresh | None:
        fresh = self._fresh.get(key)
        if fresh is None:
            return None
        if fresh.expires_at <= self.clock.monotonic():
            self._forget(key)
            return None
        return fresh

    def _remember(self, key: Key, result: CrawlResult, served: set[str], polls: dict[str, datetime]) -> None:
        if result.status in _NOT_REMEMBERED or self.window_s <= 0:
            return
        self._forget(key)
        cost = len(result.body or b"") + 1024
        self._fresh[key] = _Fresh(result, self.clock.monotonic() + self.window_s, served, cost, polls)
        self._used += cost
        while self._used > self.budget and self._fresh:
            self._forget(next(iter(self._fresh)))

    def _forget(self, key: Key) -> None:
        gone = self._fresh.pop(key, None)
        if gone is not None:
            self._used -= gone.cost

    def __len__(self) -> int:
        return len(self._fresh)
