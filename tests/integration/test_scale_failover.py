"""Scale-out failover on both buses, with OS processes killed for real.

* **Scheduler replicas**: three scheduler processes and a crawler over one
  bus and one store tick 24 feeds of 8 partner hosts with a fixed interval;
  one scheduler is SIGKILLed mid-run. At the partner, every feed is fetched
  once per interval — no two fetches of a feed closer than the interval (no
  poll twice), none further apart than the interval plus the failover (no
  feed forgotten) — and the failover is measured.
* **Lane state**: a partner answers 429 with a long Retry-After; the crawler
  that owns the host is SIGKILLed; the next one, asked for another URL of
  the host, sends the partner nothing before the deadline (robots.txt
  included).

Both run on the embedded log + SQLite and on Kafka + PostgreSQL.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared import contracts
from shared.bus.base import Bus
from shared.config import load_settings
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FetchStatus
from shared.runtime import ensure_topics, open_deps
from shared.runtime.cube import Output
from shared.runtime.deps import Deps
from shared.webmaster.feeds import FeedRegistry
from tests.integration.cubeproc import CubeProcess, write_config
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

#: every feed's fixed polling interval in the replica test
INTERVAL_S = 8.0
#: the failover targets: 15 s on the embedded log; Kafka's session timeout (10 s, shared/bus/kafka.py)
#: plus the rebalance that follows it
FAILOVER_S = {"sqlite": 15.0, "kafka": 15.0}
#: at the partner, a fetch happens a little after its due time: a tick (0.5 s), the bus, the crawler
SLACK_S = 2.0
HOSTS = [f"h{i}.partner.test" for i in range(8)]
FEEDS_PER_HOST = 3


@dataclass
class Engines:
    kind: str  # "sqlite" or "kafka"
    bus: str
    store: str


@pytest.fixture(params=["sqlite", "kafka"])
def engines(request: pytest.FixtureRequest, tmp_path: Path, uid: str) -> Engines:
    if request.param == "sqlite":
        return Engines("sqlite", f"sqlite:///{tmp_path}/bus.db", f"sqlite:///{tmp_path}/store.db")
    kafka = request.getfixturevalue("kafka_url")
    postgres = request.getfixturevalue("postgres_url")
    sep = "&" if "?" in postgres else "?"
    return Engines("kafka", f"{kafka}?prefix=scale{uid}.", f"{postgres}{sep}schema=scale_{uid}")


def config(tmp_path: Path, engines: Engines, **sections: dict[str, object]) -> Path:
    base: dict[str, dict[str, object]] = {
        "bus": {"url": engines.bus},
        "store": {"url": engines.store, "pool_size": 2},
        "http": {"allowlist": ["127.0.0.1/32"]},
        "runtime": {"metrics_port": 0, "shutdown_timeout_s": 5.0, "status_interval_s": 2.0},
    }
    for name, keys in sections.items():
        base[name] = {**base.get(name, {}), **keys}
    return write_config(tmp_path / "turbocubes.toml", base)


@pytest.fixture
async def deps_of(tmp_path: Path) -> AsyncIterator[list[Deps]]:
    """The test's own engines, opened once the config is written (closed at the end)."""
    opened: list[Deps] = []
    yield opened
    for d in opened:
        await d.close()


async def open_test_deps(path: Path, opened: list[Deps]) -> Deps:
    deps = await open_deps(load_settings(str(path)), resolver=PartnerResolver())
    opened.append(deps)
    await ensure_topics(deps, ["scheduler", "crawler"])
    return deps


async def stop_all(procs: list[CubeProcess]) -> None:
    await asyncio.gather(*(p.stop() for p in procs))


# --------------------------------------------------------------------------- scheduler replicas


async def test_three_scheduler_replicas_one_killed_fetch_every_feed_once_per_interval(
    engines: Engines, partner: PartnerServer, tmp_path: Path, deps_of: list[Deps]
) -> None:
    path = config(
        tmp_path,
        engines,
        scheduler={
            "min_interval_s": INTERVAL_S,
            "max_interval_s": INTERVAL_S,
            "jitter": 0.0,
            "tick_s": 0.5,
            "host_gap_s": 0.5,
            "websub_port": 0,
        },
        crawler={"rate": 5.0, "burst": 5, "concurrency": 3},
    )
    deps = await open_test_deps(path, deps_of)
    stores = await deps.stores()
    registry = FeedRegistry.from_settings(deps.settings, stores.feeds, deps.publish, resolver=PartnerResolver())
    paths = {}
    for host in HOSTS:
        for n in range(FEEDS_PER_HOST):
            done = await registry.register(partner.url(host, f"/feed.xml?n={n}"), fmt="rss")
            paths[(host, f"/feed.xml?n={n}")] = done.feed.feed_id
    crawler = CubeProcess(path, "crawler", log=tmp_path / "crawler.log")
    schedulers = [CubeProcess(path, "scheduler", log=tmp_path / f"scheduler{i}.log") for i in range(3)]
    procs = [crawler, *schedulers]
    try:
        await asyncio.gather(*(p.start() for p in procs))
        await asyncio.gather(*(p.ready() for p in procs))

        def fetched() -> dict[tuple[str, str], list[float]]:
            out: dict[tuple[str, str], list[float]] = defaultdict(list)
            for host in HOSTS:
                for hit in partner.hits(host, "/feed.xml"):
                    out[(host, hit.path)].append(hit.at)
            return out

        deadline = time.monotonic() + 90.0
        while len(fetched()) < len(paths):  # every feed fetched once: the replicas are all at work
            assert time.monotonic() < deadline, f"only {len(fetched())} of {len(paths)} feeds fetched"
            await asyncio.sleep(0.2)  # polling the partner's log
        first_round = time.monotonic()
        # the scenario's timeline: a steady interval, then a crash, then three intervals and a failover
        await asyncio.sleep(1.5 * INTERVAL_S)
        schedulers[1].kill()
        killed_at = time.monotonic()
        await asyncio.sleep(3 * INTERVAL_S + FAILOVER_S[engines.kind])
        ended = time.monotonic()
    finally:
        await stop_all(procs)

    times = fetched()
    assert set(times) == set(paths)
    failover = 0.0
    for feed, ts in sorted(times.items()):
        ts = [t for t in ts if t <= ended]
        gaps = [b - a for a, b in itertools.pairwise(ts)]
        assert min(gaps) >= INTERVAL_S - 0.5, f"{feed} fetched twice within an interval: {gaps}"
        late = max(gaps) - INTERVAL_S
        failover = max(failover, late)
        assert late <= FAILOVER_S[engines.kind] + SLACK_S, f"{feed} waited {late:.1f} s past its interval: {gaps}"
        assert ended - ts[-1] <= INTERVAL_S + SLACK_S, f"{feed} forgotten since {ended - ts[-1]:.1f} s"
        # once per interval over the whole run: as many fetches as intervals fit, give or take the failover
        expected = (ended - ts[0]) / INTERVAL_S
        assert expected - 3 <= len(ts) <= expected + 1, f"{feed}: {len(ts)} fetches in {expected:.1f} intervals"
    print(
        f"\n{engines.kind}: {len(paths)} feeds, 3 scheduler replicas, one killed {killed_at - first_round:.1f} s"
        f" into the run; worst wait past the interval (the failover): {failover:.1f} s"
    )


# --------------------------------------------------------------------------- lane state


async def _result_for(bus: Bus, group: str, requester: str, within: float = 60.0) -> CrawlResult:
    """The first result on ``crawl.feeds`` answering ``requester`` (read by a group of the test's own)."""
    consumer = await bus.consumer(group, ["crawl.feeds"])
    got: list[CrawlResult] = []
    try:
        deadline = time.monotonic() + within
        while not any(r.requesters == [requester] for r in got):
            assert time.monotonic() < deadline, f"no result for {requester} on crawl.feeds: {got}"
            for r in await consumer.getmany(0.5, 100):
                msg = contracts.decode("crawl.feeds", r.value)
                assert isinstance(msg, CrawlResult)
                got.append(msg)
    finally:
        await consumer.stop()
    return next(r for r in got if r.requesters == [requester])


def _request(url: str, requester: str) -> Output:
    return Output(
        "crawl.requests",
        CrawlRequest(
            kind=CrawlKind.feed,
            url=url,
            host="a.partner.test",
            requesters=[requester],
            feed_id=requester.removeprefix("feed:"),
            requested_at=datetime.now(UTC),
        ),
    )


async def test_a_retry_after_outlives_the_crawler_that_was_told(
    engines: Engines, partner: PartnerServer, tmp_path: Path, uid: str, deps_of: list[Deps]
) -> None:
    host = "a.partner.test"
    path = config(tmp_path, engines, crawler={"max_lane_wait_s": 2.0})
    deps = await open_test_deps(path, deps_of)
    old = CubeProcess(path, "crawler", log=tmp_path / "old.log")
    new = CubeProcess(path, "crawler", log=tmp_path / "new.log")
    try:
        await old.start()
        await old.ready()
        await deps.publish([_request(partner.url(host, "/retry-after/3600"), "feed:busy")])
        told = await _result_for(deps.bus, f"probe1-{uid}", "feed:busy")
        assert (told.status, told.http_status) == (FetchStatus.throttled, 429)
        before = [h.path for h in partner.hits(host)]
        assert before[-1] == "/retry-after/3600"
        old.kill()  # right after it reported the 429: no stop hook, no goodbye
        await old.proc.wait()  # type: ignore[union-attr]
        await new.start()
        await new.ready()
        await deps.publish([_request(partner.url(host, "/feed.xml"), "feed:next")])
        # (the first request may be read again too: the old crawler may not have committed it)
        answer = await _result_for(deps.bus, f"probe2-{uid}", "feed:next")
    finally:
        await stop_all([old, new])
    assert answer.status is FetchStatus.throttled
    assert "lane busy" in (answer.error or "")
    assert [h.path for h in partner.hits(host)] == before  # nothing before the deadline, robots.txt included
