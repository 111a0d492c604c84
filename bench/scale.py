"""Scale benchmark: the scheduler, the crawl lanes and the store at 10k, 100k and 1M feeds.

A simulation on this machine, on a simulated clock with simulated partners (no
network), that drives the real code: ``SchedulerHandler`` (its tick, its
learning, the spread among a host's feeds) over the real SQLite ``FeedStore``,
and the crawler's real ``Lanes`` (token bucket, window rule, adaptive policy),
fed by a discrete-event loop: a request reaches its host's lane when the
scheduler emits it, starts when the lane grants a slot, and is answered after
a simulated latency (304 mostly, a changed body sometimes, a 429 with
Retry-After from a few throttling partners), which the scheduler then learns.

Feeds sit on hosts with Zipf skew (exponent 0.7: at 1M feeds over 100k hosts
the largest host has ~9,500 feeds, the 10th ~1,900, most hosts a handful), each
refreshed every ``--interval`` seconds (15 min); the store starts in the steady
state, due times spread over one interval. Big hosts get the lane an operator
would give them (``crawler.host_overrides``: twice their offered rate, at most
20/s); the rest keep the default lane (1/s, burst 2).

Printed per scale: memory of the scheduler per feed (its Python objects, deep
size: it keeps nothing per feed by design) and of the process (RSS growth,
SQLite's page cache included), the store's bytes per feed, the lanes' memory
per known host, CPU per due feed of a tick and per learned result, CPU of a
tick with nothing due, crawl requests per second, and the worst per-host
rate against its limit (and violations: requests that broke the host's limit,
checked at the partner with the lane's own window rule at the configured rate). Then the growth table: each figure as a
ratio to its value at the smallest scale (the baseline of the same run).

A second baseline, in the same run: the per-process host index the scheduler
kept before scheduler replicas (every feed's due time in a dict, loaded from the store
at start, each placement sorting the host's other due times), rebuilt here
for the same feeds: its memory per feed and its CPU per placement, against
the store-backed spread that replaced it.

With ``--postgres SCALE`` (and ``TURBOCUBES_TEST_POSTGRES``), that scale runs again over the
PostgreSQL ``FeedStore``: its bytes per feed and the round trips per due feed and per learned
result, the capacity plan's PostgreSQL figures (``docs/capacity.md``).

    python bench/scale.py [--scales 10k,100k,1m] [--seconds 120] [--interval 900] [--seed 7] [--postgres 10k]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import heapq
import itertools
import math
import os
import random
import resource
import shutil
import sqlite3
import sys
import tempfile
import time
import zlib
from bisect import bisect_right
from collections import defaultdict, deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cubes.crawler.lanes import Lanes
from cubes.crawler.policy import Signal, SignalKind
from cubes.scheduler.handler import SchedulerHandler
from cubes.scheduler.ownership import OWNED_TOPIC, Ownership
from cubes.scheduler.spread import effective_gap, spread
from shared.bus.base import TopicPartition
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FetchStatus
from shared.runtime.cube import Context, Output, TimerContext
from shared.runtime.timers import run_round
from shared.stores import Stores, open_stores

__all__ = ["main"]

#: the crawl.feeds partitions of the catalog (schemas/topics.toml): one replica here owns all of them
PARTITIONS = 12
#: Zipf exponent of feeds per host (see the module docstring)
ZIPF_S = 0.7
#: the simulated partners: answer latency (lognormal median, s), share of polls with a changed body,
#: share of hosts that throttle now and then, how often they do, and the Retry-After they send
LATENCY_MEDIAN_S = 0.15
CHANGED_SHARE = 0.2
THROTTLING_HOSTS = 0.005
THROTTLE_SHARE = 0.05
RETRY_AFTER_S = 300
#: a lane an operator gives a big host: twice its offered rate, capped here
MAX_HOST_RATE = 20.0
#: the crawler answers "throttled" instead of waiting longer than this (crawler.max_lane_wait_s)
MAX_LANE_WAIT_S = 20.0
START = 1_800_000_000.0
SCALES = {"10k": (10_000, 1_000), "100k": (100_000, 10_000), "1m": (1_000_000, 100_000)}
CTX = Context(topic="crawl.feeds", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f} on {os.cpu_count()} cpus"


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def deep_size(root: Any, exclude: tuple[Any, ...] = ()) -> int:
    """Bytes of ``root`` and everything it reaches, except modules, classes, functions and ``exclude``."""
    seen = {id(x) for x in exclude}
    todo = [root]
    total = 0
    skip = (type, type(sys), type(deep_size), type(len))
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        todo.extend(gc.get_referents(obj))
    return total


def place(key: bytes) -> int:
    """The embedded log's partitioner (shared/bus/sqlite.py): crc32 of the key."""
    return zlib.crc32(key) % PARTITIONS


# --------------------------------------------------------------------------- the feeds


@dataclass
class World:
    feeds: int
    hosts: list[str]  # per host index
    host_of: list[int]  # per feed: its host index
    per_host: list[int]
    throttling: set[str]
    overrides: dict[str, dict[str, float]]


def make_world(n_feeds: int, n_hosts: int, interval: float, rng: random.Random) -> World:
    weights = list(itertools.accumulate(1.0 / (k + 1) ** ZIPF_S for k in range(n_hosts)))
    host_of = [bisect_right(weights, rng.random() * weights[-1]) for _ in range(n_feeds)]
    per_host = [0] * n_hosts
    for h in host_of:
        per_host[h] += 1
    hosts = [f"h{i}.partner.test" for i in range(n_hosts)]
    throttling = {hosts[i] for i in range(n_hosts) if per_host[i] and rng.random() < THROTTLING_HOSTS}
    overrides = {}
    for i, n in enumerate(per_host):
        needed = 2.0 * n / interval
        if needed > 1.0:
            rate = min(MAX_HOST_RATE, math.ceil(needed))
            overrides[hosts[i]] = {"rate": rate, "max_rate": rate, "burst": 2, "concurrency": 4}
    return World(n_feeds, hosts, host_of, per_host, throttling, overrides)


#: the columns the fixture writes (the steady state: every feed fetched once an interval ago)
SEED_COLUMNS = (
    "feed_id",
    "url",
    "host",
    "format",
    "created_at",
    "next_fetch_at",
    "interval_s",
    "schedule_partition",
    "last_fetch_at",
    "fetch_result",
)


def seed_rows(world: World, interval: float, rng: random.Random) -> list[tuple[Any, ...]]:
    """The steady state as rows (a fixture: the registration service is tested elsewhere), due times
    spread over one interval."""
    us = 1_000_000
    rows = []
    for i, h in enumerate(world.host_of):
        host = world.hosts[h]
        due = START + rng.random() * interval
        rows.append(
            (
                f"f{i}",
                f"https://{host}/feed/{i}.xml",
                host,
                "rss",
                int(START * us),
                int(due * us),
                interval,
                place(host.encode()),
                int((due - interval) * us),
                "not_modified",
            )
        )
    return rows


def seed_sqlite(path: Path, rows: list[tuple[Any, ...]]) -> None:
    conn = sqlite3.connect(path)
    marks = ", ".join("?" for _ in SEED_COLUMNS)
    conn.executemany(f"INSERT INTO feeds ({', '.join(SEED_COLUMNS)}) VALUES ({marks})", rows)
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()


# --------------------------------------------------------------------------- the simulated crawler


@dataclass
class Sim:
    clock: ManualClock
    lanes: Lanes
    world: World
    rng: random.Random
    events: list[tuple[float, int, str, Any]] = field(default_factory=list)
    queues: dict[str, deque[tuple[float, CrawlRequest]]] = field(default_factory=lambda: defaultdict(deque))
    waking: set[str] = field(default_factory=set)
    arrivals: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    results: list[CrawlResult] = field(default_factory=list)
    throttled: int = 0
    #: host -> when the partner's last Retry-After ends, and requests that reached it before then
    told: dict[str, float] = field(default_factory=dict)
    early: int = 0
    seq: itertools.count[int] = field(default_factory=itertools.count)

    def push(self, at: float, kind: str, data: Any) -> None:
        heapq.heappush(self.events, (at, next(self.seq), kind, data))

    async def publish(self, outputs: Any) -> None:
        """The scheduler's ``deps.publish``: each crawl request reaches its host's lane now."""
        now = self.clock.time()
        for out in outputs:
            req = out.message
            assert isinstance(req, CrawlRequest)
            self.queues[req.host].append((now, req))
            self.try_host(req.host, now)

    def try_host(self, host: str, now: float) -> None:
        lane = self.lanes.get(host)
        q = self.queues[host]
        while q:
            asked, req = q[0]
            if lane.try_start(now):
                q.popleft()
                self.arrivals[host].append(now)
                self.early += now < self.told.get(host, 0.0)  # the partner said "not before then"
                latency = LATENCY_MEDIAN_S * math.exp(0.5 * self.rng.gauss())
                self.push(now + latency, "answer", (host, req, latency))
                continue
            at = lane.next_allowed_at(now)
            if at - asked > MAX_LANE_WAIT_S:  # the crawler would answer "throttled" rather than wait
                q.popleft()
                self.throttled += 1
                self.results.append(_result(req, FetchStatus.throttled, now, None))
                continue
            # a known moment ahead: wake then. Otherwise only an answer frees the lane: the window
            # is full of requests in flight (inf), or the concurrency cap is reached, which
            # next_allowed_at leaves out (a wake-up now would spin at this instant: 1M's big hosts)
            if now < at != float("inf") and host not in self.waking:
                self.waking.add(host)
                self.push(at, "wake", host)
            return  # a release or the wake-up tries again

    def answer(self, host: str, req: CrawlRequest, latency: float, now: float) -> None:
        lane = self.lanes.get(host)
        if host in self.world.throttling and self.rng.random() < THROTTLE_SHARE:
            lane.release(Signal(SignalKind.throttled, latency, float(RETRY_AFTER_S)))
            self.told[host] = max(self.told.get(host, 0.0), now + RETRY_AFTER_S)
            self.results.append(_result(req, FetchStatus.throttled, now, 429, retry_after=RETRY_AFTER_S))
        else:
            lane.release(Signal(SignalKind.ok, latency))
            changed = self.rng.random() < CHANGED_SHARE
            status = FetchStatus.ok if changed else FetchStatus.not_modified
            self.results.append(_result(req, status, now, 200 if changed else 304))
        self.try_host(host, now)

    def run_until(self, t: float) -> None:
        while self.events and self.events[0][0] <= t:
            at, _, kind, data = heapq.heappop(self.events)
            self.clock.advance(max(0.0, at - self.clock.time()))
            if kind == "answer":
                self.answer(*data, at)
            else:
                self.waking.discard(data)
                self.try_host(data, at)
        self.clock.advance(max(0.0, t - self.clock.time()))


def _result(req: CrawlRequest, status: FetchStatus, now: float, http: int | None, retry_after: int = 0) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.feed,
        url=req.url,
        host=req.host,
        status=status,
        http_status=http,
        headers={"retry-after": str(retry_after)} if retry_after else {},
        body=f"<rss>{now}</rss>".encode() if status is FetchStatus.ok else None,
        requesters=list(req.requesters),
        feed_id=req.feed_id,
        requested_at=req.requested_at,
        fetched_at=datetime.fromtimestamp(now, UTC),
    )


def violations(arrivals: dict[str, list[float]], lanes: Lanes) -> tuple[int, float]:
    """Requests that broke their host's limit at the partner, and the worst host's peak against its limit.

    The limit is the lane's promise to the partner (``lanes.py``, the window rule) at the host's
    configured rate: at most ``M`` requests in any window of ``W`` seconds (1/s and burst 2: 2 in any
    second). Arrivals are the simulated partner's: a request reaches it when the lane starts it.
    """
    broken = 0
    worst = 0.0
    for host, times in arrivals.items():
        lane = lanes.get(host)
        rate, burst = lane.limits.ceiling, lane.burst
        whole = max(1, int(rate))
        window, most = whole / rate, whole + burst - 1
        j = 0
        for i, t in enumerate(times):
            while times[j] <= t - window + 1e-9:
                j += 1
            seen = i - j + 1
            broken += seen > most
            worst = max(worst, seen / most)
    return broken, worst


# --------------------------------------------------------------------------- the baseline: the old index


def old_index_baseline(world: World, interval: float, rng: random.Random, samples: int) -> tuple[float, float]:
    """Bytes per feed of the per-process host index, and CPU per placement with it (seconds)."""
    gc.collect()
    hosts: dict[str, dict[str, float]] = {}
    host_of: dict[str, str] = {}
    for i, h in enumerate(world.host_of):
        host = world.hosts[h]
        hosts.setdefault(host, {})[f"f{i}"] = START + rng.random() * interval
        host_of[f"f{i}"] = host
    size = deep_size(hosts) + deep_size(host_of)
    picks = [rng.randrange(world.feeds) for _ in range(samples)]
    t0 = time.process_time()
    for i in picks:
        host = world.hosts[world.host_of[i]]
        others = [due for fid, due in hosts[host].items() if fid != f"f{i}"]
        gap = effective_gap(10.0, interval, len(others) + 1)
        spread(START + interval * rng.random(), others, gap)
    cpu = (time.process_time() - t0) / samples
    return size / world.feeds, cpu


# --------------------------------------------------------------------------- one scale


@dataclass
class Run:
    """One simulation's objects and what it cost: CPU (s) and PostgreSQL round trips of ticks and learning."""

    handler: SchedulerHandler
    sim: Sim
    lanes: Lanes
    clock: ManualClock
    tick_cpu: float = 0.0
    learn_cpu: float = 0.0
    learned: int = 0
    tick_trips: float = 0.0
    learn_trips: float = 0.0


def round_trips() -> float:
    """The PostgreSQL engine's client-side count of round trips, all stores (0 before it is imported)."""
    if "shared.stores.postgres.db" not in sys.modules:
        return 0.0
    from shared.stores.postgres.db import ROUND_TRIPS

    return sum(s.value for m in ROUND_TRIPS.collect() for s in m.samples if s.name.endswith("_total"))


async def simulate(
    label: str, world: World, stores: Stores, interval: float, seconds: float, seed: int, rng: random.Random
) -> Run:
    """``seconds`` of simulated time: a scheduler tick a second (as the runtime runs the timer), the
    partners' answers of that second, then the scheduler learning them."""
    clock = ManualClock(start=START)
    settings = Settings().replace(
        scheduler={"min_interval_s": interval, "max_interval_s": interval, "jitter": 0.1, "host_gap_s": 10.0},
        crawler={"rate": 1.0, "burst": 2, "concurrency": 2, "host_overrides": world.overrides},
    )
    lanes = Lanes(settings.crawler, clock, seed=seed)
    sim = Sim(clock, lanes, world, rng)
    ownership = Ownership(place)
    ownership.follow(lambda: {TopicPartition(OWNED_TOPIC, p) for p in range(PARTITIONS)})
    handler = SchedulerHandler(settings, stores.feeds, clock, rng=random.Random(seed), ownership=ownership)
    run = Run(handler, sim, lanes, clock)
    wall0 = time.perf_counter()
    for second in range(int(seconds)):
        if second and second % 60 == 0:  # 1M takes a while: say how far it is
            print(
                f"    {label}: {second:.0f} of {seconds:.0f} simulated s, {handler.ticker.emitted:,} polls,"
                f" {time.perf_counter() - wall0:.0f} s wall, {load()}",
                flush=True,
            )
        c0, r0 = time.process_time(), round_trips()
        await run_round("scheduler", "tick", handler.tick, sim.publish)
        run.tick_cpu += time.process_time() - c0
        run.tick_trips += round_trips() - r0
        sim.run_until(clock.time() + 1.0)
        batch, sim.results = sim.results, []
        c0, r0 = time.process_time(), round_trips()
        for res in batch:
            await handler.handle(res, CTX)
        run.learn_cpu += time.process_time() - c0
        run.learn_trips += round_trips() - r0
        run.learned += len(batch)
    return run


@dataclass
class Figures:
    label: str
    feeds: int
    hosts: int
    sched_bytes_per_feed: float
    rss_bytes_per_feed: float
    store_bytes_per_feed: float
    lane_bytes_per_host: float
    tick_cpu_per_due_us: float
    learn_cpu_per_result_us: float
    empty_tick_cpu_us: float
    requests_per_s: float
    worst_rate_ratio: float
    violations: int
    early: int
    throttled: int
    old_bytes_per_feed: float
    old_place_cpu_us: float
    new_place_cpu_us: float


async def run_scale(label: str, n_feeds: int, n_hosts: int, seconds: float, interval: float, seed: int) -> Figures:
    rng = random.Random(seed)
    world = make_world(n_feeds, n_hosts, interval, rng)
    used_hosts = sum(1 for n in world.per_host if n)
    tmp = Path(tempfile.mkdtemp(prefix=f"scale-{label}-"))
    try:
        db = tmp / "store.db"
        stores = await open_stores(f"sqlite:///{db}")  # migrations
        await stores.close()
        t0 = time.perf_counter()
        seed_sqlite(db, seed_rows(world, interval, rng))
        print(
            f"  {label}: {n_feeds:,} feeds over {used_hosts:,} hosts seeded in {time.perf_counter() - t0:.0f} s",
            flush=True,
        )
        store_bytes = sum(f.stat().st_size for f in tmp.iterdir())  # noqa: ASYNC240 - setup, before any figure
        gc.collect()
        rss0 = rss_bytes()
        stores = await open_stores(f"sqlite:///{db}")
        run = await simulate(label, world, stores, interval, seconds, seed, rng)
        handler, sim, lanes, clock = run.handler, run.sim, run.lanes, run.clock
        tick_cpu, learn_cpu, learned = run.tick_cpu, run.learn_cpu, run.learned

        async def tick_only(ctx: TimerContext) -> list[Output]:
            await handler.ticker.tick(ctx)
            return []

        emitted = handler.ticker.emitted
        # a tick with nothing due: the index probe alone. The clock has moved a second since the last
        # tick, so one tick first emits what fell due in that second (not measured)
        await run_round("scheduler", "tick", tick_only, sim.publish)
        c0 = time.process_time()
        for _ in range(20):
            await run_round("scheduler", "tick", tick_only, sim.publish)
        empty = (time.process_time() - c0) / 20
        sched_bytes = deep_size(handler, exclude=(stores.feeds, clock, sim, stores))
        gc.collect()
        rss = rss_bytes() - rss0
        lane_bytes = deep_size(lanes._lanes, exclude=(clock,)) / max(1, len(lanes))
        broken, worst = violations(sim.arrivals, lanes)
        placements = min(2000, n_feeds)
        c0 = time.process_time()
        for i in (rng.randrange(n_feeds) for _ in range(placements)):
            await handler._spread.place(
                world.hosts[world.host_of[i]], f"f{i}", START + interval * rng.random(), interval
            )
        new_place = (time.process_time() - c0) / placements
        await stores.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    old_bytes, old_place = old_index_baseline(world, interval, rng, min(2000, n_feeds))
    return Figures(
        label=label,
        feeds=n_feeds,
        hosts=used_hosts,
        sched_bytes_per_feed=sched_bytes / n_feeds,
        rss_bytes_per_feed=rss / n_feeds,
        store_bytes_per_feed=store_bytes / n_feeds,
        lane_bytes_per_host=lane_bytes,
        tick_cpu_per_due_us=1e6 * tick_cpu / max(1, emitted),
        learn_cpu_per_result_us=1e6 * learn_cpu / max(1, learned),
        empty_tick_cpu_us=1e6 * empty,
        requests_per_s=emitted / seconds,
        worst_rate_ratio=worst,
        violations=broken,
        early=sim.early,
        throttled=sim.throttled,
        old_bytes_per_feed=old_bytes,
        old_place_cpu_us=1e6 * old_place,
        new_place_cpu_us=1e6 * new_place,
    )


@dataclass
class PgFigures:
    label: str
    feeds: int
    store_bytes_per_feed: float
    tick_cpu_per_due_us: float
    learn_cpu_per_result_us: float
    tick_trips_per_due: float
    learn_trips_per_result: float
    requests_per_s: float
    sqlite_tick_cpu_per_due_us: float
    sqlite_learn_cpu_per_result_us: float


async def run_postgres(
    label: str, n_feeds: int, n_hosts: int, seconds: float, interval: float, seed: int, url: str, on_sqlite: Figures
) -> PgFigures:
    """The same simulation over the PostgreSQL ``FeedStore`` (a schema of its own, dropped after):
    its bytes per feed (table and indexes) and round trips per due feed and per learned result."""
    import asyncpg

    from shared.stores.postgres.db import split_schema

    rng = random.Random(seed)
    world = make_world(n_feeds, n_hosts, interval, rng)
    schema = f"scale_{os.getpid()}_{int(time.time())}"
    dsn, _ = split_schema(url)
    conn = await asyncpg.connect(dsn.replace("postgresql://", "postgres://", 1))
    try:
        stores = await open_stores(f"{url}{'&' if '?' in url else '?'}schema={schema}", pool_size=2)  # migrations
        try:
            t0 = time.perf_counter()
            await conn.copy_records_to_table(
                "feeds", records=seed_rows(world, interval, rng), columns=SEED_COLUMNS, schema_name=schema
            )
            await conn.execute(f"ANALYZE {schema}.feeds")
            size = await conn.fetchval(f"SELECT pg_total_relation_size('{schema}.feeds')")
            print(f"  {label} on PostgreSQL: seeded in {time.perf_counter() - t0:.0f} s", flush=True)
            run = await simulate(f"{label} on PostgreSQL", world, stores, interval, seconds, seed, rng)
        finally:
            await stores.close()
    finally:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await conn.close()
    emitted = run.handler.ticker.emitted
    return PgFigures(
        label=label,
        feeds=n_feeds,
        store_bytes_per_feed=size / n_feeds,
        tick_cpu_per_due_us=1e6 * run.tick_cpu / max(1, emitted),
        learn_cpu_per_result_us=1e6 * run.learn_cpu / max(1, run.learned),
        tick_trips_per_due=run.tick_trips / max(1, emitted),
        learn_trips_per_result=run.learn_trips / max(1, run.learned),
        requests_per_s=emitted / seconds,
        sqlite_tick_cpu_per_due_us=on_sqlite.tick_cpu_per_due_us,
        sqlite_learn_cpu_per_result_us=on_sqlite.learn_cpu_per_result_us,
    )


def report_postgres(f: PgFigures) -> None:
    print(f"\n== the scheduler on PostgreSQL, {f.label} ({load()}; baseline: the embedded store, same run) ==")
    print(
        f"store {f.store_bytes_per_feed:.0f} B/feed (table + indexes) | tick {f.tick_cpu_per_due_us:.1f} us/due feed"
        f" ({f.tick_cpu_per_due_us / f.sqlite_tick_cpu_per_due_us:.2f}x SQLite),"
        f" {f.tick_trips_per_due:.2f} round trips/due feed | learn {f.learn_cpu_per_result_us:.1f} us/result"
        f" ({f.learn_cpu_per_result_us / f.sqlite_learn_cpu_per_result_us:.2f}x SQLite),"
        f" {f.learn_trips_per_result:.2f} round trips/result | {f.requests_per_s:.1f} requests/s"
        " (CPU: this process; the server's is not counted)"
    )


def report(all_figures: list[Figures], interval: float) -> None:
    base = all_figures[0]
    print(f"\n== per scale ({load()}) ==")
    for f in all_figures:
        print(
            f"{f.label:>5}: {f.feeds:>9,} feeds {f.hosts:>7,} hosts | scheduler {f.sched_bytes_per_feed:7.1f} B/feed"
            f" (process RSS {f.rss_bytes_per_feed:7.1f} B/feed, store {f.store_bytes_per_feed:6.0f} B/feed)"
            f" | lanes {f.lane_bytes_per_host:6.0f} B/host | tick {f.tick_cpu_per_due_us:6.1f} us/due feed,"
            f" learn {f.learn_cpu_per_result_us:6.1f} us/result, empty tick {f.empty_tick_cpu_us:6.0f} us"
            f" | {f.requests_per_s:7.1f} requests/s (expected {f.feeds / interval:7.1f})"
            f" | worst host {f.worst_rate_ratio:4.2f} of its limit, {f.violations} violations,"
            f" {f.early} before a Retry-After, {f.throttled} throttled"
        )
    print("\n== growth: each figure / its value at the smallest scale (baseline: the same run) ==")
    columns = [
        ("feeds", lambda f: f.feeds),
        ("sched B/feed", lambda f: f.sched_bytes_per_feed),
        ("RSS B/feed", lambda f: f.rss_bytes_per_feed),
        ("lane B/host", lambda f: f.lane_bytes_per_host),
        ("tick us/due", lambda f: f.tick_cpu_per_due_us),
        ("learn us/res", lambda f: f.learn_cpu_per_result_us),
        ("empty tick", lambda f: f.empty_tick_cpu_us),
        ("requests/s", lambda f: f.requests_per_s),
    ]
    print("scale  " + "".join(f"{name:>14}" for name, _ in columns))
    for f in all_figures:
        print(
            f"{f.label:>5}  "
            + "".join(f"{get(f) / get(base):>13.2f}x" if get(base) else f"{'-':>14}" for _, get in columns)
        )
    print("\n== baseline: the per-process host index replaced by the store-backed spread (same feeds) ==")
    for f in all_figures:
        print(
            f"{f.label:>5}: memory {f.old_bytes_per_feed:6.0f} -> {f.sched_bytes_per_feed:5.1f} B/feed"
            f" ({f.sched_bytes_per_feed / f.old_bytes_per_feed:.3f}x); placement CPU {f.old_place_cpu_us:8.1f} ->"
            f" {f.new_place_cpu_us:6.1f} us ({f.new_place_cpu_us / f.old_place_cpu_us:.2f}x)"
        )
    last = all_figures[-1]
    print("\n== targets ==")
    print(
        f"scheduler memory <= 1 KB/feed: {last.sched_bytes_per_feed:.1f} B/feed at {last.label} "
        f"({'ok' if last.sched_bytes_per_feed <= 1024 else 'MISSED'})"
    )
    growth = last.tick_cpu_per_due_us / base.tick_cpu_per_due_us
    print(
        f"tick CPU linear in due feeds: per due feed {growth:.2f}x from {base.label} to {last.label} "
        f"({'ok' if growth <= 2.0 else 'MISSED'}; flat = linear)"
    )
    verdict = "ok" if last.violations == last.early == 0 else "MISSED"
    print(
        f"zero per-host rate violations at {last.label}: {last.violations} over the rate,"
        f" {last.early} before a Retry-After ({verdict})"
    )


async def amain(args: argparse.Namespace) -> int:
    print(
        f"bench/scale.py: {args.seconds:.0f} simulated s per scale, interval {args.interval:.0f} s, {load()}",
        flush=True,
    )
    figures = []
    for label in args.scales.split(","):
        n_feeds, n_hosts = SCALES[label.strip().lower()]
        figures.append(await run_scale(label, n_feeds, n_hosts, args.seconds, args.interval, args.seed))
        f = figures[-1]
        print(f"  {label}: {f.requests_per_s:.0f} requests/s, tick {f.tick_cpu_per_due_us:.1f} us/due feed", flush=True)
    report(figures, args.interval)
    if args.postgres:
        url = os.environ.get("TURBOCUBES_TEST_POSTGRES")
        if not url:
            print("--postgres needs TURBOCUBES_TEST_POSTGRES (a PostgreSQL URL)", file=sys.stderr)
            return 2
        label = args.postgres.strip().lower()
        n_feeds, n_hosts = SCALES[label]
        on_sqlite = next((f for f in figures if f.label.lower() == label), None)
        if on_sqlite is None:
            print(f"--postgres {label}: run that scale too (--scales)", file=sys.stderr)
            return 2
        report_postgres(
            await run_postgres(label, n_feeds, n_hosts, args.seconds, args.interval, args.seed, url, on_sqlite)
        )
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scales", default="10k,100k,1m", help="comma-separated: 10k, 100k, 1m")
    p.add_argument("--seconds", type=float, default=120.0, help="simulated seconds per scale")
    p.add_argument("--interval", type=float, default=900.0, help="every feed's refresh interval (s)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--postgres",
        default="",
        metavar="SCALE",
        help="also run SCALE (one of --scales) on PostgreSQL (TURBOCUBES_TEST_POSTGRES): bytes, round trips per feed",
    )
    return asyncio.run(amain(p.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
