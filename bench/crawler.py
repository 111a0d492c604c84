"""Crawler benchmark (docs/architecture.md sections 6 and 9): are the per-host lanes polite *and* parallel?

200 virtual hosts x 25 URLs on one local aiohttp server (Host-based routing,
``tests.partners.PartnerServer``, in a child process so the partner's CPU is
not the crawler's), each host limited to 5 requests/s (burst 1).
By default the real crawler cube runs on the runtime (embedded SQLite bus):
the requests are published to ``crawl.requests`` first, then the cube drains
them (coalescer, robots.txt — a 404 here, fetched through the lane like any
request — the host's lane, the guarded fetch); the time is the drain's.
``--direct`` drives ``CrawlHandler.crawl`` without the bus instead, one worker
per host. Printed:

* total fetches/s of the crawler path;
* the highest per-host rate observed *server-side* (most requests in any
  sliding 1 s window) and the number of hosts over their limit (target: 0);
* aggregate throughput as a share of the sum of per-host limits (target >= 80 %);
* the crawler process's CPU time per request (the machine may be shared: a
  starved process cannot keep 1000 lanes' slots, whatever the lanes do);
* the baseline: a raw aiohttp client (no politeness, 200 connections) against
  the same server in the same run, its CPU per request, and the ratio.

``--batch-size`` and ``--parallel-hosts`` set ``runtime.batch_size`` /
``crawler.parallel_hosts`` for the runtime run.

    .venv/bin/python bench/crawler.py [--hosts 200] [--urls 25] [--rate 5] [--direct]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp

from cubes.crawler.handler import CrawlHandler
from shared.clock import SystemClock
from shared.config import Settings
from shared.http import Fetcher
from shared.messages import CrawlKind, CrawlRequest, FetchStatus
from tests.partners import PartnerServer, max_in_window
from tests.partners.fixtures import PartnerResolver


async def _progress(done: list[int], total: int, label: str, stop: asyncio.Event) -> None:
    start = time.perf_counter()
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0)
        el = time.perf_counter() - start
        print(f"  [{label}] {done[0]}/{total} in {el:.1f} s ({done[0] / el:.0f}/s)", flush=True)


async def crawl_run(server: RemotePartner, hosts: list[str], urls: int, rate: float) -> tuple[float, int, int]:
    settings = Settings().replace(
        http={"allowlist": ["127.0.0.1/32"]},
        crawler={"rate": rate, "burst": 1, "concurrency": 2, "coalesce_window_s": 60.0, "max_rate": max(rate, 10.0)},
    )
    clock = SystemClock()
    fetcher = Fetcher(settings, resolver=PartnerResolver(), clock=clock)
    handler = CrawlHandler(settings, fetcher, clock)
    done = [0]
    failed = [0]

    async def worker(host: str) -> None:
        for j in range(urls):
            url = server.url(host, f"/page/{j}")
            req = CrawlRequest(kind=CrawlKind.page, url=url, host=host, requesters=["bench"], requested_at=clock.now())
            result = await handler.crawl(req)
            if result is None or result.status is not FetchStatus.ok:
                failed[0] += 1
            done[0] += 1

    stop = asyncio.Event()
    progress = asyncio.create_task(_progress(done, len(hosts) * urls, "crawler", stop))
    start = time.perf_counter()
    await asyncio.gather(*(worker(h) for h in hosts))
    elapsed = time.perf_counter() - start
    stop.set()
    await progress
    await fetcher.close()
    return elapsed, done[0], failed[0]


async def runtime_run(
    server: RemotePartner, hosts: list[str], urls: int, rate: float, batch_size: int = 500, parallel: int = 256
) -> tuple[float, int, int]:
    import tempfile

    from cubes.crawler.cube import build
    from shared.runtime import Output, ensure_topics, open_deps, run_cube

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings().replace(
            bus={"url": f"sqlite:///{tmp}/bus.db"},
            store={"url": f"sqlite:///{tmp}/store.db"},
            blobs={"url": f"file://{tmp}/blobs"},
            http={"allowlist": ["127.0.0.1/32"]},
            crawler={"rate": rate, "burst": 1, "concurrency": 2, "parallel_hosts": parallel},
            runtime={"metrics_port": 0, "batch_size": batch_size},
        )
        deps = await open_deps(settings, resolver=PartnerResolver())
        try:
            await ensure_topics(deps, ["crawler"])
            now = deps.clock.now()
            reqs = [
                CrawlRequest(
                    kind=CrawlKind.page, url=server.url(h, f"/page/{j}"), host=h, requesters=["bench"], requested_at=now
                )
                for j in range(urls)
                for h in hosts
            ]
            for i in range(0, len(reqs), 1000):
                await deps.publish([Output("crawl.requests", r) for r in reqs[i : i + 1000]])
            print(f"  published {len(reqs)} requests; running the crawler cube", flush=True)
            cube = await build(settings, deps)
            start = time.perf_counter()
            stats = await run_cube(cube, deps, group="bench", max_messages=len(reqs), idle_timeout=30.0)
            elapsed = time.perf_counter() - start
            if cube.on_stop is not None:
                await cube.on_stop()
        finally:
            await deps.close()
    return elapsed, stats.processed, stats.failed + stats.dead_lettered


async def raw_run(server: RemotePartner, hosts: list[str], urls: int) -> float:
    conn = aiohttp.TCPConnector(resolver=PartnerResolver(), limit=200)
    done = [0]
    queue = [server.url(h, f"/page/{j}") for j in range(urls) for h in hosts]

    async with aiohttp.ClientSession(connector=conn) as session:

        async def worker() -> None:
            while queue:
                url = queue.pop()
                async with session.get(url) as resp:
                    await resp.read()
                done[0] += 1

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(200)))
        return time.perf_counter() - start


class RemotePartner:
    """The partner server in a child process; its request log comes back over a pipe."""

    def __init__(self) -> None:
        self._conn, child = mp.Pipe()
        self._proc = mp.get_context("spawn").Process(target=_serve, args=(child,), daemon=True)
        self._proc.start()
        self.port: int = self._conn.recv()

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"

    def _ask(self, what: str) -> object:
        self._conn.send(what)
        return self._conn.recv()

    def hit_times(self) -> dict[str, list[float]]:
        return self._ask("hits")  # type: ignore[return-value]

    def reset(self) -> None:
        self._ask("reset")

    def stop(self) -> None:
        self._ask("stop")
        self._proc.join(5)


def _serve(conn: Connection) -> None:
    async def run() -> None:
        server = await PartnerServer().start()
        conn.send(server.port)
        loop = asyncio.get_running_loop()
        while True:
            what = await loop.run_in_executor(None, conn.recv)
            if what == "hits":
                conn.send({h: server.hit_times(h) for h in server.hosts})
            elif what == "reset":
                server.reset()
                conn.send(None)
            else:
                await server.stop()
                conn.send(None)
                return

    asyncio.run(run())


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--urls", type=int, default=25)
    ap.add_argument("--rate", type=float, default=5.0)
    ap.add_argument(
        "--direct",
        action="store_true",
        help="drive the crawler path without the bus (default: the crawler cube on the runtime)",
    )
    ap.add_argument("--batch-size", type=int, default=500, help="runtime.batch_size")
    ap.add_argument("--parallel-hosts", type=int, default=4096, help="crawler.parallel_hosts")
    args = ap.parse_args()
    hosts = [f"h{i}.partner.test" for i in range(args.hosts)]
    server = RemotePartner()
    try:
        print(f"crawler: {args.hosts} hosts x {args.urls} URLs, {args.rate:g} requests/s per host", flush=True)
        cpu0 = time.process_time()
        if not args.direct:
            elapsed, done, failed = await runtime_run(
                server, hosts, args.urls, args.rate, args.batch_size, args.parallel_hosts
            )
        else:
            elapsed, done, failed = await crawl_run(server, hosts, args.urls, args.rate)
        cpu = time.process_time() - cpu0
        times = server.hit_times()
        per_host = {h: max_in_window(times.get(h, []), 1.0) for h in hosts}
        hits = sum(len(times.get(h, [])) for h in hosts)
        worst = max(per_host.values())
        violations = sum(1 for v in per_host.values() if v > args.rate)
        limit_sum = args.rate * args.hosts
        fps = done / elapsed
        print(f"crawler fetches/s:          {fps:.0f}  ({done} URLs, {failed} not ok, {elapsed:.2f} s)")
        print(f"server hits (incl. robots): {hits}  -> {hits / elapsed:.0f}/s")
        print(f"highest per-host rate:      {worst} requests in a 1 s window (limit {args.rate:g})")
        print(f"per-host violations:        {violations} of {args.hosts} hosts")
        print(f"share of sum of limits:     {hits / elapsed / limit_sum:.1%} of {limit_sum:.0f}/s (target >= 80%)")
        print(f"client CPU per fetch:       {cpu / hits * 1e6:.0f} us")

        server.reset()
        print("baseline: raw aiohttp client, no politeness, 200 connections", flush=True)
        cpu0 = time.process_time()
        raw_elapsed = await raw_run(server, hosts, args.urls)
        raw_cpu = time.process_time() - cpu0
        raw_fps = args.hosts * args.urls / raw_elapsed
        print(f"raw aiohttp fetches/s:      {raw_fps:.0f}  ({raw_elapsed:.2f} s)")
        print(f"raw client CPU per fetch:   {raw_cpu / (args.hosts * args.urls) * 1e6:.0f} us")
        print(f"ratio crawler / raw:        {fps / raw_fps:.2f}  (by design capped at {limit_sum:.0f}/s)")
        ok = violations == 0 and hits / elapsed >= 0.8 * limit_sum
        print("RESULT:", "PASS" if ok else "FAIL")
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
