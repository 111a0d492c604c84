"""``turbocubes up --demo --workers 2`` on embedded engines: the demo site stays in the parent, a worker runs
the replicable cubes with the demo's settings, every demo page is written, and both stop cleanly."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from cubes import registry
from cubes.launcher import run_up
from demo.content import build_site
from demo.registration import DEMO_FEED_PATHS
from shared.config import Settings
from shared.stores import Stores, open_stores
from tests.polling import eventually

pytestmark = pytest.mark.slow

ME = f"{socket.gethostname()}:{os.getpid()}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _missing_pages(stores: Stores) -> int | None:
    """Demo pages not written yet; None before the demo registered its feeds."""
    for feed in await stores.feeds.list():
        parts = urlsplit(feed.url)
        if parts.path in DEMO_FEED_PATHS:
            site = build_site(f"http://127.0.0.1:{parts.port}", {})
            urls = [u for source in site.sources for u in source.pages]
            return sum([await stores.pages.get(u) is None for u in urls])
    return None


async def test_up_demo_with_a_worker_writes_every_page_and_stops_cleanly(tmp_path: Path) -> None:
    port = _free_port()
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 5.0, "status_interval_s": 0.5},
        api={"port": 0},
        frontend={"port": port, "public_url": f"http://127.0.0.1:{port}"},
        scheduler={"websub_port": 0},
    )
    stores = await open_stores(settings.store.url)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, demo=True, workers=2, stop_event=stop))
    try:

        async def all_written() -> bool:
            return await _missing_pages(stores) == 0

        await eventually("every demo page to be written", all_written, task)

        async def worker_runs_its_cubes() -> bool:
            snaps = await stores.status.get_status("cube:")
            theirs = {s.data["cube"] for s in snaps if s.data["instance"] != ME}
            return theirs == set(registry.replicable())

        await eventually("the worker to report the replicable cubes (and only those)", worker_runs_its_cubes, task)
        snaps = await stores.status.get_status("cube:")
        mine = {s.data["cube"] for s in snaps if s.data["instance"] == ME}
        assert {"api", "scheduler", "frontend"} <= mine  # the singletons run here only (and a scheduler)
    finally:
        stop.set()
        rc = await asyncio.wait_for(task, 30)
        await stores.close()
    assert rc == 0
