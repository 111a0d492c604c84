"""The whole pipeline stops while every CPU is saturated, on Kafka, PostgreSQL and S3.

A full run once failed at a load of 7-9: every check passed, but shutdown did
not finish within 60 s, stuck on the status-snapshot task inside a PostgreSQL
call, and the connection it left open failed a later test with a
ResourceWarning. Here the demo pipeline runs on the real engines, writes its
first pages, and is stopped while CPU burners (started by the test, two per
core) hold every core: ``run_up`` must return, with exit code 0, and leave
nothing open (``filterwarnings = error`` fails the test on a ResourceWarning).
The deterministic half — a store call that ignores its cancellation — is
``tests/unit/cubes/test_launcher_shutdown.py``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from cubes.launcher import run_up
from shared.blobs import open_blobs
from shared.config import Settings
from shared.errors import StoreUnavailable
from shared.stores import Stores, open_stores

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow]

#: the demo's first pages on the real engines (topic creation, group joins) on a busy machine
FIRST_PAGES_S = 180.0
#: a hang detector: the stop's own deadlines (shutdown_timeout_s + the wrap-up, cancel and close
#: grace of shared/runtime/shutdown.py) end well within this, a stop waiting on a stuck task never
STOP_WITHIN_S = 120.0
#: a little more than "running": snapshots and commits are in flight when the stop comes
SATURATED_FOR_S = 3.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _pages_written(stores: Stores) -> bool:
    try:
        return bool(await stores.status.page_counts())
    except StoreUnavailable:  # a shared server busy with everyone's tests: ask again
        return False


@contextmanager
def cpu_burners(n: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` processes that spin a core each until the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(timeout=30)


async def test_the_pipeline_stops_while_every_cpu_is_busy(
    tmp_path: Path, kafka_url: str, postgres_url: str, s3_url: str, uid: str
) -> None:
    s3 = urlsplit(s3_url)
    endpoint = parse_qs(s3.query)["endpoint"][0]
    bucket = f"stop-{uid}"
    sep = "&" if "?" in kafka_url else "?"
    store_url = f"{postgres_url}{'&' if '?' in postgres_url else '?'}schema=stop_{uid}"
    port = _free_port()
    settings = Settings().replace(
        bus={"url": f"{kafka_url}{sep}prefix=stop-{uid}."},
        store={"url": store_url},
        cdn={"url": f"s3://{bucket}?endpoint={endpoint}", "public_base_url": f"{endpoint}/{bucket}"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        # snapshots every 0.2 s: one is in flight on PostgreSQL when the stop comes, as in the hang
        runtime={"metrics_port": 0, "shutdown_timeout_s": 10.0, "status_interval_s": 0.2},
        api={"port": 0},
        scheduler={"websub_port": 0},
        frontend={"port": port, "public_url": f"http://127.0.0.1:{port}"},
    )
    cdn = await open_blobs(settings.cdn.url, public_base_url=settings.cdn.public_base_url)
    stores = await open_stores(store_url)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, demo=True, stop_event=stop))
    loop = asyncio.get_running_loop()
    try:
        deadline = loop.time() + FIRST_PAGES_S
        while not await _pages_written(stores):
            if task.done():
                pytest.fail(f"run_up ended early with {task.result()}")
            assert loop.time() < deadline, f"no page written within {FIRST_PAGES_S:.0f} s"
            await asyncio.sleep(0.5)  # a poll interval, not a synchronization
        with cpu_burners(2 * (os.cpu_count() or 1)):
            await asyncio.sleep(SATURATED_FOR_S)  # the pipeline working on a saturated machine
            stop.set()
            asked = loop.time()
            done, _ = await asyncio.wait({task}, timeout=STOP_WITHIN_S)
            print(f"stopped in {loop.time() - asked:.1f} s with every CPU busy (load {os.getloadavg()[0]:.1f})")
        assert task in done, f"shutdown did not finish within {STOP_WITHIN_S:.0f} s with every CPU busy"
        assert task.result() == 0
    finally:
        stop.set()
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=30)
        await stores.close()
        destroy = getattr(cdn, "destroy", None)
        if destroy is not None:
            await destroy()
        await cdn.close()
    gc.collect()  # a connection left open warns (and fails the test) now, not in a later test
