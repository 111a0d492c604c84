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

and some items are edited twice. At the end: every item is in the KV store
exactly once at its latest version, every image of every page is served by the
CDN, every dead-letter topic is empty, and the partner never saw more requests
in any 1 s window than its configured rate.

About (c): ``ops/s3/start`` wipes SeaweedFS's data dir on every cold start, which
would destroy every object of every test sharing the server (ours included: a loss
no pipeline could prevent). ``faults_engines.Engines`` stops it with ``ops/s3/stop``
and starts the same command line again on its data (see there) until
``ops/s3/start`` keeps its data.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import asyncpg
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from PIL import Image

from shared import contracts
from shared.blobs import open_blobs
from shared.bus import open_bus
from shared.stores import Stores, open_stores
from shared.urls import canonical_url
from tests.integration.faults_engines import OPS, REPO, Engines, alive, pid_in, run
from tests.integration.faults_site import FaultSite, image_paths, max_in_window

ITEMS = 200
#: the partner's configured rate (requests / s, measured server-side); the crawler gets less, so that
#: a token bucket's burst on top of its rate still fits: rate + burst <= PARTNER_RATE
PARTNER_RATE = 8
CRAWLER_RATE = 5
CRAWLER_BURST = 2
#: how long the partner answers 503, and the Retry-After it sends meanwhile
UNAVAILABLE_S = 6.0
RETRY_AFTER_S = 2
S3_OUTAGE_S = 10.0
#: twelve processes import the package on two cores while other tests run
TOPOLOGY_WAIT_S = 90
TOPOLOGY_STOP_S = 15
#: each fault waits for the pipeline to have made this much progress first (bounded by this)
PROGRESS_TIMEOUT_S = 60.0
#: everything settled after the last fault (400 images at 5/s take 80 s on their own)
SETTLE_TIMEOUT_S = 120.0
POLL_S = 0.25
#: how often the settling phase looks at the dead-letter topics (a listing + end offsets of ~15 topics)
DLQ_CHECK_S = 5.0
#: stop waiting at the first dead letter (a loss, whatever else happens)
FAIL_FAST = True

pytestmark = [pytest.mark.kafka, pytest.mark.postgres, pytest.mark.s3, pytest.mark.slow, pytest.mark.timeout(480)]


# --------------------------------------------------------------------------- helpers


def _with_query(url: str, param: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{param}"


async def _until(what: str, check: Callable[[], Awaitable[bool]], limit_s: float) -> float:
    """Poll ``check`` until true; the seconds it took. The sleep is a poll interval, not a synchronization."""
    t0 = time.monotonic()
    while not await check():
        if time.monotonic() - t0 > limit_s:
            raise AssertionError(f"timed out after {limit_s:.0f} s waiting for {what}")
        await asyncio.sleep(POLL_S)
    return time.monotonic() - t0


def _log_digest(topology_dir: Path, lines: int = 12) -> str:
    """Errors and the last lines of every cube's log, for a failure message."""
    out = []
    for log in sorted(topology_dir.glob("*.log")):
        text = log.read_text(errors="replace").splitlines()
        # the cubes' own complaints; aiokafka's reconnect noise during the broker's restart is left out
        errors = [
            line
            for line in text
            if re.search(r"ERROR|Traceback|dead.letter|dlq", line, re.I)
            and "aiokafka" not in line
            and "Unclosed AIOKafka" not in line
        ]
        out.append(f"--- {log.name}: {len(errors)} error line(s)\n" + "\n".join(errors[-lines:]))
    return "\n".join(out)


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


async def _dead_letters(kafka_url: str, bus_url: str, prefix: str) -> dict[str, int]:
    """Records in every ``*.dlq`` topic under ``prefix`` (each catalog topic's DLQ must exist)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=urlsplit(kafka_url).netloc)
    await admin.start()
    try:
        listed = await admin.list_topics()
    finally:
        await admin.close()
    dlqs = sorted({t[len(prefix) :] for t in listed if t.startswith(prefix) and t.endswith(".dlq")})
    assert {contracts.dlq_topic(t) for t in contracts.catalog()} <= set(dlqs), dlqs
    bus = open_bus(bus_url)
    await bus.start()
    try:
        return {t: sum((await bus.end_offsets(t)).values()) for t in dlqs}
    finally:
        await bus.close()


# --------------------------------------------------------------------------- the test


async def test_nothing_is_lost_under_faults(kafka_url: str, postgres_url: str, s3_url: str, uid: str) -> None:
    endpoint = parse_qs(urlsplit(s3_url).query)["endpoint"][0]
    cdn_bucket, blobs_bucket = f"faults-{uid}", f"faults-{uid}-blobs"
    cdn_url = f"s3://{cdn_bucket}?endpoint={endpoint}"
    blobs_url = f"s3://{blobs_bucket}?endpoint={endpoint}"
    cdn_base = f"{endpoint}/{cdn_bucket}"
    bus_url = _with_query(kafka_url, f"prefix=faults-{uid}.")
    schema = f"faults_{uid}"
    store_url = _with_query(postgres_url, f"schema={schema}")
    prefix = f"faults-{uid}."
    # not tmp_path: pytest keeps only its last three base dirs, and other runs on this machine rotate them
    # away within minutes; the cubes' logs are kept here when the test fails
    var = Path(tempfile.mkdtemp(prefix=f"turbocubes-faults-{uid}-"))
    topology_dir = var / "topology"
    passed = False

    env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCUBES_")}
    env.update(
        {
            "TURBOCUBES_VAR": str(var),
            "TURBOCUBES_BUS_URL": bus_url,
            "TURBOCUBES_STORE_URL": store_url,
            "TURBOCUBES_STORE_POOL_SIZE": "2",
            "TURBOCUBES_CDN_URL": cdn_url,
            "TURBOCUBES_CDN_PUBLIC_BASE_URL": cdn_base,
            "TURBOCUBES_BLOBS_URL": blobs_url,
            # the partner is on loopback, which the SSRF guard refuses unless allowed
            "TURBOCUBES_HTTP_ALLOWLIST": "127.0.0.1/32",
            # every server on a free port: other test runs use this machine at the same time
            "TURBOCUBES_TOPOLOGY_METRICS_BASE": "0",
            "TURBOCUBES_API_PORT": "0",
            "TURBOCUBES_FRONTEND_PORT": "0",
            "TURBOCUBES_SCHEDULER_WEBSUB_PORT": "0",
            "TURBOCUBES_TOPOLOGY_WAIT_S": str(TOPOLOGY_WAIT_S),
            "TURBOCUBES_TOPOLOGY_STOP_S": str(TOPOLOGY_STOP_S),
            # a fast scheduler, so edits are seen within seconds. The crawler's coalescing window keeps its
            # default (60 s): it delays an edit by up to a minute here, but it is what a retried fetch meets
            "TURBOCUBES_SCHEDULER_MIN_INTERVAL_S": "2",
            "TURBOCUBES_SCHEDULER_MAX_INTERVAL_S": "6",
            "TURBOCUBES_SCHEDULER_HOST_GAP_S": "1",
            "TURBOCUBES_DELAY_SWEEP_INTERVAL_S": "1",
            "TURBOCUBES_CRAWLER_RATE": str(CRAWLER_RATE),
            "TURBOCUBES_CRAWLER_BURST": str(CRAWLER_BURST),
        }
    )
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

        await _until(f"{what} ({n_images} images fetched; {image_hits()} so far)", enough, PROGRESS_TIMEOUT_S)

    try:
        rc, out = await run([str(OPS / "topology" / "start"), "--no-engines"], env, TOPOLOGY_WAIT_S + 60)
        assert rc == 0, f"ops/topology/start failed:\n{out[-4000:]}"
        note("topology up")
        stores = await open_stores(store_url)

        rc, out = await run(
            [
                str(REPO / ".venv" / "bin" / "turbocubes"),
                "feeds",
                "add",
                feed_url,
                "--format",
                "rss",
                "--service",
                "news",
            ],
            env,
            60,
        )
        assert rc == 0, f"turbocubes feeds add failed:\n{out[-3000:]}"
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
            await _until("the edited feed to be fetched", new_feed_fetched, PROGRESS_TIMEOUT_S)
        except AssertionError as exc:
            feed_hits = [f"{h.at - t_start:.1f}s:{h.status}" for h in site.hits() if h.path == "/feed.xml"]
            raise AssertionError(f"{exc}; the feed's requests (time since start: status): {feed_hits}") from None
        os.kill(victim["pid"], signal.SIGKILL)
        note(f"(a) {victim['name']} pid {victim['pid']} killed with SIGKILL ({image_hits()} images fetched)")
        # --only parser: start what is missing and wait for the parsers' health alone (another cube's
        # /healthz may be 503 now, e.g. a DLQ breaker open after the S3 outage: not this step's business)
        rc, out = await run(
            [str(OPS / "topology" / "start"), "--no-engines", "--only", "parser"], env, TOPOLOGY_WAIT_S + 60
        )
        assert rc == 0, f"ops/topology/start --only parser (restart) failed:\n{out[-4000:]}"
        new_pid = pid_in(topology_dir / f"{victim['name']}.pid")
        assert new_pid != victim["pid"], out[-2000:]
        assert alive(new_pid), out[-2000:]
        assert out.count(": started pid") == 1, f"only the killed parser is started again:\n{out[-2000:]}"
        assert f"{victim['name']}: started pid" in out, out[-2000:]
        note(f"(a) {victim['name']} restarted as pid {new_pid}")

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
                dead_seen.update({t: n for t, n in (await _dead_letters(kafka_url, bus_url, prefix)).items() if n})
                if dead_seen:
                    return True
            return await all_written()

        try:
            took = await _until("every item at its latest version with CDN images", settled_or_dead, SETTLE_TIMEOUT_S)
            problem = f"dead letters {dead_seen}" if dead_seen else ""
        except AssertionError as exc:
            problem = str(exc)
        if problem:
            assert stores is not None
            await all_written()  # the latest state, for the message
            missing = [n for n in urls if n not in pages and n not in stale]
            dead = {t: n for t, n in (await _dead_letters(kafka_url, bus_url, prefix)).items() if n}
            fetched = {h.path for h in site.hits() if h.status == 200}
            unfetched = [p for n in range(ITEMS) for p in image_paths(n) if p not in fetched]
            refused = sorted({h.path for h in site.hits() if h.status == 503})
            raise AssertionError(
                f"{problem}: {len(pages)}/{ITEMS} complete; {len(missing)} never written (e.g. {missing[:10]}); "
                f"{len(stale)} stale or without CDN images (e.g. {list(stale.items())[:5]}); "
                f"{await stores.delay.count()} document(s) parked in Delay; dead letters {dead}; "
                f"images never fetched: {unfetched[:10]}; answered 503: {refused}; logs in {var}\n"
                + "\n".join(timeline)
                + "\n"
                + _log_digest(topology_dir)
            )
        note(f"every item written at its latest version ({took:.1f} s after the last fault)")

        # exactly once: one row per item URL, and no other row (no stray or duplicate URL forms)
        conn = await asyncpg.connect(postgres_url)
        try:
            rows = await conn.fetch(f'SELECT url, count(*) AS n FROM "{schema}".pages GROUP BY url')
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

        # every dead-letter topic under our prefix is empty
        dead = {t: n for t, n in (await _dead_letters(kafka_url, bus_url, prefix)).items() if n}
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
        rc_stop, out_stop = await run([str(OPS / "topology" / "stop")], env, TOPOLOGY_STOP_S + 60)
        site.stop()
        if stores is not None:
            await stores.close()
        for url in (cdn_url, blobs_url):
            with contextlib.suppress(Exception):  # cleanup only: a leftover bucket harms no one
                blobs = await open_blobs(url)
                await blobs.destroy()  # type: ignore[attr-defined]
                await blobs.close()
        print("\n".join(timeline))
        if passed:
            shutil.rmtree(var, ignore_errors=True)
        else:
            print(f"the cubes' logs are kept in {var / 'topology'}")
    assert not problems, problems
    assert rc_stop == 0, out_stop
