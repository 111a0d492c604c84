"""End-to-end benchmark (docs/architecture.md sections 2 and 9): feeds in, Turbo pages out.

``--docs`` documents with two images each, spread over ``--hosts`` partner
hosts (``bench/e2e_site.py``: RSS feeds + JPEGs, a child process), go through
the whole pipeline: feeds registered (``add_feed``, the operator's
``turbocubes feeds add``) -> scheduler -> crawler -> parser -> media ->
crawler (images) -> cdn -> delay -> kvwriter -> KV store. Every cube runs in
this process; with ``--workers N`` (default: one per CPU core) N-1 more
processes run the replicable cubes beside it, as ``turbocubes up --workers N``
does (``cubes/workers.py``; here through this script's hidden ``--worker``
mode, so that they resolve ``*.partner.test`` with the bench's resolver too).

Per engine set (embedded: SQLite bus + store, file CDN; real: Kafka +
PostgreSQL + SeaweedFS, when ``TURBOCUBES_TEST_KAFKA`` / ``_POSTGRES`` / ``_S3``
are set) three passes:

* COLD -- every image is new: documents park in Delay until the crawler and
  the cdn cube have their images.
* WARM -- the same documents edited (new text, same images): the partner's
  next edition, the feeds nudged due; the media cube finds every image cached.
* TRICKLE (``--trickle``) -- the next edition with NEW images (new URLs, new
  bytes: every document parks in Delay again until its images are fetched and
  cached), the feeds nudged one by one over some seconds: a steady load below
  capacity. A burst of 10,000 documents queues, so the burst passes' freshness
  is mostly ``docs / (2 * rate)``; this pass shows the freshness of a document
  that does not wait behind 9,999 others.

Before the first pass, IDLE (``--idle`` seconds): every cube started, nothing to do; the CPU a
second of our processes and of the engines (only those ``ops/`` started under ``$TURBOCUBES_VAR``:
the machine may run other people's) and the Kafka requests a second. Each pass's CPU per document
is printed as measured and with that idle cost (its rate x the pass's wall time) taken out.

Printed per pass: documents/s (first feed fetch at the partner -> last KV
write of the pass) and freshness p50 / p99 (``seen_at`` = feed response ->
``written_at``, from the page store), split into stages, and the images' own
fetch time as the partner saw it (first image request of a document -> last
image response). Lanes are generous (``*.partner.test`` override): politeness
is the crawler benchmark's business.

    python bench/e2e.py [--docs 10000] [--hosts 100] [--engines embedded,real] [--trickle 30] [--workers 2]
        [--idle 20] [--real-trickle-rate 150]
        [--commits durable,lossy]   # the real engines with durable commits, and the old setting beside
        [--heap settled,default]    # the embedded engines with the collector settled as `up` sets it
                                    # (shared/runtime/heap.py), and CPython's default beside (--workers 1)
    python bench/e2e.py --docs 1000 --engines embedded --profile /tmp/e2e   # + CPU profile per pass
    python bench/e2e.py --docs 1000 --probe --set runtime.concurrency=64   # + handler/store wall times
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import gc
import inspect
import math
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
from prometheus_client import REGISTRY

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.e2e_costs import Costs, Counters, CubeCpu, Idle
from bench.e2e_site import PARTNER_SUFFIX, PartnerProcess, PartnerResolver
from bench.e2e_waits import HopProbe, RunQueue, count_kafka_requests
from cubes import registry
from cubes.worker import worker_main
from cubes.workers import WorkerPool
from shared.config import Settings
from shared.runtime import Runner, ensure_topics, heap, open_deps
from shared.runtime.loops import loop_kind, new_event_loop
from shared.urls import canonical_url
from shared.webmaster.feeds import FeedRegistry, RegistrationRefused, feed_id_for

__all__ = ["main"]

CUBES = ("scheduler", "crawler", "parser", "media", "cdn", "delay", "kvwriter", "indexer")
#: the search index's lag (written -> searchable) at the TRICKLE load, p99 (s)
INDEX_LAG_P99_S = 2.0
#: targets on the 2-core machine, for embedded engines and for the real ones
#: (Kafka + PostgreSQL + SeaweedFS co-located): (COLD docs/s, WARM docs/s, p50 s, p99 s, COLD CPU ms/doc)
TARGETS = {"embedded": (300.0, 1_000.0, 1.0, 5.0, None), "kafka+postgres+s3": (400.0, 2_000.0, 1.0, 3.0, 5.0)}
#: the write path's targets on this machine at --docs 10000 --hosts 100, each with the figure it was
#: measured at before, in the same bench: (engines, pass) -> [(what, limit, baseline)]; "cpu" is CPU
#: per document, ms (on the real engines ours + the engines' together), "dps" documents/s, "p99"
#: freshness p99 beyond the images' own fetch, s. The baselines: this bench's figures of the round
#: that put the search index into the page's write path (embedded COLD 329 docs/s at 4.57 ms, WARM
#: 701 at 1.91 ms, TRICKLE p99 3.85 s; real COLD ours 4.80 + engines' 3.48 ms, WARM 1.17 + 0.76 ms,
#: TRICKLE p99 24.4 s at ~300 offered)
WRITE_PATH = {
    ("embedded", "COLD"): [("cpu", 3.0, 4.57)],
    ("embedded", "WARM"): [("cpu", 0.8, 1.91), ("dps", 2_000.0, 701.0)],
    ("embedded", "TRICKLE"): [("p99", 1.5, 3.85)],
    ("kafka+postgres+s3", "COLD"): [("cpu", 6.0, 8.28)],
    ("kafka+postgres+s3", "WARM"): [("cpu", 1.2, 1.93)],
    ("kafka+postgres+s3", "TRICKLE"): [("p99", 3.0, 24.4)],
}
#: the TRICKLE pass's offered load on the real engines, documents/s (the embedded one: --trickle)
REAL_TRICKLE_RATE = 150.0
#: an idle pipeline's target: each of our processes' CPU a second, a share of one core; and what it was
#: when the target was set (``turbocubes up``, one process: 3.9 s of CPU in 30 s; bench/idle.py measures
#: that one), with the Kafka requests a second of its consumers then (fetches and heartbeats)
IDLE_SHARE = 0.01
IDLE_BASELINE_SHARE = 0.13
IDLE_BASELINE_KAFKA_PER_S = 14.0
#: a lane far above what the pipeline can use, so politeness never paces this benchmark
GENEROUS_LANE = {"rate": 5_000.0, "burst": 5_000, "concurrency": 64, "max_rate": 5_000.0}
PROGRESS_EVERY_S = 2.0
#: how long the worker processes get to join every consumer group before the first pass starts anyway
JOIN_TIMEOUT_S = 60.0
#: the hidden first argument that makes this script a worker process (``WorkerPool`` passes it)
WORKER_FLAG = "--worker"
SCRIPT = str(Path(__file__).resolve())


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f} on {os.cpu_count()} cpus"


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


class LoopLag:
    """How late the event loop runs a 50 ms timer: every cube shares this one loop, so this is how long
    any ready callback (a fetched image, a bus poll) waits for the CPU on this process's thread."""

    TICK_S = 0.05

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(self.TICK_S)
            self.samples.append(loop.time() - t - self.TICK_S)

    def take(self) -> list[float]:
        out, self.samples = self.samples, []
        return out

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


class Probe:
    """Wall time of every cube handler call and store call (``--probe``): where a message waits."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}

    def wrap(self, name: str, fn: Any) -> Any:
        times = self.times.setdefault(name, [])

        async def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                times.append(time.perf_counter() - t)

        return timed

    def wrap_stores(self, stores: Any) -> None:
        for attr in ("pages", "hashes", "images", "delay", "feeds"):
            obj = getattr(stores, attr, None)
            for meth in dir(obj):
                fn = getattr(obj, meth, None)
                if not meth.startswith("_") and inspect.iscoroutinefunction(fn):
                    setattr(obj, meth, self.wrap(f"store {attr}.{meth}", fn))

    def report(self) -> list[str]:
        out = []
        for name, ts in sorted(self.times.items(), key=lambda kv: -sum(kv[1]))[:20]:
            if ts:
                out.append(
                    f"   probe {name:36} {len(ts):>7} calls  sum {sum(ts):8.1f} s"
                    f"  mean {statistics.fmean(ts) * 1000:7.1f} ms  p99 {pct(ts, 0.99) * 1000:7.1f} ms"
                )
            ts.clear()
        return out


def free_port_base(count: int) -> int:
    """A port p such that p + 1 .. p + count - 1 are free now (worker i serves /metrics on p + i)."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = int(probe.getsockname()[1])
        if base + count >= 65_000:
            continue
        try:
            with contextlib.ExitStack() as held:
                for i in range(1, count):
                    sock = held.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", base + i))
        except OSError:
            continue
        return base
    raise RuntimeError("no run of free ports for the workers' /metrics")


def cpu_s() -> float:
    """CPU seconds of this process (all threads: SQLite and file I/O run in executor threads)."""
    t = os.times()
    return t.user + t.system


class Processes:
    """The bench process and its worker processes (``--workers``): their CPU seconds, together and apart."""

    def __init__(self, pool: WorkerPool | None) -> None:
        self.pool = pool

    def cpu(self) -> tuple[float, float]:
        """(this process, the workers) CPU seconds so far; the workers' read from /proc."""
        return cpu_s(), self.pool.cpu_s() if self.pool is not None else 0.0

    def pids(self) -> list[int]:
        return [os.getpid(), *(self.pool.pids if self.pool is not None else [])]

    def describe(self) -> str:
        n = self.pool.count if self.pool is not None else 0
        return "bench process" if n == 0 else f"bench + {n} worker process{'es' if n > 1 else ''}"


async def wait_for_workers(runners: list[Runner], deps: Any, processes: int) -> None:
    """Until every replicable cube here holds no more than its share of its partitions: the workers have
    joined each group, and the first pass does not start with one process doing it all (polled)."""
    shared = [r for r in runners if r.cube.name in registry.replicable(CUBES)]
    shares: dict[str, int] = {}
    for r in shared:
        topics = [*r.cube.inputs, r.retry_topic]
        shares[r.cube.name] = sum([math.ceil(len(await deps.bus.end_offsets(t)) / processes) for t in topics])
    loop = asyncio.get_running_loop()
    deadline = loop.time() + JOIN_TIMEOUT_S
    over: list[str] = []
    while loop.time() < deadline:
        over = [r.cube.name for r in shared if r.consumer is None or len(r.consumer.assignment()) > shares[r.cube.name]]
        if not over:
            return
        await asyncio.sleep(0.1)  # a poll interval
    print(
        f"   workers: {', '.join(over)} still hold(s) more than a share after {JOIN_TIMEOUT_S:.0f} s; starting anyway",
        flush=True,
    )


# --------------------------------------------------------------------------- reading the page store


class PageTimes:
    """The stage timestamps (microseconds) of pages written since a moment, straight from the KV store."""

    def __init__(self, store_url: str) -> None:
        self.url = store_url
        self._pg: Any = None

    async def open(self) -> None:
        if self.url.startswith("postgres"):
            import asyncpg

            from shared.stores.postgres import split_schema

            dsn, schema = split_schema(self.url)
            self._pg = await asyncpg.connect(dsn.replace("postgresql://", "postgres://", 1))
            if schema:
                await self._pg.execute(f"SET search_path TO {schema}")

    async def close(self) -> None:
        if self._pg is not None:
            await self._pg.close()

    async def _query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        if self._pg is not None:
            pg_sql = sql
            for i in range(len(args)):
                pg_sql = pg_sql.replace("?", f"${i + 1}", 1)
            return [tuple(r) for r in await self._pg.fetch(pg_sql, *args)]
        path = self.url.split("sqlite://", 1)[1]

        def run() -> list[tuple[Any, ...]]:
            conn = sqlite3.connect(path, timeout=30)
            try:
                return list(conn.execute(sql, args).fetchall())
            finally:
                conn.close()

        return await asyncio.to_thread(run)

    async def count_since(self, since_us: int) -> int:
        rows = await self._query("SELECT count(*) FROM pages WHERE written_at >= ? AND NOT deleted", since_us)
        return int(rows[0][0])

    async def index_pending(self) -> int:
        return int((await self._query("SELECT count(*) FROM search_queue"))[0][0])

    async def index_lags(self, since_us: int) -> list[float]:
        """Written -> searchable (s) of the live pages written since, as the index took them."""
        on = "d.url = p.url" if self._pg is not None else "d.id = p.rowid"
        rows = await self._query(
            f"SELECT d.indexed_at - p.written_at FROM pages p JOIN search_docs d ON {on}"
            " WHERE p.written_at >= ? AND NOT p.deleted AND d.version = p.version",
            since_us,
        )
        return [max(0, r[0]) / 1e6 for r in rows]

    async def rows_since(self, since_us: int) -> list[tuple[str, int, int, int, int]]:
        return await self._query(
            "SELECT url, seen_at, parsed_at, media_ready_at, written_at FROM pages"
            " WHERE written_at >= ? AND NOT deleted",
            since_us,
        )


# --------------------------------------------------------------------------- one pass


@dataclass
class PassResult:
    engines: str
    name: str
    docs: int
    written: int
    elapsed_s: float
    dps: float
    fresh: list[float]
    stages: dict[str, list[float]]
    img_span: list[float]
    beyond: list[float]
    loads: list[str] = field(default_factory=list)
    lag: list[float] = field(default_factory=list)
    cpu: float = 0.0
    wall: float = 1.0
    #: of ``cpu``: the worker processes' share; and what the processes were
    cpu_workers: float = 0.0
    processes: str = "bench process"
    #: where the time went (``bench/e2e_costs.py``): engines' CPU, round trips, handler CPU by cube
    costs: list[str] = field(default_factory=list)
    #: the search index (the indexer cube, this process): written -> searchable per page, its CPU
    #: (analysis and index writes, during the pass and its catch-up), and the catch-up after the last write
    index_lag: list[float] = field(default_factory=list)
    index_cpu_s: float = 0.0
    index_catchup_s: float = 0.0
    #: the engines' CPU over the pass (none on the embedded engines), and what the idle pipeline costs
    #: a second, ours and the engines' (``Costs.measure_idle``)
    engines_cpu: float = 0.0
    idle_ours_per_s: float = 0.0
    idle_engines_per_s: float = 0.0
    #: the documents written when the CPU above was read (``written`` counts those written by the time
    #: the index caught up too, more than these after a timeout): the per-document figures' denominator
    cpu_docs: int = 0
    #: the IDLE span before the passes (``Costs.measure_idle``), and how many processes of ours ran
    idle: Idle | None = None
    process_count: int = 1
    #: TRICKLE: the documents/s its nudges offered (its ``dps`` is what was taken: the capacity when it is less)
    offered_dps: float = 0.0

    def report(self) -> list[str]:
        offered = "  (offered load: the feeds were nudged one by one)" if self.name == "TRICKLE" else ""
        lines = [
            f"== {self.engines} {self.name}: {self.written}/{self.docs} documents in {self.elapsed_s:.2f} s"
            f" = {self.dps:,.0f} documents/s{offered}  ({self.loads[-1] if self.loads else load()})"
        ]
        lines.append(
            f"   freshness feed response -> KV write: p50 {pct(self.fresh, 0.5):.3f} s"
            f"  p99 {pct(self.fresh, 0.99):.3f} s  max {max(self.fresh, default=float('nan')):.3f} s"
        )
        for name, vals in self.stages.items():
            lines.append(
                f"   stage {name:28} p50 {pct(vals, 0.5):7.3f} s  p99 {pct(vals, 0.99):7.3f} s"
                f"  share of freshness {sum(vals) / max(sum(self.fresh), 1e-9):5.1%}"
            )
        if self.img_span:
            share = sum(self.img_span) / max(sum(self.fresh), 1e-9)
            lines.append(
                f"   images' own fetch (partner: 1st request -> last response)"
                f" p50 {pct(self.img_span, 0.5):.3f} s  p99 {pct(self.img_span, 0.99):.3f} s  share {share:.1%}"
            )
        lines.append(
            f"   freshness beyond the images' own fetch: p50 {pct(self.beyond, 0.5):.3f} s"
            f"  p99 {pct(self.beyond, 0.99):.3f} s"
        )
        split = (
            f" = bench {self.cpu - self.cpu_workers:.1f} + workers {self.cpu_workers:.1f}" if self.cpu_workers else ""
        )
        lines.append(
            f"   processes ({self.processes}): {self.cpu:.1f} CPU s over the pass{split}"
            f" ({self.cpu / self.wall:.0%} of one core); {self.cpu / self.docs_for_cpu() * 1000:.2f} ms"
            f" CPU per document"
        )
        lines += self.costs
        lines.append(
            f"   search index: written -> searchable p50 {pct(self.index_lag, 0.5):.3f} s"
            f"  p99 {pct(self.index_lag, 0.99):.3f} s ({len(self.index_lag)} pages); caught up"
            f" {self.index_catchup_s:.1f} s after the last write; indexer CPU {self.index_cpu_s:.1f} s ="
            f" {self.index_ms():.2f} ms per document (of the processes' figure, as far as it ran within the pass)"
        )
        lines.append(
            f"   bench process event-loop lag p50 {pct(self.lag, 0.5) * 1000:.0f} ms"
            f"  p99 {pct(self.lag, 0.99) * 1000:.0f} ms  max {max(self.lag, default=0) * 1000:.0f} ms"
        )
        return lines

    def docs_for_cpu(self) -> int:
        """The documents the pass's CPU was spent on (written when it was read)."""
        return max(self.cpu_docs or self.written, 1)

    def cpu_ms(self, *, idle_out: bool = False) -> float:
        """CPU per document, ms: ours and the engines' together (with the idle pipeline's cost taken out)."""
        cpu = self.cpu + self.engines_cpu
        if idle_out:
            cpu = max(0.0, cpu - (self.idle_ours_per_s + self.idle_engines_per_s) * self.wall)
        return cpu / self.docs_for_cpu() * 1000

    def write_path(self) -> list[str]:
        """The write path's targets for this pass (``WRITE_PATH``): met, or by how much not, beside the baseline."""
        out = []
        for what, limit, baseline in WRITE_PATH.get((self.engines.split(" ", 1)[0], self.name), []):
            if what == "cpu":
                got, ok = self.cpu_ms(), self.cpu_ms() <= limit
                who = "ours + engines'" if self.engines_cpu else "ours"
                label, unit = f"{self.name} CPU per document ({who}) <= {limit} ms", "ms"
                idle_out, index_ms = self.cpu_ms(idle_out=True), self.index_ms()
                extra = f" (idle taken out: {idle_out:.2f} ms; the indexer's {index_ms:.2f} ms in it)"
            elif what == "dps":
                got, ok = self.dps, self.dps >= limit
                label, unit, extra = f"{self.name} documents/s >= {limit:,.0f}", "/s", ""
            else:
                got = pct(self.beyond, 0.99)
                ok = got <= limit
                label, unit, extra = f"{self.name} freshness p99 <= {limit} s beyond images", "s", ""
            digits = 0 if what == "dps" else 2
            distance = "" if ok else f", {abs(got - limit):,.{digits}f} {unit} {'short' if what == 'dps' else 'over'}"
            out.append(
                f"   {'PASS' if ok else 'MISS'}  {label}: {got:,.{digits}f} {unit}{distance}; baseline"
                f" {baseline:,.{digits}f} {unit} ({got / baseline:.2f}x){extra}"
            )
        return out

    def index_ms(self) -> float:
        return self.index_cpu_s / self.docs_for_cpu() * 1000

    def idle_verdict(self) -> list[str]:
        """The idle target (``IDLE_SHARE`` a process), met or by how much not, beside the figure before."""
        if self.idle is None:
            return []
        each = self.idle.ours_per_s() / max(self.process_count, 1)
        ok = each <= IDLE_SHARE
        over = "" if ok else f", {(each - IDLE_SHARE) * 100:.2f} points over"
        line = (
            f"   {'PASS' if ok else 'MISS'}  IDLE CPU of each of our processes <= {IDLE_SHARE:.0%} of a core:"
            f" {each:.2%} ({self.idle.ours_per_s() * 1000:.1f} ms a second over {self.process_count}"
            f" process(es), {self.idle.seconds:.0f} s){over}; baseline {IDLE_BASELINE_SHARE:.0%} (`turbocubes up`,"
            f" one process; {each / IDLE_BASELINE_SHARE:.2f}x)"
        )
        if self.idle.engines_s:
            line += f"; the engines' {self.idle.engines_per_s() * 1000:.1f} ms a second"
        if self.idle.kafka_requests:
            per_s = self.idle.kafka_requests / self.idle.seconds
            line += f", {per_s:.1f} Kafka requests a second (baseline {IDLE_BASELINE_KAFKA_PER_S:.0f}, one process)"
        return [line]

    def verdicts(self) -> list[str]:
        cold_dps, warm_dps, p50_s, p99_s, cold_cpu_ms = TARGETS[self.engines.split(" ", 1)[0]]
        target = warm_dps if self.name == "WARM" else cold_dps
        checks = (
            []
            if self.name == "TRICKLE"
            else [  # TRICKLE's rate is the offered one, not a capacity
                (f"{self.name} documents/s >= {target:,.0f}", self.dps >= target, f"{self.dps:,.0f}"),
            ]
        )
        cpu_ms = self.cpu / self.docs_for_cpu() * 1000
        if self.name == "COLD" and cold_cpu_ms is not None:
            checks.append((f"COLD CPU per document <= {cold_cpu_ms} ms (ours)", cpu_ms <= cold_cpu_ms, f"{cpu_ms:.2f}"))
        checks += [
            (
                f"{self.name} freshness p50 <= {p50_s} s beyond images",
                pct(self.beyond, 0.5) <= p50_s,
                f"{pct(self.beyond, 0.5):.3f} s",
            ),
            (
                f"{self.name} freshness p99 <= {p99_s} s beyond images",
                pct(self.beyond, 0.99) <= p99_s,
                f"{pct(self.beyond, 0.99):.3f} s",
            ),
            (f"{self.name} every document written", self.written >= self.docs, f"{self.written}/{self.docs}"),
        ]
        if self.name == "TRICKLE":
            lag99 = pct(self.index_lag, 0.99)
            checks.append(
                (f"TRICKLE search index lag p99 <= {INDEX_LAG_P99_S} s", lag99 <= INDEX_LAG_P99_S, f"{lag99:.3f} s")
            )
        out = [f"   {'PASS' if ok else 'MISS'}  {what}: {got}" for what, ok, got in checks]
        out += self.write_path()
        if self.name != "TRICKLE" and self.dps > 0:
            # a burst's freshness is its queue: the k-th of n documents waits about k / rate
            out.append(
                f"         (a burst of {self.docs:,} documents drained at {self.dps:,.0f}/s: a document waits"
                f" ~{self.docs / (2 * self.dps):.1f} s for its turn on average; TRICKLE shows freshness"
                f" without that queue)"
            )
        return out


def stall_report(runners: list[Runner]) -> list[str]:
    """What each runner holds when a pass does not finish."""
    out = []
    for r in runners:
        consumer: Any = r.consumer
        paused = consumer.paused() if consumer is not None and hasattr(consumer, "paused") else "?"
        held = r.describe()
        out.append(
            f"   stall? cube {r.cube.name:10} processed {r.stats.processed}  in flight {held.get('in_flight', 0)}"
            f"  held partitions {held.get('held', 0)}  lanes {held.get('lanes', 0)}  breaker open {r.breaker_open}"
            f"  bus failures {r.stats.bus_failures}  paused {paused}"
        )
    return out


async def run_pass(
    engines: str,
    name: str,
    site: PartnerProcess,
    pages: PageTimes,
    start: Callable[[], Awaitable[None]],
    timeout_s: float,
    lag: LoopLag,
    runners: list[Runner],
    processes: Processes | None = None,
    costs: Costs | None = None,
    new_images: bool = False,
) -> PassResult:
    processes = processes or Processes(None)
    docs = sum(site.counts)
    lag.take()
    queue = RunQueue()
    queue.begin(processes.pids())
    if costs is not None:
        await costs.begin()
    cpu0, workers0 = processes.cpu()
    index_cpu0 = _index_cpu()
    t_start = time.time()
    since = int(t_start * 1_000_000)
    await start()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    written = 0
    loads: list[str] = []
    lags: list[float] = []
    last = (t_start, 0)
    while written < docs and loop.time() < deadline:
        await asyncio.sleep(PROGRESS_EVERY_S)  # a progress interval, not a synchronization
        written = await pages.count_since(since)
        counts = await site.call("/_bench/counts")
        now = time.time()
        rate = (written - last[1]) / max(now - last[0], 1e-9)
        last = (now, written)
        loads.append(load())
        lags += (recent := lag.take())
        print(
            f"   [{engines} {name} {now - t_start:6.1f} s] written {written:>6}/{docs}  ({rate:,.0f}/s now)"
            f"  partner: {counts['feeds']} feed / {counts['images']} image requests so far"
            f"  loop lag max {max(recent, default=0) * 1000:.0f} ms  {loads[-1]}",
            flush=True,
        )
    here, workers = processes.cpu()
    cpu_workers = workers - workers0
    cpu = here - cpu0 + cpu_workers
    wall = time.time() - t_start
    # the documents that CPU was spent on, counted now (more are written while the index catches up)
    written = await pages.count_since(since)
    cost_lines = [queue.end(wall)]
    if costs is not None:
        cost_lines += await costs.end(
            documents=written,
            new_images=2 * docs if new_images else 0,
            ours_cpu_s=cpu,
            bench_cpu_s=here - cpu0,
            wall_s=wall,
        )
    if written < docs:
        print(f"   [{engines} {name}] TIMEOUT after {timeout_s:.0f} s: {written}/{docs} written", flush=True)
        for line in stall_report(runners):
            print(line, flush=True)
    caught = time.time()
    while await pages.index_pending() and loop.time() < deadline + timeout_s:  # noqa: ASYNC110 (another process's table)
        await asyncio.sleep(0.1)  # polling the index's queue, not a synchronization
    index_catchup_s, index_cpu_s = time.time() - caught, _index_cpu() - index_cpu0
    index_lag = await pages.index_lags(since)
    rows = await pages.rows_since(since)
    stats = await site.call("/_bench/stats")
    feed_times = [t for _h, t, status in stats["feed_hits"] if t >= t_start and status == 200]
    t0 = min(feed_times) if feed_times else t_start
    t1 = max((r[4] for r in rows), default=since) / 1e6
    elapsed = max(t1 - t0, 1e-9)
    spans: dict[tuple[str, str], tuple[float, float]] = {}
    for host, path, arrived, sent in stats["image_hits"]:
        if arrived < t_start:
            continue
        story = path.rsplit("/", 1)[1].split("-", 1)[0]
        key = (host, story)
        lo, hi = spans.get(key, (arrived, sent))
        spans[key] = (min(lo, arrived), max(hi, sent))
    fresh: list[float] = []
    stages: dict[str, list[float]] = {"feed -> parsed": [], "parsed -> media ready": [], "media ready -> written": []}
    img_span: list[float] = []
    beyond: list[float] = []
    orders: list[float] = []
    caches: list[float] = []
    for url, seen, parsed, ready, wrote in rows:
        if seen is None or wrote is None:
            continue
        f = (wrote - seen) / 1e6
        fresh.append(f)
        if parsed is not None:
            stages["feed -> parsed"].append((parsed - seen) / 1e6)
            if ready is not None:
                stages["parsed -> media ready"].append((ready - parsed) / 1e6)
        if ready is not None:
            stages["media ready -> written"].append((wrote - ready) / 1e6)
        parts = urlsplit(url)
        span = spans.get(((parts.hostname or "").lower(), parts.path.rsplit("/", 1)[1]))
        own = (span[1] - span[0]) if span is not None else 0.0
        if span is not None:
            img_span.append(own)
            if parsed is not None and ready is not None:
                # the media stage split around the images' own fetch: ordering vs. caching + release
                orders.append(span[0] - parsed / 1e6)
                caches.append(ready / 1e6 - span[1])
        beyond.append(f - own)
    if orders:
        stages["  parsed -> 1st image request"] = orders
        stages["  last image sent -> ready"] = caches
    return PassResult(
        engines,
        name,
        docs,
        len(rows),
        elapsed,
        len(rows) / elapsed,
        fresh,
        stages,
        img_span,
        beyond,
        loads,
        lags,
        cpu,
        wall,
        cpu_workers,
        processes.describe(),
        cost_lines,
        index_lag,
        index_cpu_s,
        index_catchup_s,
        costs.last_engines_s if costs is not None else 0.0,
        costs.idle.ours_per_s() if costs is not None and costs.idle is not None else 0.0,
        costs.idle.engines_per_s() if costs is not None and costs.idle is not None else 0.0,
        written,
        costs.idle if costs is not None else None,
        len(processes.pids()),
    )


def _index_cpu() -> float:
    """The indexer cube's CPU so far (it runs in this process: its counter, cubes/indexer/metrics.py)."""
    return REGISTRY.get_sample_value("turbocubes_search_index_cpu_seconds_total") or 0.0


# --------------------------------------------------------------------------- one engine set


async def run_engine_set(
    engines: str,
    settings: Settings,
    site: PartnerProcess,
    timeout_s: float,
    profile: str = "",
    probe: Probe | None = None,
    trickle_s: float = 0.0,
    workers: int = 1,
    idle_s: float = 0.0,
    heap_mode: str = "settled",
) -> list[PassResult]:
    resolver = PartnerResolver()
    cube_cpu = CubeCpu()
    if workers > 1:  # each worker serves /metrics on base + its index: the bench reads their counters
        settings = settings.replace(runtime={"metrics_port": free_port_base(workers)})
    pool: WorkerPool | None = None
    lag = LoopLag()
    profiler: Any = None
    side: list[asyncio.Task[None]] = []
    deps = await open_deps(settings, resolver=resolver)
    hops = HopProbe() if probe is not None else None
    if hops is not None:
        hops.wrap_bus(deps.bus)
    pages = PageTimes(settings.store.url)
    runners: list[Runner] = []
    tasks: list[asyncio.Task[Any]] = []
    results: list[PassResult] = []
    try:
        await ensure_topics(deps, CUBES)
        if probe is not None:
            probe.wrap_stores(await deps.stores())
        for name in CUBES:
            cube = await registry.build(name, settings, deps)
            if probe is not None and cube.handler is not None:
                cube = dataclasses.replace(cube, handler=probe.wrap(f"handler {name}", cube.handler))
            runners.append(Runner(cube_cpu.instrument(cube), deps))
        HEAPS[heap_mode]()  # settled: as `up` does once its cubes are built (its workers always: cubes/worker.py)
        tasks = [asyncio.create_task(r.run(), name=f"cube:{r.cube.name}") for r in runners]
        if workers > 1:
            # the same settings (overrides included); the hidden --worker mode adds the PartnerResolver
            pool = WorkerPool(
                settings, registry.replicable(CUBES), workers - 1, command=(sys.executable, SCRIPT, WORKER_FLAG)
            )
            await pool.start()
            await wait_for_workers(runners, deps, workers)
            print(f"   workers: pids {', '.join(map(str, pool.pids))} run {', '.join(pool.cubes)}", flush=True)
        processes = Processes(pool)
        ports = [settings.runtime.metrics_port + i for i in range(1, workers)] if pool is not None else []
        # only the engines ops/ started under $TURBOCUBES_VAR (the machine may run other people's); none embedded
        costs = Costs(
            Counters(ports),
            cube_cpu,
            owner=os.environ.get("TURBOCUBES_VAR"),
            engines=not engines.startswith("embedded"),
        )
        stores = await deps.stores()
        await pages.open()
        urls = site.feed_urls()

        feeds = FeedRegistry.from_settings(settings, stores.feeds, deps.publish, resolver=resolver)

        async def register() -> None:
            for url in urls:
                try:
                    await feeds.register(url, fmt="rss", services=["news"])
                except RegistrationRefused as exc:
                    raise RuntimeError(f"feed {url} refused: {exc.message}") from None

        def edition(n: int, spread_s: float = 0.0, new_images: bool = False) -> Callable[[], Awaitable[None]]:
            async def start() -> None:
                await site.call(f"/_bench/edition?n={n}{'&images=new' if new_images else ''}", "POST")

                async def nudge() -> None:
                    for url in urls:
                        # an operator's "fetch now" (the scheduler's own re-poll is an hour away here)
                        await feeds.fetch_now(feed_id_for(None, canonical_url(url)))
                        if spread_s:
                            await asyncio.sleep(spread_s / len(urls))  # pacing the offered load, not a sync

                if spread_s:
                    side.append(asyncio.create_task(nudge()))
                else:
                    await nudge()

            return start

        passes: list[tuple[str, Callable[[], Awaitable[None]], bool]] = [
            ("COLD", register, True),
            ("WARM", edition(2), False),
        ]
        if trickle_s > 0:
            passes.append(("TRICKLE", edition(3, trickle_s, new_images=True), True))
        print(
            f"-- {engines}: {sum(site.counts)} documents x 2 images on {site.hosts} hosts;"
            f" {processes.describe()}; {load()}",
            flush=True,
        )
        if idle_s > 0:
            idle = await costs.measure_idle(idle_s, lambda: sum(processes.cpu()))
            for line in idle.report():
                print(line, flush=True)
        lag.start()
        for name, start, new_images in passes:
            if profile:
                from pyinstrument import Profiler

                # CPU of this thread only (async_mode disabled: time awaiting shows as the selector, idle)
                profiler = Profiler(interval=0.002, async_mode="disabled")
                profiler.start()
            res = await run_pass(
                engines, name, site, pages, start, timeout_s, lag, runners, processes, costs, new_images
            )
            if profiler is not None:
                _save_profile(profiler, f"{profile}-{engines}-{name.lower()}.txt")
                profiler = None
            if name == "TRICKLE":
                res.offered_dps = res.docs / trickle_s
            results.append(res)
            probed = (probe.report() if probe is not None else []) + (hops.report() if hops is not None else [])
            for line in res.report() + probed:
                print(line, flush=True)
            dead = [t for t in tasks if t.done()]
            for t in dead:
                print(f"   cube task {t.get_name()} ended: {t.exception() if not t.cancelled() else 'cancelled'}")
            if pool is not None and (gone := [d for d in pool.describe() if not d["running"]]):
                print(f"   worker process(es) ended: {gone}", flush=True)
        where = " (in the bench process; the workers' share is not counted)" if pool is not None else ""
        for r in runners:
            print(
                f"   cube {r.cube.name:10} processed {r.stats.processed:>7}  retried {r.stats.retried:>4}"
                f"  dead-lettered {r.stats.dead_lettered:>4}{where}",
                flush=True,
            )
    finally:
        lag.stop()
        for t in side:
            t.cancel()
        if profiler is not None:
            profiler.stop()
        for r in runners:
            r.stop()
        stopping = asyncio.create_task(pool.stop()) if pool is not None else None
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=settings.runtime.shutdown_timeout_s)
            for t in pending:
                t.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        if stopping is not None:
            for problem in await stopping:
                print(f"   {problem}", flush=True)
        await pages.close()
        await deps.close()
    return results


def _save_profile(profiler: Any, path: str) -> None:
    profiler.stop()
    Path(path).write_text(profiler.output_text(unicode=False, color=False), encoding="utf-8")
    print(f"   profile written to {path}", flush=True)


#: ``--set`` experiments: section -> {key: value}, applied over the bench's settings
OVERRIDES: dict[str, dict[str, Any]] = {}


def base_settings() -> Settings:
    return _base_settings().replace(**OVERRIDES)


def _base_settings() -> Settings:
    return Settings().replace(
        http={"allowlist": ["127.0.0.1/32"]},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 10.0},
        # the passes start by ordering each feed fetched now; the scheduler's own re-polls (every few minutes on
        # the default interval) would fetch the next edition early for some hosts and blur the passes
        scheduler={"websub_port": 0, "min_interval_s": 3_600.0},
        # the crawler answers a feed asked again within this window from its last fetch, and a requester
        # it already served gets *nothing* (cubes/crawler/coalesce.py): the WARM pass's nudge of a feed
        # fetched < 60 s earlier (the scheduler re-polls during a slow COLD pass) would be dropped until
        # the scheduler's lease ran out. Every image here is distinct, so a short window costs nothing.
        crawler={"host_overrides": {"*" + PARTNER_SUFFIX: dict(GENEROUS_LANE)}, "coalesce_window_s": 1.0},
    )


async def embedded(
    site: PartnerProcess,
    timeout_s: float,
    profile: str = "",
    probe: Probe | None = None,
    trickle_s: float = 0.0,
    workers: int = 1,
    idle_s: float = 0.0,
    heap_mode: str = "settled",
) -> list[PassResult]:
    tmp = Path(tempfile.mkdtemp(prefix="tc-e2e-"))
    try:
        settings = base_settings().replace(
            bus={"url": f"sqlite:///{tmp}/bus.db"},
            store={"url": f"sqlite:///{tmp}/store.db"},
            cdn={"url": f"file://{tmp}/cdn"},
            blobs={"url": f"file://{tmp}/blobs"},
        )
        label = "embedded" + ("" if heap_mode == "settled" else f" (heap {heap_mode})")
        return await run_engine_set(
            label, settings, site, timeout_s, profile, probe, trickle_s, workers, idle_s, heap_mode=heap_mode
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _default_heap() -> None:
    """CPython's collector as a program that never settles it has it (a settled run before undone)."""
    gc.unfreeze()
    gc.set_threshold(*DEFAULT_GC_THRESHOLD)


#: the garbage collector of the bench process for a run: as ``up`` sets it, or as CPython starts
HEAPS: dict[str, Callable[[], None]] = {"settled": heap.settle, "default": _default_heap}
DEFAULT_GC_THRESHOLD = gc.get_threshold()


#: PostgreSQL's commits as the real engines run them: durable (the server as ops/postgres/start runs
#: it), or the old setting -- synchronous_commit=off, per session, accepted by store.accept_lossy_commits
#: (fsync stays as the server has it: on)
COMMITS = {"durable": "", "lossy": "synchronous_commit=off"}


async def real(
    site: PartnerProcess,
    timeout_s: float,
    profile: str = "",
    probe: Probe | None = None,
    trickle_s: float = 0.0,
    workers: int = 1,
    idle_s: float = 0.0,
    commits: str = "durable",
) -> list[PassResult]:
    uid = uuid.uuid4().hex[:12]
    kafka = os.environ["TURBOCUBES_TEST_KAFKA"]
    postgres = os.environ["TURBOCUBES_TEST_POSTGRES"]
    s3 = urlsplit(os.environ["TURBOCUBES_TEST_S3"])
    endpoint = parse_qs(s3.query)["endpoint"][0]
    bucket = f"e2e-{uid}"
    prefix = f"e2e-{uid}."
    schema = f"e2e_{uid}"
    tmp = Path(tempfile.mkdtemp(prefix="tc-e2e-"))
    settings = base_settings().replace(
        bus={"url": f"{kafka}{'&' if '?' in kafka else '?'}prefix={prefix}"},
        store={
            "url": f"{postgres}{'&' if '?' in postgres else '?'}schema={schema}"
            + (f"&{COMMITS[commits]}" if COMMITS[commits] else ""),
            "accept_lossy_commits": bool(COMMITS[commits]),
        },
        cdn={"url": f"s3://{bucket}?endpoint={endpoint}", "public_base_url": f"{endpoint}/{bucket}"},
        blobs={"url": f"file://{tmp}/blobs"},
    )
    label = "kafka+postgres+s3" + ("" if commits == "durable" else f" (commits {commits})")
    try:
        return await run_engine_set(label, settings, site, timeout_s, profile, probe, trickle_s, workers, idle_s)
    finally:
        await cleanup_real(settings, kafka, postgres, schema, prefix)
        shutil.rmtree(tmp, ignore_errors=True)


async def cleanup_real(settings: Settings, kafka: str, postgres: str, schema: str, prefix: str) -> None:
    """Drop what the run made: the S3 bucket, the PostgreSQL schema, the Kafka topics under the prefix."""
    from shared.blobs import open_blobs

    with contextlib.suppress(Exception):
        cdn = await open_blobs(settings.cdn.url, public_base_url=settings.cdn.public_base_url)
        try:
            destroy = getattr(cdn, "destroy", None)
            if destroy is not None:
                await destroy()
        finally:
            await cdn.close()
        print(f"   cleanup: S3 bucket {settings.cdn.url.split('?')[0]} removed", flush=True)
    with contextlib.suppress(Exception):
        import asyncpg

        from shared.stores.postgres import split_schema

        dsn, _ = split_schema(postgres)
        conn = await asyncpg.connect(dsn.replace("postgresql://", "postgres://", 1))
        try:
            # what the run left in PostgreSQL, by table (docs/capacity.md sizes the database from it)
            sizes = await conn.fetch(
                "SELECT c.relname, pg_total_relation_size(c.oid) AS bytes, c.reltuples FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'"
                " ORDER BY bytes DESC LIMIT 8",
                schema,
            )
            print(
                "   PostgreSQL by table (bytes with indexes, ~rows): "
                + ", ".join(f"{r['relname']} {r['bytes']:,} ({max(0, int(r['reltuples'])):,})" for r in sizes),
                flush=True,
            )
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        finally:
            await conn.close()
        print(f"   cleanup: PostgreSQL schema {schema} dropped", flush=True)
    with contextlib.suppress(Exception):
        from aiokafka.admin import AIOKafkaAdminClient

        admin = AIOKafkaAdminClient(bootstrap_servers=urlsplit(kafka).netloc)
        await admin.start()
        try:
            mine = [t for t in await admin.list_topics() if t.startswith(prefix)]
            if mine:
                await admin.delete_topics(mine)
        finally:
            await admin.close()
        print(f"   cleanup: {len(mine)} Kafka topics under {prefix} deleted", flush=True)


# --------------------------------------------------------------------------- main


async def amain(args: argparse.Namespace) -> int:
    # SIGTERM (timeout, kill) ends like Ctrl-C: the run is cancelled and every `finally` cleans up
    # (the temp dir, the S3 bucket, the PostgreSQL schema, the Kafka topics)
    me = asyncio.current_task()
    assert me is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, me.cancel)
    wanted = [e.strip() for e in args.engines.split(",") if e.strip()]
    site = PartnerProcess(args.hosts, args.docs)
    print(
        f"e2e bench: {args.docs} documents x 2 images, {args.hosts} hosts; starting the partner site "
        f"(making {2 * args.docs} JPEGs); {load()}",
        flush=True,
    )
    site.start()
    timeout_s = args.timeout or max(120.0, args.docs / 20)
    probe = Probe() if args.probe else None
    results: list[tuple[bool, PassResult]] = []
    try:
        if "embedded" in wanted:
            for n, heap_mode in enumerate(h.strip() for h in args.heap.split(",") if h.strip()):
                if n:  # a fresh partner for each run: its edition back at 1, its hit logs clean
                    await site.stop()
                    site = PartnerProcess(args.hosts, args.docs)
                    site.start()
                results += [
                    (True, r)
                    for r in await embedded(
                        site, timeout_s, args.profile, probe, args.trickle, args.workers, args.idle, heap_mode
                    )
                ]
        if "real" in wanted:
            env = ("TURBOCUBES_TEST_KAFKA", "TURBOCUBES_TEST_POSTGRES", "TURBOCUBES_TEST_S3")
            if all(os.environ.get(v) for v in env):
                for commits in [c.strip() for c in args.commits.split(",") if c.strip()]:
                    # a fresh partner: each real-engine run starts cold again (its image registry is empty,
                    # but the partner's edition must be back at 1 and its hit logs clean)
                    await site.stop()
                    site = PartnerProcess(args.hosts, args.docs)
                    site.start()
                    # the real engines' TRICKLE offers REAL_TRICKLE_RATE documents/s (their target's load)
                    real_trickle_s = sum(site.counts) / args.real_trickle_rate if args.trickle > 0 else 0.0
                    results += [
                        (False, r)
                        for r in await real(
                            site,
                            timeout_s,
                            args.profile,
                            probe,
                            real_trickle_s,
                            args.workers,
                            args.idle,
                            commits=commits,
                        )
                    ]
            else:
                print(f"-- real engines skipped: set {', '.join(env)}", flush=True)
    finally:
        await site.stop()
    print(f"\n== summary ({load()})", flush=True)
    missed = 0
    seen: set[str] = set()
    for _, r in results:
        if r.engines not in seen:  # the engine set's IDLE span, once, before its passes
            seen.add(r.engines)
            for line in r.idle_verdict():
                print(f"{r.engines:18} {line.strip()}")
                missed += line.lstrip().startswith("MISS")
        print(
            f"{r.engines:18} {r.name}: {r.dps:7,.0f} documents/s  freshness p50 {pct(r.fresh, 0.5):.3f} s"
            f"  p99 {pct(r.fresh, 0.99):.3f} s  (beyond images p50 {pct(r.beyond, 0.5):.3f} s"
            f"  p99 {pct(r.beyond, 0.99):.3f} s)"
        )
        for line in r.verdicts():
            print(line)
            missed += line.lstrip().startswith("MISS")
    for line in trickle_loads([r for _, r in results]):
        print(line)
    for line in commit_ratios([r for _, r in results]) + heap_ratios([r for _, r in results]):
        print(line)
    return 1 if missed else 0


def trickle_loads(results: list[PassResult]) -> list[str]:
    """Each TRICKLE pass's offered load against what it took: taken at less than the offered rate, the
    pipeline was above its capacity, a queue formed, and the TRICKLE freshness is mostly that queue's wait."""
    out = []
    for r in results:
        if r.name != "TRICKLE" or not r.offered_dps:
            continue
        share = r.dps / r.offered_dps
        verdict = (
            "a queue formed: above capacity, the freshness is mostly its wait"
            if share < 0.9
            else "kept up: the freshness is a document's own"
        )
        out.append(
            f"{r.engines:18} TRICKLE offered {r.offered_dps:,.0f} documents/s with new images and took"
            f" {r.dps:,.0f}/s ({share:.2f}x): {verdict}"
        )
    return out


def commit_ratios(results: list[PassResult]) -> list[str]:
    """Each real-engine pass with durable commits against the same pass with the old setting, same run."""
    by = {(r.engines, r.name): r for r in results}
    out = []
    for (engines, name), lossy in by.items():
        if "(commits " not in engines:
            continue
        durable = by.get((engines.split(" ", 1)[0], name))
        if durable is None or not lossy.dps:
            continue
        old = engines.split(" ", 1)[1]
        p50, p99 = (pct(durable.fresh, q) for q in (0.5, 0.99))
        was50, was99 = (pct(lossy.fresh, q) for q in (0.5, 0.99))
        out.append(
            f"{name}: durable commits {durable.dps:,.0f} documents/s against {lossy.dps:,.0f} with {old}"
            f" ({durable.dps / lossy.dps:.2f}x); freshness p50 {p50:.3f} s against {was50:.3f} s,"
            f" p99 {p99:.3f} s against {was99:.3f} s"
        )
    return out


def heap_ratios(results: list[PassResult]) -> list[str]:
    """Each embedded pass's CPU per document with the collector settled against CPython's default, same run."""
    by = {(r.engines, r.name): r for r in results}
    out = []
    for (engines, name), default in by.items():
        settled = by.get(("embedded", name))
        if engines != "embedded (heap default)" or settled is None or not default.cpu:
            continue
        now, was = (r.cpu / r.docs_for_cpu() * 1000 for r in (settled, default))
        out.append(
            f"{name}: collector settled {now:.2f} ms CPU per document against {was:.2f} with CPython's default"
            f" ({now / was:.2f}x); {settled.dps:,.0f} documents/s against {default.dps:,.0f}"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    count_kafka_requests()  # in the workers too: their /metrics carry the counter to Costs
    if argv[:1] == [WORKER_FLAG]:
        # a worker process of run_engine_set: settings and cubes come on stdin (cubes/worker.py)
        return worker_main(argv[1:], resolver=PartnerResolver())
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=10_000, help="documents in all (default 10,000)")
    p.add_argument("--hosts", type=int, default=100, help="partner hosts (default 100)")
    p.add_argument("--engines", default="embedded,real", help="embedded, real, or both (default)")
    p.add_argument(
        "--commits",
        default="durable,lossy",
        help="the real engines' PostgreSQL commits, each a run of its own: durable (as ops/ runs the server)"
        " and lossy (the old synchronous_commit=off, per session), both by default, their ratio printed",
    )
    p.add_argument(
        "--heap",
        default="settled",
        help="the embedded engines' runs, each of its own: settled (the collector as `up` sets it,"
        " shared/runtime/heap.py) and/or default (CPython's), their ratio printed; the workers of"
        " --workers N always settle theirs, so compare with --workers 1",
    )
    p.add_argument("--timeout", type=float, default=0.0, help="seconds per pass (default max(120, docs/20))")
    p.add_argument(
        "--profile",
        default="",
        metavar="PREFIX",
        help="write a pyinstrument CPU profile of each pass to PREFIX-<engines>-<pass>.txt (the bench process only)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=JSON",
        dest="overrides",
        help="change a setting for an experiment, e.g. --set runtime.concurrency=64 (repeatable)",
    )
    p.add_argument(
        "--trickle",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="a third pass, TRICKLE: the next edition, with new images, the feeds nudged one by one"
        " over SECONDS"
        " (a steady offered load: freshness without a 10,000-document queue while it is below capacity, which the"
        " summary compares with COLD's rate;"
        " 0 = no such pass; default 30)",
    )
    p.add_argument(
        "--real-trickle-rate",
        type=float,
        default=REAL_TRICKLE_RATE,
        metavar="DOCS_PER_S",
        help="the real engines' TRICKLE pass offers this many documents/s (their target's load; default"
        " %(default)s); the embedded one spreads its edition over --trickle seconds",
    )
    p.add_argument(
        "--idle",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="before the first pass, every cube started and nothing to do for SECONDS: the CPU a second of our"
        " processes and of the engines (and Kafka requests), taken out of each pass's per-document figure"
        " beside the raw one (0 = not measured; default %(default)s)",
    )
    p.add_argument(
        "--probe",
        action="store_true",
        help="time every cube handler call and store call (wall clock) and print the heaviest (the bench process only)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="processes running the pipeline: this one + N-1 running the replicable cubes, as"
        " `turbocubes up --workers N` (default: the CPU cores, %(default)s; 1 = one process)",
    )
    args = p.parse_args(argv)
    if unknown := {c.strip() for c in args.commits.split(",") if c.strip()} - set(COMMITS):
        p.error(f"--commits: unknown {', '.join(sorted(unknown))} (durable, lossy)")
    if unknown := {h.strip() for h in args.heap.split(",") if h.strip()} - set(HEAPS):
        p.error(f"--heap: unknown {', '.join(sorted(unknown))} (settled, default)")
    if args.docs < 1 or args.hosts < 1:
        p.error("--docs and --hosts must be at least 1")
    if args.workers < 1:
        p.error(f"--workers must be at least 1, not {args.workers}")
    for item in args.overrides:
        key, _, raw = item.partition("=")
        section, _, name = key.partition(".")
        if not name or not raw or not hasattr(Settings(), section):
            p.error(f"--set {item!r}: expected SECTION.KEY=JSON, e.g. runtime.concurrency=64")
        OVERRIDES.setdefault(section, {})[name] = orjson.loads(raw)
    # this process's event loop (runtime.event_loop; the workers' comes from WorkerPool, per engine
    # set): "auto" is uvloop for Kafka, and this one process runs every engine set asked for, so it
    # takes Kafka's only when the real engines are all it runs
    choice = base_settings().runtime.event_loop
    bus = "kafka://" if args.engines.strip() == "real" else "sqlite://"
    print(f"e2e bench: event loop {loop_kind(choice, bus)} (runtime.event_loop = {choice!r})", flush=True)
    try:
        with asyncio.Runner(loop_factory=lambda: new_event_loop(choice, bus)) as runner:
            return runner.run(amain(args))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("e2e bench: interrupted (cleaned up)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
