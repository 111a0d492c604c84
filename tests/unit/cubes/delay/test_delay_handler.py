"""cubes.delay.handler on the embedded store: release on completion, at the deadline, and after a restart.

Nothing is lost between a release and its publish: ``commit=False`` plays a
publish that failed (or a crash before the runtime's acknowledgement): the
after-commit hooks never run, and the sweep publishes the document again later.
The sweep runs as the runtime runs a timer's round (``run_round``), publishing
through the test's ``publish``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cubes.delay.handler import DelayHandler
from cubes.media.handler import MediaHandler
from shared.clock import ManualClock
from shared.config import Settings
from shared.errors import BusUnavailable
from shared.images.parked import MAGIC
from shared.messages import Document, Media, MediaCached, MediaStatus, SourceKind, SourceRef
from shared.runtime.cube import Context, Output
from shared.runtime.timers import run_round
from shared.stores import ImageRecord, ImageRegistry, Page, Stores, open_stores

T0 = datetime(2026, 3, 1, tzinfo=UTC)
A, B, C = "https://img.test/a.jpg", "https://img.test/b.jpg", "https://img.test/c.jpg"


def ctx() -> Context:
    return Context(topic="media.cached", partition=0, offset=0, key=None, attempt=1, received_at=T0)


def document(url: str, images: list[str], version: int = 1) -> Document:
    return Document(
        url=url,
        host="news.test",
        source=SourceRef(kind=SourceKind.rss, id="feed1"),
        title="Title",
        content_html="".join(f'<p>x</p><img src="{src}">' for src in images),
        media=[Media(url=images[0], role="cover")] if images else [],
        content_hash="h",
        version=version,
        seen_at=T0,
        parsed_at=T0,
    )


class Env:
    def __init__(self, path: Path, clock: ManualClock) -> None:
        self.url = f"sqlite:///{path}/store.db"
        self.clock = clock
        self.settings = Settings()
        self.stores: Stores
        self.published: list[Output] = []  # what the sweep's rounds published
        self.fail_publish = 0  # the next N sweep publishes raise (the broker is down)

    async def open(self) -> None:
        self.stores = await open_stores(self.url)
        s = self.stores
        self.media = MediaHandler(self.settings, s.images, s.delay, self.clock, s.problems)
        self.delay = DelayHandler(self.settings, s.images, s.delay, self.clock, s.problems)

    async def publish(self, outputs: Sequence[Output]) -> None:
        if self.fail_publish:
            self.fail_publish -= 1
            raise BusUnavailable("broker down")
        self.published.extend(outputs)

    def now(self) -> datetime:
        return self.clock.now()

    async def park(self, doc: Document) -> None:
        out = await self.media.handle(doc, Context("documents.parsed", 0, 0, None, 1, T0))
        assert not [o for o in out if o.topic == "documents.ready"]

    async def handle(self, msg: MediaCached, *, commit: bool) -> list[Output]:
        """The delay cube's handling; ``commit``: the runtime acknowledged the outputs (runs the hooks)."""
        c = ctx()
        out = await self.delay.handle(msg, c)
        if commit:
            for hook in c.committed_hooks or []:
                await hook()
        return out

    async def cached(self, url: str, *, commit: bool = True) -> list[Output]:
        """What the cdn cube does (record, then announce), then the delay cube's handling."""
        cdn_url = "/cdn/img/" + url.rsplit("/", 1)[1]
        await self.stores.images.record_ok(url, cdn_url=cdn_url, now=self.now())
        msg = MediaCached(url=url, status=MediaStatus.ok, cdn_url=cdn_url, cached_at=self.now())
        return await self.handle(msg, commit=commit)

    async def failed(self, url: str) -> list[Output]:
        await self.stores.images.record_failed(url, "http_404", now=self.now())
        msg = MediaCached(url=url, status=MediaStatus.failed, reason="http_404", cached_at=self.now())
        return await self.handle(msg, commit=True)

    async def sweep_round(self) -> int:
        """One sweep as the runtime runs it: its outputs published, then its hooks (the confirms)."""
        return await run_round("delay", "deadline-sweep", self.delay.sweep, self.publish)

    async def sweep(self) -> list[Document]:
        """One sweep; the documents it published."""
        before = len(self.published)
        await self.sweep_round()
        return ready_docs(self.published[before:])


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
    assert await env.stores.delay.get(doc.url) is None  # confirmed after the commit: gone


async def lost(env: Env, doc: Document) -> list[tuple[str, str, str | None]]:
    """What the webmaster is told the published page lost: (code, page URL, feed) per problem."""
    await env.stores.pages.upsert(Page(url=doc.url, host=doc.host, version=doc.version))  # the kvwriter's part
    rows = await env.stores.problems.page_problems(source_id="feed1")
    return [(p.code, p.where.link or "", p.where.feed) for r in rows for p in r.problems]


async def test_what_a_released_page_lost_is_reported_with_why(env: Env) -> None:
    """An image answering 404 was published silently removed; nothing reported it."""
    env.media.hold = env.delay.hold = False  # media.hold_incomplete off: published without it
    await env.park(document("https://news.test/2", [A, B]))
    await env.cached(A)
    [doc] = ready_docs(await env.failed(B))
    assert await lost(env, doc) == [("image.not_found", "https://news.test/2", "feed1")]
    (row,) = await env.stores.problems.page_problems(url=doc.url)
    assert B in row.problems[0].message
    assert "HTTP 404" in row.problems[0].message
    # the next document whose image is known to have failed is published at once, and told too
    out = await env.media.handle(document("https://news.test/3", [B], version=2), ctx())
    [again] = ready_docs(out)
    assert ("image.not_found", "https://news.test/3", "feed1") in await lost(env, again)


async def test_a_parked_page_that_lost_an_image_for_good_is_held_back_once(env: Env) -> None:
    """Released without its 404 image and published as complete; now held, and told."""
    await env.park(document("https://news.test/h", [A, B]))
    await env.cached(A)
    assert ready_docs(await env.failed(B)) == []  # released, not published
    (row,) = await env.stores.problems.page_problems(url="https://news.test/h")
    assert row.held
    assert [p.code for p in row.problems] == ["page.incomplete", "image.not_found"]
    env.clock.advance(env.settings.delay.release_lease_s + env.settings.media.deadline_s + 1)
    assert await env.sweep() == []  # forgotten by the delay store: not released again


async def test_an_image_late_at_the_deadline_is_reported(env: Env) -> None:
    await env.park(document("https://news.test/4", [A, C]))
    await env.cached(A)
    env.clock.advance(env.settings.media.deadline_s + 1)
    [doc] = await env.sweep()
    assert await lost(env, doc) == [("image.late", "https://news.test/4", "feed1")]


async def test_a_failed_image_releases_the_document_without_it(env: Env) -> None:
    env.media.hold = env.delay.hold = False  # media.hold_incomplete off: published without it
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
    assert await env.sweep() == []
    env.clock.advance(1)
    [doc] = await env.sweep()
    assert 'src="/cdn/img/a.jpg"' in doc.content_html
    assert "b.jpg" not in doc.content_html  # never hotlinked
    assert "img.test" not in doc.content_html
    assert await env.stores.delay.get(doc.url) is None  # published, then confirmed
    env.clock.advance(env.settings.delay.release_lease_s)
    assert await env.sweep() == []


async def test_parked_documents_survive_a_restart(env: Env) -> None:
    await env.park(document("https://news.test/r1", [A]))
    await env.park(document("https://news.test/r2", [B]))
    await env.stores.close()
    await env.open()  # a new process: only the store remembers
    [doc] = ready_docs(await env.cached(A))
    assert doc.url == "https://news.test/r1"
    env.clock.advance(env.settings.media.deadline_s)
    [late] = await env.sweep()
    assert late.url == "https://news.test/r2"
    assert "<img" not in late.content_html


async def test_a_release_whose_publish_failed_is_published_after_the_lease(env: Env) -> None:
    url = "https://news.test/lost"
    await env.park(document(url, [A]))
    [doc] = ready_docs(await env.cached(A, commit=False))  # the publish failed: no acknowledgement, no hooks
    assert doc.url == url
    held = await env.stores.delay.get(url)
    assert held is not None  # still in the store, released
    assert held.released_at == env.now()
    redelivered = MediaCached(url=A, status=MediaStatus.ok, cdn_url="/cdn/img/a.jpg", cached_at=env.now())
    assert await env.handle(redelivered, commit=True) == []  # nothing pending any more ...
    env.clock.advance(env.settings.delay.release_lease_s - 1)
    assert await env.sweep() == []  # ... and the lease still runs (the first publish may yet land)
    env.clock.advance(1)
    [again] = await env.sweep()  # ... but the document is not lost
    assert again.url == url
    assert 'src="/cdn/img/a.jpg"' in again.content_html
    assert await env.stores.delay.get(url) is None


async def test_a_failed_sweep_publish_keeps_the_documents(env: Env) -> None:
    await env.park(document("https://news.test/d1", [A]))
    await env.park(document("https://news.test/d2", [B]))
    env.clock.advance(env.settings.media.deadline_s)
    env.fail_publish = 1
    with pytest.raises(BusUnavailable):
        await env.sweep_round()
    assert env.published == []
    for url in ("https://news.test/d1", "https://news.test/d2"):
        held = await env.stores.delay.get(url)
        assert held is not None
        assert held.released_at == env.now()
    assert await env.sweep() == []  # leased: the next sweeps wait for it ...
    env.clock.advance(env.settings.delay.release_lease_s)
    docs = await env.sweep()  # ... then publish it again
    assert sorted(d.url for d in docs) == ["https://news.test/d1", "https://news.test/d2"]
    assert all("<img" not in d.content_html for d in docs)
    assert [await env.stores.delay.get(d.url) for d in docs] == [None, None]


async def test_a_restart_republishes_released_but_unconfirmed_documents(env: Env) -> None:
    await env.park(document("https://news.test/c1", [A]))
    await env.park(document("https://news.test/c2", [B]))
    assert len(await env.cached(A, commit=False)) == 1  # crash: outputs never acknowledged
    env.clock.advance(env.settings.media.deadline_s)
    env.fail_publish = 1
    with pytest.raises(BusUnavailable):
        await env.sweep_round()  # c2 released by the deadline, its publish failed too
    await env.stores.close()
    await env.open()  # a new process
    assert await env.sweep() == []  # the leases of the dead process still run
    env.clock.advance(env.settings.delay.release_lease_s)
    docs = await env.sweep()
    assert sorted(d.url for d in docs) == ["https://news.test/c1", "https://news.test/c2"]
    assert 'src="/cdn/img/a.jpg"' in next(d for d in docs if d.url.endswith("c1")).content_html
    assert [await env.stores.delay.get(d.url) for d in docs] == [None, None]
    env.clock.advance(env.settings.delay.release_lease_s)
    assert await env.sweep() == []  # confirmed: published once more, not forever


async def test_a_newer_version_parked_during_the_publish_survives_the_confirm(env: Env) -> None:
    url = "https://news.test/v"
    await env.park(document(url, [A]))
    c = ctx()
    await env.stores.images.record_ok(A, cdn_url="/cdn/img/a.jpg", now=env.now())
    msg = MediaCached(url=A, status=MediaStatus.ok, cdn_url="/cdn/img/a.jpg", cached_at=env.now())
    [v1] = ready_docs(await env.delay.handle(msg, c))
    assert v1.version == 1
    await env.park(document(url, [B], version=2))  # arrives while v1's publish is in flight
    for hook in c.committed_hooks or []:
        await hook()  # v1 acknowledged: confirm drops v1 only
    parked = await env.stores.delay.get(url)
    assert parked is not None
    assert (parked.version, parked.pending, parked.released_at) == (2, frozenset({B}), None)
    [v2] = ready_docs(await env.cached(B))
    assert (v2.url, v2.version) == (url, 2)
    assert await env.stores.delay.get(url) is None


class CountingImages:
    """The real registry, counting the look-ups that reach it."""

    def __init__(self, images: ImageRegistry) -> None:
        self.images = images
        self.queries: list[set[str]] = []

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        self.queries.append(set(urls))
        return await self.images.get_many(urls)


async def test_the_last_announced_image_releases_without_a_registry_query(env: Env) -> None:
    env.media.hold = env.delay.hold = False  # media.hold_incomplete off: published without it
    await env.park(document("https://news.test/q", [A, B]))
    counting = CountingImages(env.stores.images)
    env.delay = DelayHandler(env.settings, counting, env.stores.delay, env.clock)  # type: ignore[arg-type]
    env.delay.hold = False
    assert await env.cached(A) == []
    [doc] = ready_docs(await env.cached(B))
    assert counting.queries == []  # both CDN URLs came with their media.cached messages
    assert 'src="/cdn/img/a.jpg"' in doc.content_html
    assert 'src="/cdn/img/b.jpg"' in doc.content_html
    await env.park(document("https://news.test/q2", [A, C]))  # A is cached already: only C is pending
    [doc2] = ready_docs(await env.failed(C))
    assert counting.queries == [{C}]  # a failure is read from the registry; A was remembered
    assert 'src="/cdn/img/a.jpg"' in doc2.content_html
    assert "c.jpg" not in doc2.content_html


async def test_a_parked_payload_that_does_not_decode_is_kept_and_its_neighbours_released(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    bad = "https://news.test/corrupt"
    await env.stores.delay.park(bad, 1, MAGIC + b"{not json\n{}", [A], env.now() + timedelta(hours=1), host="news.test")
    await env.park(document("https://news.test/fine", [A]))
    [doc] = ready_docs(await env.cached(A))
    assert doc.url == "https://news.test/fine"
    held = await env.stores.delay.get(bad)
    assert held is not None  # not dropped: released again after the lease, and logged each time
    assert "no longer decodes" in caplog.text
