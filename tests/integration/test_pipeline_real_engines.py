"""The whole pipeline on the real engines: Apache Kafka, PostgreSQL and SeaweedFS S3 (docs/architecture.md s.2, s.9).

Every cube runs in this process (``run_up`` with the demo partner site on
127.0.0.1), but the bus is Kafka (topics and groups under a fresh prefix),
the stores are PostgreSQL (a fresh schema) and the CDN is SeaweedFS (a fresh
bucket). Checked: every demo page reaches the KV store; no page refers to an
image outside the S3 CDN; the CDN serves the images it refers to; the
dead-letter topics stay empty.
"""

from __future__ import annotations

import asyncio
import io
import re
import socket
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
from PIL import Image

from cubes.launcher import run_up
from demo.content import Site, build_site
from demo.registration import DEMO_FEED_PATHS
from shared import contracts
from shared.blobs import open_blobs
from shared.bus import open_bus
from shared.config import Settings
from shared.stores import Stores, open_stores

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow]

#: the first pass takes a few seconds on embedded engines; Kafka topic creation and group joins add more
DEADLINE_S = 120.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _demo_site(stores: Stores) -> Site | None:
    for feed in await stores.feeds.list():
        parts = urlsplit(feed.url)
        if parts.path in DEMO_FEED_PATHS:
            return build_site(f"http://127.0.0.1:{parts.port}", {})
    return None


async def test_demo_pipeline_on_kafka_postgres_and_s3(
    tmp_path: Path, kafka_url: str, postgres_url: str, s3_url: str, uid: str
) -> None:
    s3 = urlsplit(s3_url)
    endpoint = parse_qs(s3.query)["endpoint"][0]
    bucket = f"pipe-{uid}"
    cdn_url = f"s3://{bucket}?endpoint={endpoint}"
    cdn_base = f"{endpoint}/{bucket}"
    sep = "&" if "?" in kafka_url else "?"
    bus_url = f"{kafka_url}{sep}prefix=pipe-{uid}."
    store_url = f"{postgres_url}{'&' if '?' in postgres_url else '?'}schema=pipe_{uid}"
    port = _free_port()
    settings = Settings().replace(
        bus={"url": bus_url},
        store={"url": store_url},
        cdn={"url": cdn_url, "public_base_url": cdn_base},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 10.0},
        api={"port": 0},
        scheduler={"websub_port": 0},
        frontend={"port": port, "public_url": f"http://127.0.0.1:{port}"},
    )
    cdn = await open_blobs(cdn_url, public_base_url=cdn_base)
    stores = await open_stores(store_url)
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, demo=True, stop_event=stop))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE_S
    try:
        site = None
        written: dict[str, str] = {}
        while True:
            if task.done():
                pytest.fail(f"run_up ended early with {task.result()}")
            assert loop.time() < deadline, f"only {len(written)} pages written in {DEADLINE_S:.0f} s"
            site = site or await _demo_site(stores)
            if site is not None:
                pages = [u for source in site.sources for u in source.pages]
                for url in pages:
                    if url not in written and (page := await stores.pages.get(url)) is not None:
                        written[url] = page.html
                if len(written) == len(pages):
                    break
            await asyncio.sleep(0.5)  # a poll interval, not a synchronization

        images = set()
        for url, html in written.items():
            for src in re.findall(r'<img[^>]+src="([^"]+)"', html):
                assert src.startswith(cdn_base + "/"), f"{url} refers to {src}, outside the CDN"
                images.add(src)
        assert images, "no page carries an image"
        async with aiohttp.ClientSession() as http:
            for src in sorted(images)[:10]:
                async with http.get(src) as resp:
                    assert resp.status == 200, src
                    assert "immutable" in resp.headers.get("Cache-Control", "")
                    with Image.open(io.BytesIO(await resp.read())) as img:
                        img.verify()

        bus = open_bus(bus_url)
        await bus.start()
        try:
            for topic in contracts.catalog():
                dead = sum((await bus.end_offsets(contracts.dlq_topic(topic))).values())
                assert dead == 0, f"{dead} dead letter(s) in {topic}.dlq"
        finally:
            await bus.close()
    finally:
        stop.set()
        rc = await asyncio.wait_for(task, 60)
        await stores.close()
        destroy = getattr(cdn, "destroy", None)
        if destroy is not None:
            await destroy()
        await cdn.close()
    assert rc == 0
