"""Benchmark: accepted uploads/s vs rejected (429) requests/s of the partner API.

One run, three phases against one server process:

1. a tenant with generous limits uploads small RSS bodies (~1 KB): every
   202 means the payload is durable on the bus and a task row exists;
2. a throttled tenant (1 request/s, burst 1) sends the same uploads: all
   but the first are refused with 429 by the gate, before the body is read;
3. the framework floor: a bare aiohttp handler in the same process answering
   every upload with the same 429 (what any aiohttp rejection costs at least).

For each phase it prints the rate, the statuses and the server's CPU time per
request (all its threads, from ``time.process_time`` in the server process):
on a shared machine the CPU cost is the steadier measure of "a rejection
costs <= 1/10 of an acceptance"; the rates are printed too.

The server runs in its own process (embedded engines in a temporary
directory unless ``--bus`` / ``--store`` say otherwise); the load comes from
a minimal keep-alive HTTP/1.1 client on asyncio streams, far cheaper than
aiohttp's own client. Target: rejected/s >= 10 x accepted/s.

    .venv/bin/python bench/api.py [--seconds 5] [--concurrency 32]
        [--bus kafka://127.0.0.1:19092] [--store postgresql://turbocubes:turbocubes@127.0.0.1:54329/turbocubes?schema=bench_api]

(with PostgreSQL give a fresh ``?schema=``: the bench leaves its tables there)
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from shared.config import Settings  # noqa: E402
from shared.stores import TenantLimits, open_stores  # noqa: E402

BASELINE = "target: rejected/s >= 10 x accepted/s (a rejection costs <= 1/10 of an acceptance)"


def _rss(i: int) -> bytes:
    items = "".join(
        f"<item><title>Bench item {i}-{k}</title><link>https://bench.example/p/{i}/{k}</link>"
        f"<description>Some text for item {k} of upload {i}.</description></item>"
        for k in range(5)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>Bench</title>{items}</channel></rss>'.encode()


def _serve(settings: Settings, ready: Any, control: Any) -> None:
    """Child process: serve the API; answer "cpu" with its CPU seconds (all threads) until "stop"."""
    from aiohttp import web

    from cubes.api.app import create_app
    from shared.runtime import ensure_topics, open_deps

    async def main() -> None:
        deps = await open_deps(settings)
        await ensure_topics(deps)
        runner = web.AppRunner(create_app(settings, deps), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        # the framework floor: a bare aiohttp app answering every upload with the same 429
        bare = web.Application()
        bare.router.add_post("/api/v1/uploads", _bare_429)
        floor = web.AppRunner(bare, access_log=None)
        await floor.setup()
        await web.TCPSite(floor, "127.0.0.1", 0).start()
        ready.put((runner.addresses[0][1], floor.addresses[0][1]))
        loop = asyncio.get_running_loop()
        while (await loop.run_in_executor(None, control.recv)) != "stop":
            control.send(time.process_time())
        await floor.cleanup()
        await runner.cleanup()
        await deps.close()

    asyncio.run(main())


async def _bare_429(request: Any) -> Any:
    from aiohttp import web

    return web.json_response(
        {"error": "rate_limited", "message": "too many requests", "retry_after": 1},
        status=429,
        headers={"Retry-After": "1", "RateLimit-Policy": '"default";q=1;w=1', "RateLimit": '"default";r=0;t=1'},
    )


async def _tenants(settings: Settings) -> tuple[str, str]:
    async with await open_stores(settings.store.url) as stores:
        tokens = []
        for name, limits in (
            ("generous", TenantLimits(rps=1e6, burst=1_000_000, bytes_per_s=1e12)),
            ("throttled", TenantLimits(rps=1.0, burst=1, bytes_per_s=1e12)),
        ):
            # one host each: verifying a host makes its verifier the only owner
            t = await stores.tenants.create_tenant(name)
            await stores.tenants.add_host(t.tenant_id, f"{name}.example")
            await stores.tenants.set_verified(t.tenant_id, f"{name}.example", True)
            await stores.tenants.set_limits(t.tenant_id, limits)
            tokens.append(await stores.tenants.issue_token(t.tenant_id))
    return tokens[0], tokens[1]


async def _phase(
    base_port: int, token: str, host: str, seconds: float, concurrency: int, expect: int, cpu: Any
) -> dict[str, Any]:
    """``concurrency`` keep-alive connections sending uploads back to back for ``seconds``.

    A minimal HTTP/1.1 client on asyncio streams: the load generator must cost far less
    than the server it measures (aiohttp's client costs about as much as its server).
    """
    counts: dict[int, int] = {}
    latencies: list[float] = []
    head = (
        f"POST /api/v1/uploads?host={host}&format=rss HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/rss+xml\r\n"
    )
    deadline = time.perf_counter() + seconds

    async def worker(w: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", base_port)
        i = 0
        try:
            while time.perf_counter() < deadline:
                body = _rss(w * 1_000_000 + i)
                started = time.perf_counter()
                writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
                await writer.drain()
                status_line, _, rest = (await reader.readuntil(b"\r\n\r\n")).partition(b"\r\n")
                length = 0
                for line in rest.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                latencies.append(time.perf_counter() - started)
                code = int(status_line.split()[1])
                counts[code] = counts.get(code, 0) + 1
                i += 1
        finally:
            writer.close()

    cpu.send("cpu")
    cpu_before = cpu.recv()
    began = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(concurrency)))
    elapsed = time.perf_counter() - began
    cpu.send("cpu")
    server_cpu = cpu.recv() - cpu_before
    total = sum(counts.values())
    return {
        "counts": counts,
        "rate": counts.get(expect, 0) / elapsed,
        "cpu_us": server_cpu / total * 1e6 if total else 0.0,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else 0.0,
        "p99_ms": statistics.quantiles(latencies, n=100)[98] * 1000 if len(latencies) > 100 else 0.0,
    }


async def run(args: argparse.Namespace, root: Path) -> tuple[float, float]:
    settings = Settings().replace(
        bus={"url": args.bus or f"sqlite:///{root}/bus.db"},
        store={"url": args.store or f"sqlite:///{root}/store.db"},
        blobs={"url": f"file://{root}/blobs"},
        # the bench measures the throttle, not the bulkhead or the shedding
        api={"concurrency": 1024, "shed_lag": 10**12},
    )
    print(f"[bench/api] engines: bus={settings.bus.url} store={settings.store.url}", flush=True)
    generous, throttled = await _tenants(settings)
    ctx = mp.get_context("spawn")
    ready = ctx.Queue()
    control, child_end = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(settings, ready, child_end), daemon=True)
    server.start()
    try:
        port, floor_port = await asyncio.get_running_loop().run_in_executor(None, ready.get, True, 60)
        print(
            f"[bench/api] server on 127.0.0.1:{port}; {args.concurrency} connections, {args.seconds} s per phase",
            flush=True,
        )
        # warm-up: connections, SQLite pages, code paths
        await _phase(port, generous, "generous.example", 1.0, 4, 202, control)
        print("[bench/api] phase 1: accepted uploads (generous tenant) ...", flush=True)
        acc = await _phase(port, generous, "generous.example", args.seconds, args.concurrency, 202, control)
        print(
            f"  statuses {acc['counts']} -> {acc['rate']:.0f} accepted/s, server CPU {acc['cpu_us']:.0f} us/request"
            f" (p50 {acc['p50_ms']:.1f} ms, p99 {acc['p99_ms']:.1f} ms)",
            flush=True,
        )
        print("[bench/api] phase 2: rejected uploads (throttled tenant: 1 req/s, burst 1) ...", flush=True)
        rej = await _phase(port, throttled, "throttled.example", args.seconds, args.concurrency, 429, control)
        print(
            f"  statuses {rej['counts']} -> {rej['rate']:.0f} rejected/s, server CPU {rej['cpu_us']:.0f} us/request"
            f" (p50 {rej['p50_ms']:.1f} ms, p99 {rej['p99_ms']:.1f} ms)",
            flush=True,
        )
        print("[bench/api] phase 3: the framework floor (a bare aiohttp handler answering 429) ...", flush=True)
        bare = await _phase(floor_port, throttled, "throttled.example", args.seconds, args.concurrency, 429, control)
        print(
            f"  statuses {bare['counts']} -> {bare['rate']:.0f} answered/s, server CPU {bare['cpu_us']:.0f} us/request",
            flush=True,
        )
    finally:
        control.send("stop")
        server.join(15)
        if server.is_alive():
            server.terminate()
    rate_ratio = rej["rate"] / acc["rate"] if acc["rate"] else float("inf")
    cost_ratio = acc["cpu_us"] / rej["cpu_us"] if rej["cpu_us"] else float("inf")
    print()
    print(f"accepted uploads/s        : {acc['rate']:10.0f}   server CPU {acc['cpu_us']:7.0f} us each")
    print(f"rejected (429) requests/s : {rej['rate']:10.0f}   server CPU {rej['cpu_us']:7.0f} us each")
    print(f"rate ratio                : {rate_ratio:10.1f} x")
    print(f"cost ratio (CPU)          : {cost_ratio:10.1f} x   ({BASELINE})")
    print(
        f"aiohttp floor (bare 429)  : {bare['rate']:10.0f}/s server CPU {bare['cpu_us']:7.0f} us each"
        f" -> the gate itself costs {rej['cpu_us'] - bare['cpu_us']:.0f} us per rejection"
    )
    print("PASS" if min(rate_ratio, cost_ratio) >= 10 else "BELOW TARGET")
    return rate_ratio, cost_ratio


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=5.0, help="duration of each phase")
    p.add_argument("--concurrency", type=int, default=32, help="concurrent client connections")
    p.add_argument("--bus", help="bus URL (default: an embedded SQLite log in a temp dir)")
    p.add_argument("--store", help="store URL (default: embedded SQLite in a temp dir)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="tc-bench-api-") as tmp:
        ratios = asyncio.run(run(args, Path(tmp)))
    return 0 if min(ratios) >= 10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
