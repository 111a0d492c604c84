"""The crawler cube on the real runtime and the embedded SQLite bus, against the partner server.

Requests go onto ``crawl.requests``; the runner drives the cube to a bounded
end (``max_messages``); results are read back from ``crawl.feeds`` /
``crawl.images``. Three requesters of one feed cost the partner one request.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cubes.crawler.cube import build
from shared import contracts
from shared.config import Settings
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FetchStatus
from shared.runtime import Output, ensure_topics, open_deps, run_cube
from shared.runtime.deps import Deps
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer

A, B = "a.partner.test", "b.partner.test"


async def read_all(deps: Deps, topic: str) -> list[CrawlResult]:
    out = []
    for partition, end in (await deps.bus.end_offsets(topic)).items():
        for rec in await deps.bus.read(topic, partition, 0, end + 1):
            msg = contracts.decode(topic, rec.value)
            assert isinstance(msg, CrawlResult)
            out.append(msg)
    return out


def _settings(tmp_path: Path, **crawler: Any) -> Settings:
    """Embedded engines under ``tmp_path``, the partner's loopback allowed, these crawler settings."""
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        http={"allowlist": ["127.0.0.1/32"]},
        crawler=crawler,
        runtime={"metrics_port": 0},
    )


async def test_crawler_cube_end_to_end(
    tmp_path: Path, partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    settings = _settings(tmp_path, rate=50.0, burst=5, inline_body_max=2000)
    big = b"<rss>" + b"y" * 10_000 + b"</rss>"
    partner.set(B, "/big.xml", big)
    deps = await open_deps(settings, resolver=partner_resolver)
    try:
        await ensure_topics(deps, ["crawler"])
        now = datetime.now(UTC)
        feed_url = partner.url(A, "/feed.xml")
        reqs = [
            CrawlRequest(kind=CrawlKind.feed, url=feed_url, host=A, requesters=[f"feed:{i}"], requested_at=now)
            for i in range(3)
        ]
        reqs.append(
            CrawlRequest(
                kind=CrawlKind.image,
                url=partner.url(B, "/img/x.jpg"),
                host=B,
                requesters=["media:doc"],
                requested_at=now,
            )
        )
        reqs.append(
            CrawlRequest(
                kind=CrawlKind.feed,
                url=partner.url(B, "/big.xml"),
                host=B,
                requesters=["feed:big"],
                feed_id="big",
                requested_at=now,
            )
        )
        await deps.publish([Output("crawl.requests", r) for r in reqs])

        cube = await build(settings, deps)
        assert cube.concurrency == settings.crawler.parallel_hosts
        stats = await run_cube(cube, deps, group="crawler-test", max_messages=len(reqs), idle_timeout=5.0)
        if cube.on_stop is not None:
            await cube.on_stop()
        assert stats.processed == len(reqs)
        assert stats.dead_lettered == 0

        feeds = await read_all(deps, "crawl.feeds")
        images = await read_all(deps, "crawl.images")
    finally:
        await deps.close()

    assert len(partner.hits(A, "/feed.xml")) == 1  # three requesters, one fetch
    a_results = [r for r in feeds if r.url == feed_url]
    assert sorted(x for r in a_results for x in r.requesters) == ["feed:0", "feed:1", "feed:2"]
    assert all(r.status is FetchStatus.ok and r.body for r in a_results)
    [big_result] = [r for r in feeds if r.feed_id == "big"]
    assert big_result.body is None
    assert big_result.body_ref
    assert (tmp_path / "blobs" / big_result.body_ref).read_bytes() == big
    [img] = images
    assert img.status is FetchStatus.ok
    assert img.content_type == "image/jpeg"
    assert img.requesters == ["media:doc"]


async def test_a_feed_poll_does_not_wait_behind_its_hosts_images(
    tmp_path: Path, partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    # tests/integration/test_faults.py: a feed of 200 items put 400 image requests on its host's lane,
    # and the feed's next poll, read right behind them, waited until every image was fetched (80 s at
    # the partner's rate) while the scheduler re-emitted it every 2 s behind the same images. A
    # host's kinds of request take turns (Cube.key_class): the poll goes out after one image more
    settings = _settings(tmp_path, rate=40.0, burst=1, concurrency=2)
    images = 30
    deps = await open_deps(settings, resolver=partner_resolver)
    try:
        await ensure_topics(deps, ["crawler"])
        now = datetime.now(UTC)
        reqs = [
            CrawlRequest(
                kind=CrawlKind.image,
                url=partner.url(A, f"/img/{i}.jpg"),
                host=A,
                requesters=[f"media:doc{i}"],
                requested_at=now,
                priority=3,
            )
            for i in range(images)
        ]
        poll = CrawlRequest(
            kind=CrawlKind.feed,
            url=partner.url(A, "/feed.xml"),
            host=A,
            requesters=["feed:f"],
            feed_id="f",
            requested_at=now,
            priority=5,
        )
        await deps.publish([Output("crawl.requests", r) for r in [*reqs, poll]])

        cube = await build(settings, deps)
        assert cube.key_width is not None
        assert cube.key_width(A.encode()) == 2  # the lane's cap, at once
        stats = await run_cube(cube, deps, group="crawler-test", max_messages=images + 1, idle_timeout=5.0)
        if cube.on_stop is not None:
            await cube.on_stop()
        assert stats.processed == images + 1
        [feed] = await read_all(deps, "crawl.feeds")
    finally:
        await deps.close()

    assert feed.status is FetchStatus.ok
    paths = [h.path for h in partner.hits(A) if h.path != "/robots.txt"]
    assert len(paths) == images + 1
    # two images go out at once (the lane's cap), then the kinds take turns: the poll is third
    assert paths.index("/feed.xml") <= 2, paths
