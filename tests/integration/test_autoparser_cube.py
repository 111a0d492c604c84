"""The autoparser cube on Apache Kafka and PostgreSQL: what it learns per host is real state.

21 pages of one host go onto ``crawl.pages`` (Kafka, a fresh topic prefix); the cube, built by its
own ``build`` on the real runtime, reads them with the host's template as it learns it and keeps the
template in PostgreSQL (a fresh schema); the last page is published without the host's template
prose. A page a full-text feed owns becomes a training pair in PostgreSQL instead of a document.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from cubes.autoparser.cube import build
from cubes.autoparser.templates import HostTemplate
from shared import contracts
from shared.config import Settings
from shared.messages import SOURCE_PRIORITY, CrawlKind, CrawlResult, Document, FetchStatus, SourceKind
from shared.runtime import Output, ensure_topics, open_deps, run_cube
from shared.runtime.deps import Deps
from shared.stores import Page
from tests.unit.cubes.autoparser.hard_pages import host_pages

HOST = "ledger.example"


async def _documents(deps: Deps) -> list[Document]:
    out = []
    for partition, end in (await deps.bus.end_offsets("documents.parsed")).items():
        for rec in await deps.bus.read("documents.parsed", partition, 0, end + 1):
            msg = contracts.decode("documents.parsed", rec.value)
            if isinstance(msg, Document):
                out.append(msg)
    return out


async def test_the_cube_keeps_host_templates_and_pairs_in_postgres(
    tmp_path: Path, kafka_url: str, postgres_url: str, uid: str
) -> None:
    settings = Settings().replace(
        bus={"url": f"{kafka_url}{'&' if '?' in kafka_url else '?'}prefix=ap-{uid}."},
        store={"url": f"{postgres_url}{'&' if '?' in postgres_url else '?'}schema=ap_{uid}"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "max_attempts": 2},
    )
    deps = await open_deps(settings)
    try:
        await ensure_topics(deps, ["autoparser"])
        stores = await deps.stores()
        pages = host_pages(22)
        owned_url, owned_html, owned_paras = pages.pop()
        await stores.hashes.claim(owned_url, "feed:ledger", SOURCE_PRIORITY[SourceKind.rss])
        feed_text = "\n".join(owned_paras * 3)
        await stores.pages.upsert(Page(url=owned_url, host=HOST, version=1, text=feed_text, source_kind="rss"))
        now = datetime.now(UTC)
        inputs = [
            Output(
                "crawl.pages",
                CrawlResult(
                    kind=CrawlKind.page,
                    url=url,
                    host=HOST,
                    status=FetchStatus.ok,
                    http_status=200,
                    content_type="text/html; charset=utf-8",
                    body=html.encode(),
                    size=len(html),
                    fetched_at=now,
                    requesters=[f"autoparser:{HOST}"],
                ),
                key=HOST,
            )
            for url, html, _ in [*pages, (owned_url, owned_html, owned_paras)]
        ]
        await deps.publish(inputs)
        cube = await build(settings, deps)
        stats = await run_cube(cube, deps, group=f"ap-{uid}", max_messages=len(inputs), idle_timeout=30.0)
        assert stats.processed == len(inputs)
        assert stats.dead_lettered == 0

        docs = {d.url: d for d in await _documents(deps)}
        assert set(docs) == {url for url, _, _ in pages}  # the feed's page is not published by us
        last = docs[pages[-1][0]]
        assert all(p in last.content_html for p in pages[-1][2])
        assert "Good local journalism costs money" not in last.content_html  # the host's template
        stored = await stores.autoparser.get_template(HOST)
        assert stored is not None
        assert HostTemplate.from_bytes(HOST, stored).pages >= 20
        [pair] = await stores.autoparser.pairs(HOST)
        assert (pair.url, pair.text, pair.html) == (owned_url, feed_text, owned_html.encode())
    finally:
        await deps.close()
