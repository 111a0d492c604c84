"""Graceful degradation under overload: the Throttling pattern (docs/architecture.md section 6).

Domain policy (what counts as low-value work is about crawl kinds and feed
formats), so it lives beside the cubes' shared models rather than in the
domain-free runtime; the two cubes that decide it, the scheduler and the
crawler, both call it, so it lives in ``shared/``.

When the pipeline falls behind, low-value work yields first, so that news
feeds and partner uploads keep their freshness; it resumes by itself when the
lag falls. Nothing is dropped: yielded work is delayed, never lost.

* **The measure**: consumer lag summed over the groups in
  ``runtime.overload_groups`` (parser, autoparser, media, cdn, kvwriter by
  default: the stages whose backlog means "the machine is busy"; the
  crawler's is paced by per-host politeness and would read a slow partner as
  overload). It comes from the ``cube:`` snapshots every process publishes
  (``shared/status.py``), so every watcher decides the same in one process
  or on a cluster.
* **Hysteresis**: overloaded once the lag reaches ``runtime.overload_lag``;
  normal again only when it falls under ``runtime.overload_resume_lag``, so
  the state does not flap around one threshold. ``overload_lag = 0`` turns it off.
* **Fail open**: with no fresh snapshot of those groups (snapshots stale, the
  store unreachable) nothing is measured and nothing yields: halting work on
  missing data would be worse than carrying on.
* **What yields** (``low_value``): autoparser page crawls (``crawl.requests``
  of kind ``page``) and the scheduled re-fetches of YML feeds (each re-parses a
  whole catalog). RSS / Atom / Turbo feeds, a feed's first fetch, images and
  partner uploads never yield.
* **Where**: the scheduler does not emit a yielding feed; it pushes the feed's
  next fetch ``DEFER_S`` ahead in the store, so it comes due again and is
  fetched once the lag falls. The crawler defers a page request already queued
  by raising ``Deferred`` (a ``TransientError`` with ``retry_after``): the
  runtime re-queues it on the cube's delayed-retry topic. A request is
  deferred at most ``runtime.max_attempts - 1`` times and then fetched anyway,
  so a long overload slows page crawling down to a trickle but never sends a
  page request to the DLQ.
* **Visible**: each watcher publishes ``overload:<cube>:<instance>`` (state,
  lag per group, thresholds, what yields, how much was deferred), which the
  status page shows, and the ``turbocubes_overloaded`` gauge.

Time comes from the injected ``Clock``; a test drives ``refresh()`` with a
``ManualClock`` and a store it fills itself.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import Counter, Gauge

from shared.clock import Clock, at
from shared.config import Settings
from shared.errors import StoreUnavailable, TransientError
from shared.messages import FULL_TEXT_PREFIX, CrawlKind, CrawlRequest
from shared.outages import OUTAGES
from shared.runtime.cube import Output, TimerContext
from shared.status import CUBE_PREFIX, OVERLOAD_PREFIX, instance_id, pipeline_lag, stamp
from shared.stores import Feed, StatusStore

__all__ = [
    "DEFER_S",
    "PAGE_CRAWLS",
    "YML_REFETCHES",
    "Deferred",
    "Hysteresis",
    "Overload",
    "low_value",
]

log = logging.getLogger(__name__)

#: how far a yielding YML re-fetch is pushed back, and a deferred page request waits, per round:
#: long enough not to churn the store and the retry topic, short enough that work resumes within
#: a minute of the lag falling (the runtime caps a retry's delay at ``backoff_cap_s`` anyway)
DEFER_S = 60.0

PAGE_CRAWLS = "autoparser page crawling"
YML_REFETCHES = "YML feed re-fetches"

OVERLOADED = Gauge("turbocubes_overloaded", "1 while low-value work yields to a lagging pipeline", ["cube"])
DEFERRED = Counter("turbocubes_overload_deferred_total", "Low-value work held back under overload", ["cube", "work"])


class Deferred(TransientError):
    """Low-value work held back while the pipeline is overloaded; the runtime retries it later."""

    def __init__(self, message: str, retry_after: float = DEFER_S) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def low_value(kind: CrawlKind, *, fmt: str | None = None, first: bool = False) -> str | None:
    """What kind of low-value work this is (it yields under overload), or None if it always flows."""
    if kind is CrawlKind.page:
        return PAGE_CRAWLS
    if kind is CrawlKind.feed and fmt == "yml" and not first:
        return YML_REFETCHES
    return None


@dataclass
class Hysteresis:
    """Two thresholds: on at ``high``, off under ``low``. ``high <= 0`` never turns on."""

    high: int
    low: int
    on: bool = False
    #: wall time of the last change (None: never changed)
    since: float | None = None

    def update(self, value: int | None, now: float) -> bool:
        if self.high <= 0 or value is None:
            on = False  # off, or nothing measured: fail open
        elif self.on:
            on = value >= self.low
        else:
            on = value >= self.high
        if on != self.on:
            self.on = on
            self.since = now
        return on


class Overload:
    """One cube's overload watcher: refreshed by a timer, asked by the cube's hook."""

    def __init__(
        self,
        settings: Settings,
        store: StatusStore,
        clock: Clock,
        *,
        cube: str,
        yields: Sequence[str] = (PAGE_CRAWLS, YML_REFETCHES),
        instance: str | None = None,
    ) -> None:
        rt = settings.runtime  # its thresholds' bounds are the settings' own (shared/config/sections.py)
        self.store = store
        self.clock = clock
        self.cube = cube
        #: the low-value work of this cube that yields while the pipeline lags (the status page says so)
        self.yielding = tuple(yields)
        self.instance = instance or instance_id()
        self.groups = tuple(rt.overload_groups)
        self.interval_s = rt.status_interval_s
        self.max_attempts = rt.max_attempts
        self.gate = Hysteresis(rt.overload_lag, rt.overload_resume_lag)
        self.lag: int | None = None
        self.by_group: dict[str, int] = {}
        self.deferred: dict[str, int] = {}
        self._gauge = OVERLOADED.labels(cube)

    @property
    def overloaded(self) -> bool:
        return self.gate.on

    def yields(self, kind: CrawlKind, *, fmt: str | None = None, first: bool = False) -> str | None:
        """The reason this work yields now (None while the pipeline keeps up, or if it always flows)."""
        if not self.gate.on:
            return None
        work = low_value(kind, fmt=fmt, first=first)
        return work if work in self.yielding else None

    def why(self) -> str:
        return f"pipeline lag {self.lag:,} over {self.gate.high:,} (resumes under {self.gate.low:,})"

    def count(self, work: str, n: int = 1) -> None:
        self.deferred[work] = self.deferred.get(work, 0) + n
        DEFERRED.labels(self.cube, work).inc(n)

    # ------------------------------------------------------------------ hooks

    def split_feeds(self, feeds: Sequence[Feed]) -> tuple[list[Feed], list[Feed]]:
        """The scheduler's hook: (feeds to fetch now, feeds that yield). Counts the latter."""
        keep: list[Feed] = []
        held: list[Feed] = []
        for feed in feeds:
            work = self.yields(CrawlKind.feed, fmt=feed.format, first=feed.status.last_fetch_at is None)
            if work is None:
                keep.append(feed)
            else:
                held.append(feed)
                self.count(work)
        return keep, held

    def check(self, req: CrawlRequest, attempt: int) -> None:
        """The crawler's hook: raise ``Deferred`` for low-value work, except on its last attempt.

        A feed item's page that completes the item (``FULL_TEXT_PREFIX``) is the feed's content, not
        autoparser crawling: it never yields.
        """
        if any(r.startswith(FULL_TEXT_PREFIX) for r in req.requesters):
            return
        work = self.yields(req.kind)
        if work is None or attempt >= self.max_attempts:
            return  # the last attempt goes ahead: deferred work is slowed down, never dead-lettered
        self.count(work)
        raise Deferred(f"{work} deferred: {self.why()}", retry_after=DEFER_S)

    # ------------------------------------------------------------------ refresh

    async def refresh(self) -> bool:
        """Read the published lag, update the state, publish it; True while overloaded."""
        now = self.clock.time()
        try:
            snaps = await self.store.get_status(CUBE_PREFIX)
        except StoreUnavailable as exc:
            # low-value work flows meanwhile; the outage is told once (shared/outages.py)
            OUTAGES.met(exc, f"{self.cube}: lag snapshots")
            snaps = []
        was = self.gate.on
        self.lag, self.by_group = pipeline_lag(snaps, self.groups, now, self.interval_s)
        on = self.gate.update(self.lag, now)
        if on != was:
            if on:
                log.warning("%s: overloaded, %s yield: %s", self.cube, " and ".join(self.yielding), self.why())
            else:
                log.warning("%s: load back to normal (pipeline lag %s): all work flows", self.cube, self.lag)
        self._gauge.set(1 if on else 0)
        try:
            await self.store.put_status(
                f"{OVERLOAD_PREFIX}{self.cube}:{self.instance}", self.snapshot(), now=stamp(self.clock)
            )
        except StoreUnavailable as exc:
            OUTAGES.met(exc, f"{self.cube}: overload state")
        else:
            OUTAGES.up("store")
        return on

    async def tick(self, ctx: TimerContext) -> list[Output]:
        """``refresh`` as a cube ``Timer``."""
        await self.refresh()
        return []

    def snapshot(self) -> dict[str, Any]:
        since = self.gate.since
        return {
            "cube": self.cube,
            "instance": self.instance,
            "overloaded": self.gate.on,
            "since": None if since is None else at(since).isoformat(),
            "lag": self.lag,
            "by_group": self.by_group,
            "high": self.gate.high,
            "low": self.gate.low,
            "yields": list(self.yielding),
            "paused": list(self.yielding) if self.gate.on else [],
            "deferred": dict(self.deferred),
        }
