"""media -> crawler -> cdn -> delay on the real runtime, the partner server and the CDN (docs/architecture.md s.2).

Each cube is driven to a bounded end by ``run_cube`` on the embedded SQLite bus and
store; the CDN is the file store, or the real SeaweedFS (``s3`` variant). Checked:
a document with three images is ready only once all three are cached, with CDN
URLs; fifty documents sharing an image cost the partner one fetch and the CDN one
object; an image that 404s is removed, never hotlinked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from cubes.registry import cube_module
from shared import contracts
from shared.blobs.s3 import S3BlobStore
from shared.config import Settings
from shared.messages import Document, MediaCached, MediaStatus, SourceKind, SourceRef
from shared.runtime import Output, ensure_topics, open_deps, run_cube

A = "a.partner.test"
T0 = datetime(2026, 3, 1, tzinfo=UTC)


async def read_all(deps: Any, topic: str) -> list[Any]:
    out = []
    for partition, end in (await deps.bus.end_offsets(topic)).items():
        for rec in await deps.bus.read(topic, partition, 0, end + 1):
            out.append(contracts.decode(topic, rec.value))
    return out


def document(url: str, images: list[str], version: int = 1) -> Document:
    return Document(
        url=url,
        host=A,
        source=SourceRef(kind=SourceKind.rss, id="feed1"),
        title="Title",
        content_html="".join(f'<p>text</p><img src="{src}" alt="">' for src in images),
        content_hash=f"h{version}",
        version=version,
        seen_at=T0,
        parsed_at=T0,
    )


async def run(name: str, settings: Settings, deps: Any, n: int) -> None:
    cube = await cube_module(name).build(settings, deps)
    stats = await run_cube(cube, deps, group=f"{name}-test", max_messages=n, idle_timeout=10.0)
    if cube.on_stop is not None:
        await cube.on_stop()
    assert stats.processed == n, (name, stats)
    assert stats.dead_lettered == 0, (name, stats)


@pytest.fixture(params=["file", pytest.param("s3", marks=pytest.mark.s3)])
def cdn_settings(request: pytest.FixtureRequest, tmp_path: Path, uid: str) -> dict[str, str]:
    if request.param == "file":
        return {"url": f"file://{tmp_path}/cdn", "public_base_url": "/cdn"}
    s3_url = request.getfixturevalue("s3_url")
    endpoint = parse_qs(urlsplit(s3_url).query)["endpoint"][0]
    return {"url": f"s3://tc-{uid}?endpoint={endpoint}", "public_base_url": f"{endpoint}/tc-{uid}"}


async def test_documents_wait_for_their_images_then_point_at_the_cdn(
    tmp_path: Path, partner: Any, partner_resolver: Any, cdn_settings: dict[str, str]
) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        cdn=cdn_settings,
        http={"allowlist": ["127.0.0.1/32"]},
        crawler={"rate": 100.0, "burst": 20},
        runtime={"metrics_port": 0},
    )
    partner.set(A, "/img/gone.jpg", b"<html>not here</html>", status=404)
    three = [partner.url(A, f"/img/{n}.jpg") for n in ("one", "two", "three")]
    shared = partner.url(A, "/img/shared.jpg")
    docs = [document("https://news.test/three", three)]
    docs += [document(f"https://news.test/s{i}", [shared]) for i in range(50)]
    docs.append(document("https://news.test/gone", [three[0], partner.url(A, "/img/gone.jpg")]))

    deps = await open_deps(settings, resolver=partner_resolver)
    try:
        await ensure_topics(deps, ["media", "crawler", "cdn", "delay"])
        await deps.publish([Output("documents.parsed", d) for d in docs])

        await run("media", settings, deps, len(docs))
        assert await read_all(deps, "documents.ready") == []  # every document waits
        orders = await read_all(deps, "crawl.requests")
        assert sorted(o.url for o in orders) == sorted([*three, shared, partner.url(A, "/img/gone.jpg")])
        assert await (await deps.stores()).delay.count() == len(docs)

        await run("crawler", settings, deps, len(orders))
        await run("cdn", settings, deps, len(orders))
        cached: list[MediaCached] = await read_all(deps, "media.cached")
        assert {c.url: c.status for c in cached}[partner.url(A, "/img/gone.jpg")] == MediaStatus.failed
        await run("delay", settings, deps, len(cached))

        ready: list[Document] = await read_all(deps, "documents.ready")
        cdn = await deps.cdn()
        objects = {c.sha256 for c in cached if c.status == MediaStatus.ok}
        for c in cached:
            if c.status == MediaStatus.ok:
                assert c.cdn_url is not None
                assert c.cdn_url.startswith(settings.cdn.public_base_url)
                key = c.cdn_url[len(settings.cdn.public_base_url) + 1 :]
                assert await cdn.exists(key)
        held = [p for p in await (await deps.stores()).problems.page_problems(host=A) if p.held]
        if isinstance(cdn, S3BlobStore):
            await cdn.destroy()  # every bucket is a SeaweedFS collection with volumes: leave none behind
    finally:
        await deps.close()

    assert len(partner.hits(A, "/img/shared.jpg")) == 1  # fifty documents, one fetch
    assert len(objects) == 4  # one, two, three, shared
    by_url = {d.url: d for d in ready}
    # the page whose image 404s is held back, not published without it (shared/pages/completeness.py)
    assert sorted(by_url) == sorted(d.url for d in docs if d.url != "https://news.test/gone")
    assert [(p.url, p.held, [x.code for x in p.problems]) for p in held] == [
        ("https://news.test/gone", True, ["page.incomplete", "image.not_found"])
    ]
    for d in ready:
        assert d.media_ready_at is not None
        assert "partner.test" not in d.content_html  # never hotlinked
    assert by_url["https://news.test/three"].content_html.count(settings.cdn.public_base_url + "/img/") == 3
