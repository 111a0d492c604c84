"""Crawl lanes: one small politeness state per host (docs/architecture.md section 6; docs/conventions.md rule 5).

A ``Lane`` is a token bucket (``rate`` per second, ``burst``) kept as GCRA
(one number: the theoretical arrival time ``tat``), a cap on concurrent
requests, the robots.txt ``Crawl-delay`` (a minimum spacing, which also turns
bursts off), a pause (Retry-After, 429 back-off) and the adaptive
``PolicyState``. Time comes from an injected ``Clock``, so tests drive a
``ManualClock`` and assert the spacing exactly.

Two rules decide when the next request may start:

1. **the bucket** (GCRA on start times): starts are ``1/rate`` apart, with
   up to ``burst`` at once. A start that is late (the event loop woke us
   late) does not push the schedule back, up to ``LATE_TOLERANCE_S``: the
   next start keeps its slot, so scheduling jitter is not lost throughput
   (the long-run rate stays ``rate``; the window below still holds);
2. **the window, counted from answers**: at most ``M`` requests may reach the
   partner in any window of ``W`` seconds — ``W`` = the whole requests per
   second / rate (a second, give or take) and ``M`` = those whole requests +
   burst - 1; below 1/s ``W`` is one interval and ``M`` the burst; under a
   Crawl-delay ``W`` is the delay and ``M`` = 1. A request reaches the partner at
   some moment between its start and its answer (queues, slow connects, a
   busy network), so a new request may start only when fewer than ``M``
   requests are in flight or were answered within the last ``W``. This keeps
   the partner's own view — arrivals — within the rate, which spacing starts
   alone cannot (jitter squeezes arrivals together), and costs one response
   time per ``M`` requests, not one per request.

``await lane.acquire(max_wait)`` waits for a slot and takes it, or returns
False at once when the lane cannot start a request within ``max_wait``
seconds (paused for an hour, say): the caller then reports ``throttled``
instead of holding a worker for the whole pause. Waiters are served first
come, first served (``acquire``). ``lane.release(signal)`` gives the slot back
and feeds the policy.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import OrderedDict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from cubes.crawler.policy import PolicyLimits, PolicyState, Signal, adapt
from shared.clock import Clock, SystemClock
from shared.config import CrawlerConfig, HostLane

__all__ = ["Lane", "Lanes"]

#: how late a start may be without moving the schedule (event-loop wake-up jitter under load is
#: tens of ms; a tenth of a second covers it), and at most this share of an interval
LATE_TOLERANCE_S = 0.1
LATE_TOLERANCE_SHARE = 0.5
#: wake-up grid of waiting lanes on the real clock: hundreds of lanes due within a few ms of each
#: other are woken together, which saves an event-loop pass per request at a cost of <= 5 ms
WAKE_GRID_S = 0.005
#: idle lanes kept in memory; the oldest idle one is forgotten past this (its state is soft anyway)
MAX_IDLE_LANES = 50_000
#: lanes one eviction looks at at most (each new lane past the cap makes one)
_EVICT_LOOK = 16


@dataclass(eq=False)
class Lane:
    host: str
    clock: Clock
    limits: PolicyLimits
    burst: int = 1
    concurrency: int = 1
    #: robots.txt Crawl-delay in seconds (0 = none), at most ``max_crawl_delay``
    crawl_delay: float = 0.0
    #: the longest Crawl-delay honoured (``crawler.max_crawl_delay_s``): a robots.txt asking for a day
    #: between requests would let one feed poll a day through
    max_crawl_delay: float = math.inf
    #: the Crawl-delay robots.txt asked for, before the cap (0 = none, or not known since a restart)
    crawl_delay_asked: float = 0.0
    policy: PolicyState = field(init=False)
    #: GCRA theoretical arrival time: a request may start at ``tat - (burst - 1) * interval``
    tat: float = field(init=False)
    #: when the last request started
    last_start: float | None = None
    #: answer times of the latest requests (the window rule; newest last)
    answers: deque[float] = field(default_factory=deque)
    in_flight: int = 0
    started: int = 0
    #: why the lane was last paused, for the status page: the partner's Retry-After or our back-off
    pause_reason: str = ""
    rng: random.Random = field(default_factory=random.Random)
    _waiters: list[asyncio.Future[None]] = field(default_factory=list)
    #: acquirers waiting, in arrival order: only the first may take a slot (``acquire``)
    _line: deque[object] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.policy = PolicyState(rate=self.limits.ceiling)
        self.tat = self.clock.monotonic()

    # ------------------------------------------------------------------ state

    @property
    def rate(self) -> float:
        """The lane's current pace: the policy's rate, slowed further by Crawl-delay."""
        if self.crawl_delay > 0:
            return min(self.policy.rate, 1.0 / self.crawl_delay)
        return self.policy.rate

    @property
    def paused_until(self) -> float:
        return self.policy.paused_until

    @property
    def interval(self) -> float:
        """Seconds between two requests at the current pace."""
        return 1.0 / self.rate

    @property
    def effective_burst(self) -> int:
        # Crawl-delay means "this long between requests": no bursts on top of it
        return 1 if self.crawl_delay > 0 else self.burst

    @property
    def _window_base(self) -> int:
        # whole requests per window: the window is one second for rates of 1/s and more,
        # and one interval below that (or under a Crawl-delay)
        return 1 if self.crawl_delay > 0 else max(1, int(self.rate))

    @property
    def window_requests(self) -> int:
        """``M``: requests allowed to reach the partner in any window of ``window_s`` seconds."""
        return self._window_base + self.effective_burst - 1

    @property
    def window_s(self) -> float:
        return self._window_base * self.interval

    def forgettable(self, now: float) -> bool:
        """Nothing to remember: no request in flight, no pause, no incident (its lane store row,
        if any, keeps the rest)."""
        return self.in_flight == 0 and self.paused_until <= now and self.policy.incidents == 0

    def next_allowed_at(self, now: float | None = None) -> float:
        """The earliest moment a request may start; ``inf`` while only an answer can free the window.

        The concurrency cap is not included (a release frees it).
        """
        now = self.clock.monotonic() if now is None else now
        at = max(now, self.policy.paused_until, self.tat - (self.effective_burst - 1) * self.interval)
        m = self.window_requests
        free = m - self.in_flight  # answers that may still lie inside the window
        if free <= 0:
            return float("inf")
        if len(self.answers) >= free:
            at = max(at, self.answers[-free] + self.window_s)
        return at

    def set_crawl_delay(self, seconds: float | None) -> None:
        """Apply robots.txt's Crawl-delay; called right after robots.txt was answered, so the delay
        also separates that robots.txt request from the next one. A delay over ``max_crawl_delay``
        is honoured up to it (``crawl_delay_capped`` says what was asked)."""
        self.crawl_delay_asked = max(0.0, float(seconds or 0.0))
        self.crawl_delay = min(self.crawl_delay_asked, self.max_crawl_delay)
        if self.crawl_delay > 0:
            self.tat = max(self.tat, self.clock.monotonic() + self.crawl_delay)
        self._notify()

    @property
    def crawl_delay_capped(self) -> float | None:
        """The Crawl-delay robots.txt asked for when it was more than we honour, else None."""
        return self.crawl_delay_asked if self.crawl_delay_asked > self.crawl_delay else None

    # ------------------------------------------------------------------ slots

    def try_start(self, now: float | None = None) -> bool:
        """Take a request slot if the lane grants one right now (``acquire`` without the wait)."""
        now = self.clock.monotonic() if now is None else now
        if self.next_allowed_at(now) > now or self.in_flight >= self.concurrency:
            return False
        slack = min(LATE_TOLERANCE_S, LATE_TOLERANCE_SHARE * self.interval)
        self.tat = max(self.tat, now - slack) + self.interval
        self.in_flight += 1
        self.started += 1
        self.last_start = now
        return True

    async def acquire(self, max_wait: float | None = None) -> bool:
        """Wait for a request slot and take it; False (nothing taken) if none within ``max_wait`` s.

        First come, first served: a request that finds others waiting queues behind them. Without
        the line, the request whose fetch had just ended took each new slot before the waiters woke
        (no suspension between its release and its next acquire), so with two of a host's requests
        at once one kept its turn while the other (a feed's poll) waited behind dozens of images.
        """
        deadline = None if max_wait is None else self.clock.monotonic() + max_wait
        if not self._line and self.try_start():
            return True
        ticket = object()
        self._line.append(ticket)
        try:
            while True:
                now = self.clock.monotonic()
                first = self._line[0] is ticket
                if first and self.try_start(now):
                    return True
                at = self.next_allowed_at(now)
                if first and at != float("inf") and at > now:
                    # a known moment: refuse at once if it is past the deadline, else sleep until then
                    if deadline is not None and at > deadline:
                        return False
                    wait: float | None = at - now
                else:
                    # only a release, or the ones ahead in line taking their slots, can help
                    if deadline is not None and at != float("inf") and at > deadline:
                        return False  # not even the lane's next slot comes in time
                    wait = None if deadline is None else deadline - now
                    if wait is not None and wait <= 0:
                        return False
                await self._wait(wait)
        finally:
            first = self._line[0] is ticket
            self._line.remove(ticket)
            if first and self._line:
                self._notify()  # the next in line may go now (one behind it leaving changes nothing)

    async def _wait(self, seconds: float | None) -> None:
        """Sleep on the clock for ``seconds``, or less if the lane changes (a release, a new pause)."""
        # one future per waiter, woken by ``_notify``: cheaper than a task per Event.wait,
        # which matters with hundreds of lanes waking many times a second
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        sleeper: asyncio.Future[None] | asyncio.TimerHandle | None = None
        if seconds is not None and isinstance(self.clock, SystemClock):
            # the real clock: a bare timer, no task (SystemClock.sleep is asyncio.sleep anyway),
            # rounded *up* to a grid so lanes due at nearly the same moment wake in one loop pass
            # (never early; the late start is absorbed by LATE_TOLERANCE_S)
            when = math.ceil((loop.time() + max(0.0, seconds)) / WAKE_GRID_S) * WAKE_GRID_S
            sleeper = loop.call_at(when, _wake, waiter)
        elif seconds is not None:
            sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
            sleeper.add_done_callback(lambda _: _wake(waiter))
        try:
            await waiter
        finally:
            if sleeper is not None:
                sleeper.cancel()
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def _notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for w in waiters:
            _wake(w)

    def release(self, signal: Signal | None = None) -> None:
        """Give a slot back; ``signal`` (what the response said) adapts the lane's pace."""
        now = self.clock.monotonic()
        self.in_flight = max(0, self.in_flight - 1)
        if signal is not None:
            self.observe(signal, now)
        # the answer is the last moment the request may have reached the partner (the window rule)
        self.answers.append(now)
        while len(self.answers) > max(self.window_requests, self.burst):
            self.answers.popleft()
        self._notify()

    def observe(self, signal: Signal, now: float | None = None) -> None:
        now = self.clock.monotonic() if now is None else now
        before = self.policy.rate
        paused_before = self.policy.paused_until
        self.policy = adapt(self.policy, signal, now, self.limits, jitter=self.rng.random())
        if self.policy.paused_until > paused_before:
            self.pause_reason = (
                f"Retry-After {signal.retry_after_s:.0f} s ({signal.kind.value})"
                if signal.retry_after_s is not None
                else f"back-off after 429 (incident {self.policy.incidents})"
            )
        if self.policy.rate < before and self.last_start is not None:
            # a slow-down takes effect now: the next slot was booked at the old, faster pace
            self.tat = max(self.tat, self.last_start + self.interval)
        self._notify()

    def snapshot(self) -> dict[str, Any]:
        now = self.clock.monotonic()
        return {
            "host": self.host,
            "rate": round(self.rate, 4),
            "ceiling": self.limits.ceiling,
            "in_flight": self.in_flight,
            "started": self.started,
            "paused_for_s": round(max(0.0, self.policy.paused_until - now), 3),
            "crawl_delay": self.crawl_delay,
            "incidents": self.policy.incidents,
        }


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


#: a host with no entry of its own in ``crawler.host_overrides``: every limit the default
_DEFAULTS = HostLane()


class Lanes:
    """Every host's lane, created on first use from ``crawler`` settings and ``host_overrides``."""

    def __init__(self, config: CrawlerConfig, clock: Clock, *, seed: int | None = None) -> None:
        self.config = config
        self.clock = clock
        self._lanes: OrderedDict[str, Lane] = OrderedDict()
        self._rng = random.Random(seed)

    def get(self, host: str) -> Lane:
        host = host.lower()
        lane = self._lanes.get(host)
        if lane is None:
            lane = self._new(host)
            self._lanes[host] = lane
            self._evict(keep=host)
        else:
            self._lanes.move_to_end(host)
        return lane

    def peek(self, host: str) -> Lane | None:
        """The host's lane if this process has one (nothing created, the order of use untouched)."""
        return self._lanes.get(host.lower())

    def concurrency_for(self, host: str) -> int:
        """The concurrency cap a lane of ``host`` is made with (its override's, or the default);
        the runtime runs that many of the host's requests at once (``Cube.key_width``)."""
        o = self._override(host.lower())
        return o.concurrency or self.config.concurrency

    def _new(self, host: str) -> Lane:
        c = self.config
        o = self._override(host)
        return Lane(
            host=host,
            clock=self.clock,
            limits=PolicyLimits(configured_rate=o.rate or c.rate, max_rate=o.max_rate or c.max_rate),
            burst=o.burst or c.burst,
            concurrency=self.concurrency_for(host),
            max_crawl_delay=c.max_crawl_delay_s,
            # one generator for every lane: a Random of its own costs a lane ~2.9 KB (the Mersenne
            # Twister's state), two thirds of an idle lane (bench/scale.py measured it)
            rng=self._rng,
        )

    def _override(self, host: str) -> HostLane:
        """The host's own entry of ``crawler.host_overrides``, else its nearest ``*.`` domain's, else none."""
        found = self.config.host_overrides.get(host)
        if found is not None:
            return found
        parts = host.split(".")
        for i in range(1, len(parts)):
            found = self.config.host_overrides.get("*." + ".".join(parts[i:]))
            if found is not None:
                return found
        return _DEFAULTS

    def _evict(self, keep: str) -> None:
        """Forget the least recently used idle lanes past ``MAX_IDLE_LANES``, looking at a few.

        Oldest first; a lane that must be kept (a request in flight, a pause, incidents to
        remember) goes to the back, so the next call does not look at it again; ``keep``, the lane
        just made for a request, stays even when every other one is busy. This used to copy
        every lane for every new host past the cap, quadratic: at 100k hosts (bench/scale.py, 1M
        feeds) the crawler spent its time here.
        """
        now = self.clock.monotonic()
        looked = 0
        while len(self._lanes) > MAX_IDLE_LANES and looked < _EVICT_LOOK:
            host, lane = next(iter(self._lanes.items()))
            looked += 1
            if host == keep:
                break  # every older lane went to the back: none is forgettable
            if lane.forgettable(now):
                del self._lanes[host]
            else:
                self._lanes.move_to_end(host)

    def __len__(self) -> int:
        return len(self._lanes)

    def __iter__(self) -> Iterator[Lane]:
        return iter(list(self._lanes.values()))

    def status(self) -> dict[str, Any]:
        return {"lanes": len(self._lanes), "busy": [ln.snapshot() for ln in self if ln.in_flight]}
