"""The scheduler's tick: the due feeds of this replica's partitions out, each poll once (docs/architecture.md s.3).

Every ``scheduler.tick_s``, in this order (the order is the exactly-once design):

1. **read** the due feeds of the partitions this replica holds (``Ownership``),
   most overdue first, ``scheduler.tick_batch`` at a time, until none is left
   or the tick's time is spent (``FeedStore.due`` reads an index by partition
   and due time: a tick costs what is due, not what is registered);
2. **defer** YML re-fetches while the pipeline is overloaded (their next fetch
   moves ``overload.DEFER_S`` ahead: not emitted, not lost);
3. **publish** one crawl request per feed, naming the poll (``due_at``: the
   feed's due time as read in 1), and wait until every one is durable (the
   timer round's ``emit``: the runtime publishes, as for a handler's outputs);
4. only then **lease** each feed: its next fetch moves to now + the delay it
   would have had anyway (its interval, or its failure backoff), by
   compare-and-set against the value read in 1, so a result learned meanwhile
   (newer) is kept. A lease that runs out with no result (the request lost,
   the crawler down) makes the feed due again.

A replica that dies between 3 and 4 leaves its feeds due; the replica that
takes its partitions over emits them again with the same ``due_at``, and the
crawler fetches one poll once however often it is asked
(``cubes/crawler/coalesce.py``). Leasing first would instead lose one interval
of every feed whose request was not out yet.

**Placement**: a feed gets its ``schedule_partition`` (its host's partition of
``crawl.feeds``) and a due time of now when the scheduler first hears of it
(``place``: the registration's announcement). ``sweep`` places what no
announcement placed (one lost, rows from before migration 9) and, once per
process, checks a sample of placed feeds against the bus's rule: a feed placed
with another rule (another engine, another partition count) would be ticked by
nobody or by two, so then every feed is placed again.
"""

from __future__ import annotations

import logging
from datetime import datetime

from cubes.scheduler.ownership import Ownership
from cubes.scheduler.policy import Outcome, backoff, next_interval
from shared.clock import Clock, at
from shared.config import SchedulerConfig
from shared.messages import CrawlKind, CrawlRequest
from shared.overload import DEFER_S, Overload
from shared.runtime.cube import Output, TimerContext
from shared.stores.feeds import Feed, FeedStore
from shared.webmaster.feed_options import crawl_fields

__all__ = ["ROUTINE_PRIORITY", "SWEEP_EVERY_S", "Ticker"]

log = logging.getLogger(__name__)

#: routine polls; pushes and first fetches use 0 (CrawlRequest.priority)
ROUTINE_PRIORITY = 5
#: how often unplaced feeds are looked for (an announcement is what places a feed in time; this
#: catches the rest)
SWEEP_EVERY_S = 60.0
#: feeds placed per statement batch of a sweep
_SWEEP_BATCH = 500
#: placed feeds compared with the bus's rule at start: one of them wrong means all were placed
#: with another rule (the rule is a function of the host: there is no partial drift)
_SAMPLE = 64
#: share of the tick a tick may spend emitting before it leaves the rest to the next one
_TICK_SHARE = 0.8


class Ticker:
    def __init__(
        self,
        cfg: SchedulerConfig,
        feeds: FeedStore,
        clock: Clock,
        ownership: Ownership,
        *,
        overload: Overload | None = None,
    ) -> None:
        self._cfg = cfg
        self._feeds = feeds
        self._clock = clock
        self._owner = ownership
        self._overload = overload
        self._swept_at: float | None = None
        self._checked = False
        #: polls emitted by this process (the status page; tests)
        self.emitted = 0

    # ------------------------------------------------------------------ placement

    async def place(self, feed: Feed) -> bool:
        """Schedule ``feed`` in its host's partition (due now if it has no due time); True if it moved."""
        partition = self._owner.partition_of(feed.host)
        st = feed.status
        if st.schedule_partition == partition and st.next_fetch_at is not None:
            return False
        # ``feed`` may be a row read a while ago (a sweep's batch, an announcement): the store keeps a
        # due time set since (another replica's lease), so a stale row cannot make the feed due again
        return await self._feeds.place(feed.feed_id, partition, at(self._clock.time()))

    async def sweep(self, *, force: bool = False) -> int:
        """Place the feeds nobody placed (every ``SWEEP_EVERY_S``); returns how many."""
        now = self._clock.monotonic()
        if not force and self._swept_at is not None and now - self._swept_at < SWEEP_EVERY_S:
            return 0
        self._swept_at = now
        if not self._checked:
            self._checked = True
            sample = await self._feeds.scheduled_sample(_SAMPLE)
            wrong = [h for h, p in sample if self._owner.partition_of(h) != p]
            if wrong:
                cleared = await self._feeds.clear_partitions()
                log.warning(
                    "scheduler: %d feeds were placed with another partitioning rule (%s, ...); placing them again",
                    cleared,
                    wrong[0],
                )
        placed = 0
        while batch := await self._feeds.unscheduled(_SWEEP_BATCH):
            for feed in batch:
                await self.place(feed)
            placed += len(batch)
            if len(batch) < _SWEEP_BATCH:
                break
        if placed:
            log.info("scheduler: placed %d feeds no announcement had placed", placed)
        return placed

    # ------------------------------------------------------------------ the tick

    async def tick(self, ctx: TimerContext) -> int:
        """Emit every due feed of this replica's partitions once (through the round's ``ctx.emit``);
        returns how many."""
        owned = self._owner.owned()
        if owned is not None and not owned:
            return 0  # no partition (yet): another replica ticks everything
        started = self._clock.monotonic()
        emitted = 0
        while True:
            now = self._clock.time()
            due = await self._feeds.due(at(now), limit=self._cfg.tick_batch, partitions=owned)
            read = len(due)
            if self._overload is not None and due:
                due, held = self._overload.split_feeds(due)
                for feed in held:
                    # not emitted, not lost: due again after the deferral, fetched once the lag falls
                    await self._feeds.update_schedule(feed.feed_id, next_fetch_at=at(now + DEFER_S))
            if due:
                await self._emit(ctx, due, now)
                emitted += len(due)
            if read < self._cfg.tick_batch or self._clock.monotonic() - started > _TICK_SHARE * self._cfg.tick_s:
                break
        self.emitted += emitted
        return emitted

    async def _emit(self, ctx: TimerContext, due: list[Feed], now: float) -> None:
        now_dt = at(now)
        # step 3: every request durable first (a failure raises here, and nothing was leased)
        await ctx.emit([self._request(feed, now_dt) for feed in due])
        # step 4: the lease, compare-and-set against what step 1 read
        for feed in due:
            st = feed.status
            lease = max(
                next_interval(st.interval_s, Outcome.failed, self._cfg), backoff(st.consecutive_failures, self._cfg)
            )
            await self._feeds.lease(feed.feed_id, st.next_fetch_at, at(now + lease))

    @staticmethod
    def _request(feed: Feed, now: datetime) -> Output:
        st = feed.status
        first = st.last_fetch_at is None
        return Output(
            "crawl.requests",
            CrawlRequest(
                kind=CrawlKind.feed,
                url=feed.url,
                host=feed.host,
                requesters=[f"feed:{feed.feed_id}"],
                feed_id=feed.feed_id,
                etag=None if first else st.etag,
                last_modified=None if first else st.last_modified,
                requested_at=now,
                priority=0 if first else ROUTINE_PRIORITY,
                due_at=st.next_fetch_at,
                **crawl_fields(feed.options, feed.secret),
            ),
        )
