"""Faults, with nothing lost: the OS-process topology under fire (docs/architecture.md sections 8
and 9).

``ops/topology/start`` runs every cube as its own OS process (two parsers, two
crawlers) on the shared Kafka, PostgreSQL and SeaweedFS, under a fresh topic
prefix, schema and buckets. A partner site (``faults_site.py``, a real aiohttp
server on 127.0.0.1) serves an RSS feed of 200 items carrying 400 images, and
is registered the way ``turbocubes feeds add`` does it. While the documents
flow:

(a) one parser process is killed with SIGKILL and started again (re-running
    ``ops/topology/start``, which starts only what is missing);
(b) the Kafka broker is stopped and started again on its data (``ops/kafka/stop``,
    ``ops/kafka/start``);
(c) SeaweedFS is unavailable for 10 s;
(d) the partner answers 503 with ``Retry-After`` for a while;
(e) PostgreSQL is killed with kill -9 during the cold load and started again
    (crash recovery on its data): a commit it acknowledged must survive, or a page
    whose parser hash is recorded, or a release the delay cube confirmed, is lost
    for good (``synchronous_commit=off`` lost 3 and 2 parked documents this way);

and some items are edited twice. At the end: every item is in the KV store
exactly once at its latest version, every image of every page is served by the
CDN, nothing is left parked in Delay, every dead-letter topic is empty, and the
partner never saw more requests in any 1 s window than its configured rate.
``test_faults_catalog.py`` kills PostgreSQL during a catalog's first load.

Every engine comes back on its data (``ops/s3/start`` and ``ops/kafka/start`` keep it
unless given ``--fresh``; ``faults_engines.Engines`` checks that each did).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from PIL import Image

from shared.stores import Stores
from shared.urls import canonical_url
from tests.integration.faults_engines import Engines, alive, pid_in
from tests.integration.faults_site import FaultSite, image_paths, max_in_window
from tests.integration.faults_topology import FaultTopology, until

ITEMS = 200
#: the partner's configured rate (requests / s, measured server-side); the crawler gets less, so that
#: a token bucket's burst on top of its rate still fits: rate + burst <= PARTNER_RATE
PARTNER_RATE = 8
CRAWLER_RATE = 5
CRAWLER_BURST = 2
#: how long the partner answers 503, and the Retry-After it sends meanwhile
UNAVAILABLE_S = 6.0
RETRY_AFTER_S = 2
S3_OUTAGE_S = float(os.environ.get("TURBOCUBES_TEST_S3_OUTAGE_S", "10"))
#: how long PostgreSQL stays dead after its kill -9
POSTGRES_DOWN_S = 5.0
#: each fault waits for the pipeline to have made this much progress first (bounded by this)
PROGRESS_TIMEOUT_S = 60.0
#: everything settled after the last fault (400 images at 5/s take 80 s on their own)
SETTLE_TIMEOUT_S = 120.0
#: how often the settling phase looks at the dead-letter topics (a listing + end offsets of ~15 topics)
DLQ_CHECK_S = 5.0
#: stop waiting at the first dead letter (a loss, whatever else happens)
FAIL_FAST = True

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow, pytest.mark.timeout(900)]


# --------------------------------------------------------------------------- helpers


_FEEDS_PROCESSED = re.compile(r"^turbocubes_processed_total\{([^}]*)\}\s+([0-9.e+]+)$", re.M)


async def _feed_parser(topology_dir: Path) -> dict[str, Any]:
    """The parser instance that has parsed our feed (its ``crawl.feeds`` partition is assigned to it)."""
    state = json.loads((topology_dir / "topology.json").read_text())
    parsers = [i for i in state["instances"] if i["cube"] == "parser"]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
        for inst in parsers:
            async with http.get(inst["metrics_url"] + "/metrics") as resp:
                text = await resp.text()
            for labels, value in _FEEDS_PROCESSED.findall(text):
                if 'topic="crawl.feeds"' in labels and float(value) > 0:
                    return dict(inst)
    raise AssertionError(f"no parser has parsed a feed yet: {[i['name'] for i in parsers]}")


# --------------------------------------------------------------------------- the test


async def test_nothing_is_lost_under_faults(kafka_url: str, postgres_url: str, s3_url: str, uid: str) -> None:
    topo = FaultTopology(
        kafka_url,
        postgres_url,
        s3_url,
        uid,
        # a fast scheduler, so edits are seen within seconds. The crawler's coalescing window keeps its
        # default (60 s): it delays an edit by up to a minute here, but it is what a retried fetch meets
        TURBOCUBES_SCHEDULER_MIN_INTERVAL_S="2",
        TURBOCUBES_SCHEDULER_MAX_INTERVAL_S="6",
        TURBOCUBES_SCHEDULER_HOST_GAP_S="1",
        TURBOCUBES_DELAY_SWEEP_INTERVAL_S="1",
        TURBOCUBES_CRAWLER_RATE=str(CRAWLER_RATE),
        TURBOCUBES_CRAWLER_BURST=str(CRAWLER_BURST),
    )
    topology_dir, cdn_base = topo.dir, topo.cdn_base
    passed = False
    engines = Engines()
    site = FaultSite(ITEMS, rate=PARTNER_RATE, retry_after_s=RETRY_AFTER_S)
    site.start()
    feed_url = site.url("/feed.xml")
    urls = {n: canonical_url(site.item_url(n)) for n in range(ITEMS)}
    stores: Stores | None = None
    timeline: list[str] = []
    t_start = time.monotonic()

    def note(msg: str) -> None:
        line = f"[{time.monotonic() - t_start:6.1f}s] {msg}"
        timeline.append(line)
        print(line, flush=True)

    def image_hits(status: int = 200) -> int:
        return sum(1 for h in site.hits() if h.path.startswith("/img/") and h.status == status)

    def feed_fetches_after(t: float) -> int:
        return sum(1 for h in site.hits() if h.path == "/feed.xml" and h.status == 200 and h.at > t)

    async def progress(what: str, n_images: int) -> None:
        async def enough() -> bool:
            return image_hits() >= n_images

        await until(f"{what} ({n_images} images fetched; {image_hits()} so far)", enough, PROGRESS_TIMEOUT_S)

    try:
        await topo.start()
        note("topology up")
        await topo.add_feed(feed_url, "rss")
        note(f"feed registered: {feed_url}")

        # (c) SeaweedFS unavailable for 10 s while images flow: the CDN cube cannot upload, and the
        # crawler cannot put the next edition of the feed (over inline_body_max) into the blob store
        await progress("images before the S3 outage", 40)
        await engines.s3_stop()
        note(f"(c) SeaweedFS stopped ({engines.how}; {image_hits()} images fetched)")
        await asyncio.sleep(S3_OUTAGE_S)  # the length of the outage, not a synchronization
        t0 = time.monotonic()
        await engines.s3_start()
        note(f"(c) SeaweedFS answering again after {time.monotonic() - t0:.1f} s ({image_hits()} images fetched)")

        # (e) PostgreSQL killed with kill -9 in the middle of the cold load, then started again: crash
        # recovery replays its WAL, and whatever it acknowledged before the kill must be there
        await progress("images before PostgreSQL is killed", 70)
        pid = await engines.postgres_kill()
        note(f"(e) PostgreSQL postmaster pid {pid} killed with kill -9 ({image_hits()} images fetched)")
        await asyncio.sleep(POSTGRES_DOWN_S)  # the length of the outage, not a synchronization
        t0 = time.monotonic()
        await engines.postgres_start()
        note(f"(e) PostgreSQL recovered and answering after {time.monotonic() - t0:.1f} s")

        # (d) the partner answers 503 + Retry-After for a while
        await progress("images before the partner's outage", 110)
        site.unavailable(UNAVAILABLE_S)
        note(f"(d) partner answers 503 + Retry-After {RETRY_AFTER_S} for {UNAVAILABLE_S:.0f} s")

        # (a) SIGKILL the parser that parses our feed, right as it gets a new edition, then start it again
        await progress("images before the parser is killed", 150)
        victim = await _feed_parser(topology_dir)
        edited_at = time.monotonic()
        site.edit(range(0, 50))
        note(f"items 0-49 edited (version 2); the feed's parser is {victim['name']}")

        async def new_feed_fetched() -> bool:
            return feed_fetches_after(edited_at) > 0

        try:
            await until("the edited feed to be fetched", new_feed_fetched, PROGRESS_TIMEOUT_S)
        except AssertionError as exc:
            feed_hits = [f"{h.at - t_start:.1f}s:{h.status}" for h in site.hits() if h.path == "/feed.xml"]
            raise AssertionError(f"{exc}; the feed's requests (time since start: status): {feed_hits}") from None
        os.kill(victim["pid"], signal.SIGKILL)
        note(f"(a) {victim['name']} pid {victim['pid']} killed with SIGKILL ({image_hits()} images fetched)")
        # --only parser: start what is missing and wait for the parsers' health alone (another cube's
        # /healthz may be 503 now, e.g. a DLQ breaker open after the S3 outage: not this step's business)
        t0 = time.monotonic()
        out = await topo.start("--only", "parser")
        new_pid = pid_in(topology_dir / f"{victim['name']}.pid")
        assert new_pid != victim["pid"], out[-2000:]
        assert alive(new_pid), out[-2000:]
        assert out.count(": started pid") == 1, f"only the killed parser is started again:\n{out[-2000:]}"
        assert f"{victim['name']}: started pid" in out, out[-2000:]
        note(f"(a) {victim['name']} restarted as pid {new_pid} in {time.monotonic() - t0:.1f} s")

        # (b) the broker stops and starts again on its data
        t0 = time.monotonic()
        await engines.kafka_stop()
        note(f"(b) kafka stopped in {time.monotonic() - t0:.1f} s ({image_hits()} images fetched)")
        t0 = time.monotonic()
        await engines.kafka_start()
        note(f"(b) kafka started again on its data in {time.monotonic() - t0:.1f} s ({image_hits()} images fetched)")
        site.edit(range(100, 150))
        site.edit(range(0, 25))
        note("items 100-149 edited (version 2), items 0-24 edited again (version 3)")

        # ---------------------------------------------------------------- the end state
        stores = await topo.stores()  # opened after the faults: the kill would have broken its pool
        pages: dict[int, str] = {}
        stale: dict[int, str] = {}

        async def all_written() -> bool:
            assert stores is not None
            for n, url in urls.items():
                if n in pages:
                    continue
                page = await stores.pages.get(url)
                if page is None:
                    continue
                srcs = re.findall(r'<img[^>]+src="([^"]+)"', page.html)
                if site.marker(n) in page.html and len(srcs) == 2 and all(s.startswith(cdn_base + "/") for s in srcs):
                    pages[n] = page.html
                    stale.pop(n, None)
                else:
                    stale[n] = f"title {page.title!r}, images {srcs}"
            return len(pages) == ITEMS

        dead_seen: dict[str, int] = {}
        next_dlq_check = [0.0]

        async def settled_or_dead() -> bool:
            # a dead letter is a loss: no need to wait out the deadline once there is one
            if FAIL_FAST and time.monotonic() >= next_dlq_check[0]:
                next_dlq_check[0] = time.monotonic() + DLQ_CHECK_S
                dead_seen.update(await topo.dead_letters())
                if dead_seen:
                    return True
            return await all_written()

        try:
            took = await until("every item at its latest version with CDN images", settled_or_dead, SETTLE_TIMEOUT_S)
            problem = f"dead letters {dead_seen}" if dead_seen else ""
        except AssertionError as exc:
            problem = str(exc)
        if problem:
            assert stores is not None
            await all_written()  # the latest state, for the message
            missing = [n for n in urls if n not in pages and n not in stale]
            dead = await topo.dead_letters()
            fetched = {h.path for h in site.hits() if h.status == 200}
            unfetched = [p for n in range(ITEMS) for p in image_paths(n) if p not in fetched]
            refused = sorted({h.path for h in site.hits() if h.status == 503})
            raise AssertionError(
                f"{problem}: {len(pages)}/{ITEMS} complete; {len(missing)} never written (e.g. {missing[:10]}); "
                f"{len(stale)} stale or without CDN images (e.g. {list(stale.items())[:5]}); "
                f"{await stores.delay.count()} document(s) parked in Delay; dead letters {dead}; "
                f"images never fetched: {unfetched[:10]}; answered 503: {refused}; logs in {topology_dir}\n"
                + "\n".join(timeline)
                + "\n"
                + topo.log_digest()
            )
        note(f"every item written at its latest version ({took:.1f} s after the last fault)")

        # exactly once: one row per item URL, and no other row (no stray or duplicate URL forms)
        conn = await asyncpg.connect(postgres_url)
        try:
            rows = await conn.fetch(f'SELECT url, count(*) AS n FROM "{topo.schema}".pages GROUP BY url')
        finally:
            await conn.close()
        per_url = {r["url"]: r["n"] for r in rows}
        assert set(per_url) == set(urls.values()), sorted(set(per_url) ^ set(urls.values()))[:10]
        assert all(n == 1 for n in per_url.values()), {u: n for u, n in per_url.items() if n != 1}

        # every image of every page served by the CDN: the bytes are a real image
        srcs = sorted({s for html in pages.values() for s in re.findall(r'<img[^>]+src="([^"]+)"', html)})
        assert len(srcs) == 2 * ITEMS, f"{len(srcs)} distinct CDN images for {ITEMS} items"
        bad: list[str] = []
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
            sem = asyncio.Semaphore(16)

            async def fetch(src: str) -> None:
                async with sem, http.get(src) as resp:
                    body = await resp.read()
                    if resp.status != 200:
                        bad.append(f"{src}: HTTP {resp.status}")
                        return
                    try:
                        with Image.open(io.BytesIO(body)) as img:
                            img.verify()
                    except Exception as exc:  # any decoder error means a broken image
                        bad.append(f"{src}: not an image ({exc})")

            await asyncio.gather(*(fetch(s) for s in srcs))
        assert not bad, f"{len(bad)} CDN image(s) not served: {bad[:10]}"

        # nothing parked for good: every document Delay held was released, and every dead-letter topic is empty
        assert await stores.delay.count() == 0, "documents left parked in Delay"
        dead = await topo.dead_letters()
        assert not dead, f"dead letters: {dead}"

        # the partner never saw more than its rate, whatever happened to the crawlers
        hits = site.hits()
        worst = max_in_window([h.at for h in hits], 1.0)
        note(
            f"partner: {len(hits)} requests, at most {worst} in any 1 s (rate {PARTNER_RATE}); "
            f"{sum(1 for h in hits if h.status == 503)} answered 503"
        )
        assert worst <= PARTNER_RATE, f"the partner saw {worst} requests within 1 s (its rate is {PARTNER_RATE})"
        # the 503 window was really hit, and every image was fetched at least once
        assert any(h.status == 503 for h in hits), "the partner's outage met no request"
        fetched = {h.path for h in hits if h.status == 200}
        assert all(p in fetched for n in range(ITEMS) for p in image_paths(n))
        passed = True
    finally:
        problems = await engines.restore()
        site.stop()
        if stores is not None:
            await stores.close()
        print("\n".join(timeline))
        rc_stop, out_stop = await topo.close(passed)
    assert not problems, problems
    assert rc_stop == 0, out_stop
