"""Frontend benchmark: Turbo pages served per second, against a constant-page baseline.

For each store engine (SQLite always; PostgreSQL when ``TURBOCUBES_TEST_POSTGRES``
is set, or ``--postgres URL``): seed ``--pages`` rendered pages through the
kvwriter handler, start the frontend in a server process of its own, and
fetch ``/turbo?url=<random known URL>`` ``--requests`` times over
``--concurrency`` keep-alive connections from one aiohttp client. In the same
run, the same server setup (a process, ``AppRunner`` + ``TCPSite``, no access
log) serving a plain aiohttp handler that returns a constant page of the same
size is measured with the same load generator: the baseline. Prints pages/s
and the ratio. Target: >= 50 % of the baseline on SQLite.

    python bench/frontend.py [--pages 5000] [--requests 20000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import sys
import tempfile
import time
import uuid
from multiprocessing.connection import Connection
from pathlib import Path
from urllib.parse import quote

from aiohttp import ClientSession, TCPConnector, web

sys.path.insert(0, str(Path(__file__).resolve().parent))

TARGET = 0.5


# --------------------------------------------------------------------------- server process


async def _serve(kind: str, store_url: str, body: str, conn: Connection) -> None:
    from cubes.frontend.app import create_app
    from shared.config import Settings
    from shared.stores import open_stores

    stores = None
    if kind == "baseline":
        page = body.encode()

        async def constant(request: web.Request) -> web.Response:
            return web.Response(body=page, content_type="text/html", charset="utf-8")

        app = web.Application()
        app.router.add_get("/turbo", constant)
    else:
        stores = await open_stores(store_url)
        app = create_app(Settings().replace(store={"url": store_url}), stores, None)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    conn.send(runner.addresses[0][1])
    # wait for "stop" without blocking the loop
    await asyncio.get_running_loop().run_in_executor(None, conn.recv)
    await runner.cleanup()
    if stores is not None:
        await stores.close()


def _server_main(kind: str, store_url: str, body: str, conn: Connection) -> None:
    asyncio.run(_serve(kind, store_url, body, conn))


# --------------------------------------------------------------------------- load generator


async def _load(port: int, urls: list[str], n: int, concurrency: int) -> tuple[float, int]:
    """(pages/s, non-200 responses) for ``n`` GETs of random ``urls`` over ``concurrency`` connections."""
    rng = random.Random(42)
    paths = [f"/turbo?url={quote(rng.choice(urls), safe='')}" for _ in range(n)]
    base = f"http://127.0.0.1:{port}"
    bad = 0
    it = iter(paths)

    async with ClientSession(connector=TCPConnector(limit=concurrency)) as http:

        async def worker() -> None:
            nonlocal bad
            for path in it:
                async with http.get(base + path) as r:
                    await r.read()
                    bad += r.status != 200

        warm = paths[: min(500, n)]
        for path in warm:  # warm up: connections, caches, the server's first requests
            async with http.get(base + path) as r:
                await r.read()
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return n / (time.perf_counter() - t0), bad


def _measure(kind: str, store_url: str, body: str, urls: list[str], args: argparse.Namespace) -> float:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_server_main, args=(kind, store_url, body, child), daemon=True)
    proc.start()
    try:
        if not parent.poll(60):
            raise RuntimeError(f"the {kind} server did not start")
        port = parent.recv()
        rate, bad = asyncio.run(_load(port, urls, args.requests, args.concurrency))
        if bad:
            raise RuntimeError(f"{kind}: {bad} responses were not 200")
        return rate
    finally:
        parent.send("stop")
        proc.join(10)
        if proc.is_alive():
            proc.terminate()


# --------------------------------------------------------------------------- seeding


async def _seed(store_url: str, n: int) -> tuple[list[str], str]:
    """Write ``n`` pages through the kvwriter; returns the known URLs and one page's HTML."""
    from kvwriter import make_doc  # bench/kvwriter.py: the same realistic documents

    from cubes.kvwriter.handler import KvwriterHandler
    from shared.config import Settings
    from shared.stores import open_stores

    async with await open_stores(store_url) as stores:
        handler = KvwriterHandler(stores.pages, Settings())
        for start in range(0, n, 500):
            await asyncio.gather(*(handler.handle(make_doc(i)) for i in range(start, min(n, start + 500))))
        urls = await stores.pages.random_urls(n)
        page = await stores.pages.get(urls[0])
        assert page is not None
        return urls, page.html


async def _drop_schema(pg_url: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(pg_url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=5000)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--postgres", default=os.environ.get("TURBOCUBES_TEST_POSTGRES", ""))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        engines = [("sqlite", f"sqlite:///{tmp}/store.db")]
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        if args.postgres:
            sep = "&" if "?" in args.postgres else "?"
            engines.append(("postgresql", f"{args.postgres}{sep}schema={schema}"))
        print(
            f"frontend bench: {args.pages} pages, {args.requests} requests, {args.concurrency} connections, "
            f"cpus={os.cpu_count()}, load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        results = []
        for name, url in engines:
            print(f"  [{name}] seeding {args.pages} pages through the kvwriter ...", flush=True)
            t0 = time.perf_counter()
            urls, body = asyncio.run(_seed(url, args.pages))
            print(f"  [{name}] seeded in {time.perf_counter() - t0:.1f} s; page size {len(body):,} chars", flush=True)
            base = _measure("baseline", url, body, urls, args)
            print(f"  [{name}] baseline (constant page):  {base:,.0f} pages/s", flush=True)
            turbo = _measure("frontend", url, body, urls, args)
            print(f"  [{name}] frontend /turbo?url=:      {turbo:,.0f} pages/s", flush=True)
            results.append((name, turbo, base))
        if args.postgres:
            asyncio.run(_drop_schema(args.postgres, schema))
    for name, turbo, base in results:
        ratio = turbo / base
        verdict = ("OK" if ratio >= TARGET else "MISSED") if name == "sqlite" else "(no target)"
        print(
            f"RESULT frontend [{name}]: {turbo:,.0f} pages/s vs baseline {base:,.0f} pages/s = {ratio:.0%} "
            f"(target >= {TARGET:.0%} on sqlite) {verdict}",
            flush=True,
        )


if __name__ == "__main__":
    main()
