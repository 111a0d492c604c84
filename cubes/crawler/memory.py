"""What a lane must not forget, saved and restored across owners (docs/architecture.md section 6).

``crawl.requests`` is keyed by host, so one crawler process owns a host's lane;
after a rebalance or a restart another one does. ``LaneMemory`` keeps what the
partner told the old owner in the lane store (``shared/stores/lanes.py``), so
the new owner never fetches sooner than the old one was told to wait:

* **restore** (``lane(host)``): the first time this process needs a host's
  lane, its saved state is applied before the lane grants anything — the
  pause deadline, the adapted rate and back-off count, the Crawl-delay, and
  the earliest next start;
* **save now** (``saved``, awaited by the handler before a result is
  published): when the lane's pause deadline moved later (a Retry-After, a 429
  back-off) or its Crawl-delay changed — what must survive even if this
  process is killed the next moment;
* **save soon** (``flush``, every ``runtime.status_interval_s`` from the
  report timer, and at stop): lanes whose adapted rate or latency changed —
  soft state, a few seconds stale at worst.

Lane times are monotonic (``lanes.py``); the store holds wall-clock epoch
seconds, converted with this process's clock. A store that cannot be reached
costs the memory, never the request: the lane goes on with what it has (its
own pause still holds), and the failure is logged.
"""

from __future__ import annotations

import logging

from cubes.crawler.lanes import Lane, Lanes
from cubes.crawler.policy import PolicyState
from shared.clock import Clock
from shared.errors import TurbocubesError
from shared.stores.lanes import LaneState, LaneStore

__all__ = ["LaneMemory"]

log = logging.getLogger(__name__)


class LaneMemory:
    def __init__(self, lanes: Lanes, store: LaneStore | None, clock: Clock) -> None:
        self.lanes = lanes
        self.store = store
        self.clock = clock
        #: hosts whose soft state changed since their last save
        self._dirty: set[str] = set()
        #: what each lane looked like when last saved (pause deadline, Crawl-delay), to see what changed
        self._saved: dict[str, tuple[float, float]] = {}
        #: saves and restores, for the status page and the tests
        self.restored = 0
        self.saves = 0

    def _offset(self) -> float:
        """Add to a monotonic time to get the wall-clock time (this process's clocks, now)."""
        return self.clock.time() - self.clock.monotonic()

    async def lane(self, host: str) -> Lane:
        """The host's lane; the first time this process needs it, with the state its last owner saved."""
        known = self.lanes.peek(host)
        if known is not None or self.store is None:
            return known or self.lanes.get(host)
        try:
            state = await self.store.get_lane(host.lower())
        except TurbocubesError as exc:
            log.warning("lane state of %s not read (%s): going on with a fresh lane", host, exc.message)
            state = None
        known = self.lanes.peek(host)  # another request of the host restored it meanwhile
        if known is not None:
            return known
        lane = self.lanes.get(host)
        if state is not None:
            self._apply(lane, state)
            self.restored += 1
        self._saved[lane.host] = (lane.policy.paused_until, lane.crawl_delay)
        return lane

    def _apply(self, lane: Lane, s: LaneState) -> None:
        to_mono = -self._offset()
        lane.policy = PolicyState(
            rate=min(max(s.rate, 0.0) or lane.policy.rate, lane.limits.ceiling),
            paused_until=max(lane.policy.paused_until, s.paused_until + to_mono),
            incidents=s.incidents,
            last_incident_at=None if s.last_incident_at is None else s.last_incident_at + to_mono,
            latency_avg_s=s.latency_avg_s,
        )
        lane.pause_reason = s.pause_reason
        # a delay saved before the cap was lowered is held to it too
        lane.crawl_delay = max(lane.crawl_delay, min(s.crawl_delay, lane.max_crawl_delay))
        # the earliest next start the old owner allowed: the bucket's next slot is not before it
        lane.tat = max(lane.tat, s.not_before + to_mono + (lane.effective_burst - 1) * lane.interval)

    def state_of(self, lane: Lane) -> LaneState:
        to_wall = self._offset()
        now = self.clock.monotonic()
        nxt = lane.next_allowed_at(now)
        nxt = now if nxt == float("inf") else nxt
        p = lane.policy
        return LaneState(
            host=lane.host,
            paused_until=p.paused_until + to_wall if p.paused_until > now else 0.0,
            pause_reason=lane.pause_reason if p.paused_until > now else "",
            rate=p.rate,
            incidents=p.incidents,
            last_incident_at=None if p.last_incident_at is None else p.last_incident_at + to_wall,
            latency_avg_s=p.latency_avg_s,
            crawl_delay=lane.crawl_delay,
            not_before=nxt + to_wall,
            updated_at=self.clock.time(),
        )

    async def saved(self, lane: Lane) -> None:
        """After a response: save at once what must outlive this process, note the rest for ``flush``."""
        before = self._saved.get(lane.host, (0.0, 0.0))
        now = (lane.policy.paused_until, lane.crawl_delay)
        if now[0] > before[0] or now[1] != before[1]:
            await self._put([lane])
        else:
            self._dirty.add(lane.host)

    async def flush(self) -> int:
        """Save the lanes whose soft state changed; returns how many."""
        hosts, self._dirty = self._dirty, set()
        lanes = [lane for h in hosts if (lane := self.lanes.peek(h)) is not None]
        if len(self._saved) > 2 * len(self.lanes) + 1000:  # lanes forgotten (idle eviction): forget them here too
            self._saved = {h: v for h, v in self._saved.items() if self.lanes.peek(h) is not None}
        if lanes:
            await self._put(lanes)
        return len(lanes)

    async def _put(self, lanes: list[Lane]) -> None:
        if self.store is None:
            return
        try:
            await self.store.put_lanes([self.state_of(lane) for lane in lanes])
        except TurbocubesError as exc:
            self._dirty.update(lane.host for lane in lanes)  # tried again at the next flush
            log.warning("lane state of %d host(s) not saved (%s)", len(lanes), exc.message)
            return
        self.saves += len(lanes)
        for lane in lanes:
            self._saved[lane.host] = (lane.policy.paused_until, lane.crawl_delay)
            self._dirty.discard(lane.host)
