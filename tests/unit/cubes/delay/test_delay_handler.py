"""cubes.delay.handler on the embedded store: release on completion, at the deadline, and after a restart."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.delay.handler import DelayHandler
from cubes.media.handler import MediaHandler
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import Document, Media, MediaCached, MediaStatus, SourceKind, SourceRef
from shared.runtime.cube import Context, Output
from shared.stores import Stores, open_stores

T0 = datetime(2026, 3, 1, tzinfo=UTC)
CTX = Context(topic="media.cached", partition=0, offset=0, key=None, attempt=1, received_at=T0)
A, B, C = "https://img.test/a.jpg", "https://img.test/b.jpg", "https://img.test/c.jpg"


def document(url: str, images: list[str]) -> Document:
    return Document(
        url=url,
        host="news.test",
        source=SourceRef(kind=SourceKind.rss, id="feed1"),
        title="Title",
        content_html="".join(f'<p>x</p><img src="{src}">' for src in images),
        media=[Media(url=images[0], role="cover")] if images else [],
        content_hash="h",
        version=1,
        seen_at=T0,
        parsed_at=T0,
    )


class Env:
    def __init__(self, path: Path, clock: ManualClock) -> None:
        self.url = f"sqlite:///{path}/store.db"
        self.clock = clock
        self.settings = Settings()
        self.stores: Stores

    async def open(self) -> None:
        self.stores = await open_stores(self.url)
        self.media = MediaHandler(self.settings, self.stores.images, self.stores.delay, self.clock)
        self.delay = DelayHandler(self.settings, self.stores.images, self.stores.delay, self.clock)

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.clock.time(), UTC)

    async def park(self, doc: Document) -> None:
        out = await self.media.handle(doc, Context("documents.parsed", 0, 0, None, 1, T0))
        assert not [o for o in out if o.topic == "documents.ready"]

    async def cached(self, url: str) -> list[Output]:
        """What the cdn cube does (record, then announce), then the delay cube's handling."""
        cdn_url = "/cdn/img/" + url.rsplit("/", 1)[1]
        await self.stores.images.record_ok(url, cdn_url=cdn_url, now=self.now())
        msg = MediaCached(url=url, status=MediaStatus.ok, cdn_url=cdn_url, cached_at=self.now())
        return await self.delay.handle(msg, CTX)

    async def failed(self, url: str) -> list[Output]:
        await self.stores.images.record_failed(url, "http_404", now=self.now())
        msg = MediaCached(url=url, status=MediaStatus.failed, reason="http_404", cached_at=self.now())
        return await self.delay.handle(msg, CTX)


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    e = Env(tmp_path, ManualClock(start=T0.timestamp()))
    await e.open()
    try:
        yield e
    finally:
        await e.stores.close()


def ready_docs(out: list[Output]) -> list[Document]:
    assert all(o.topic == "documents.ready" for o in out)
    docs = [o.message for o in out]
    assert all(isinstance(d, Document) for d in docs)
    return docs  # type: ignore[return-value]


async def test_released_when_the_last_image_is_cached(env: Env) -> None:
    await env.park(document("https://news.test/1", [A, B, C]))
    assert await env.cached(A) == []
    assert await env.cached(B) == []
    env.clock.advance(3)
    [doc] = ready_docs(await env.cached(C))
    assert doc.url == "https://news.test/1"
    assert doc.media_ready_at == env.now()
    for name in ("a", "b", "c"):
        assert f'src="/cdn/img/{name}.jpg"' in doc.content_html
    assert "img.test" not in doc.content_html
    assert [m.cdn_url for m in doc.media] == ["/cdn/img/a.jpg"]
    assert await env.stores.delay.count() == 0


async def test_a_failed_image_releases_the_document_without_it(env: Env) -> None:
    await env.park(document("https://news.test/2", [A, B]))
    await env.cached(A)
    [doc] = ready_docs(await env.failed(B))
    assert 'src="/cdn/img/a.jpg"' in doc.content_html
    assert "b.jpg" not in doc.content_html


async def test_one_image_releases_every_document_waiting_for_it(env: Env) -> None:
    for i in range(5):
        await env.park(document(f"https://news.test/m{i}", [A]))
    docs = ready_docs(await env.cached(A))
    assert sorted(d.url for d in docs) == [f"https://news.test/m{i}" for i in range(5)]


async def test_deadline_sweep_releases_with_missing_images_removed(env: Env) -> None:
    await env.park(document("https://news.test/late", [A, B]))
    await env.cached(A)
    env.clock.advance(env.settings.media.deadline_s - 1)
    assert await env.delay.sweep() == []
    env.clock.advance(1)
    [doc] = ready_docs(await env.delay.sweep())
    assert 'src="/cdn/img/a.jpg"' in doc.content_html
    assert "b.jpg" not in doc.content_html  # never hotlinked
    assert "img.test" not in doc.content_html
    assert await env.delay.sweep() == []


async def test_parked_documents_survive_a_restart(env: Env) -> None:
    await env.park(document("https://news.test/r1", [A]))
    await env.park(document("https://news.test/r2", [B]))
    await env.stores.close()
    await env.open()  # a new process: only the store remembers
    [doc] = ready_docs(await env.cached(A))
    assert doc.url == "https://news.test/r1"
    env.clock.advance(env.settings.media.deadline_s)
    [late] = ready_docs(await env.delay.sweep())
    assert late.url == "https://news.test/r2"
    assert "<img" not in late.content_html
