"""cubes.media.handler on the embedded store: rewrite when cached, else order once and park."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cubes.media.handler import MediaHandler
from shared.clock import ManualClock
from shared.config import Settings
from shared.images.parked import parked_document
from shared.messages import CrawlKind, CrawlRequest, Document, Media, MediaKind, SourceKind, SourceRef
from shared.runtime.cube import Context, Output
from shared.stores import ImageRecord, Page, Stores, open_stores

CTX = Context(topic="documents.parsed", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def document(url: str, images: list[str], version: int = 1, *, video: str | None = None) -> Document:
    html = "".join(f'<p>para</p><img src="{src}">' for src in images)
    media = [Media(url=video, kind=MediaKind.video, role="enclosure")] if video else []
    return Document(
        url=url,
        host="news.test",
        source=SourceRef(kind=SourceKind.rss, id="feed1"),
        title="Title",
        content_html=html,
        media=media,
        content_hash=f"h{version}",
        version=version,
        seen_at=T0,
        parsed_at=T0,
    )


class Env:
    def __init__(self, stores: Stores) -> None:
        self.stores = stores
        self.settings = Settings()
        self.clock = ManualClock(start=T0.timestamp())
        self.handler = MediaHandler(self.settings, stores.images, stores.delay, self.clock)

    def now(self) -> datetime:
        return self.clock.now()

    async def cache(self, *urls: str) -> None:
        for u in urls:
            await self.stores.images.record_ok(u, cdn_url="/cdn/img/" + u.rsplit("/", 1)[1], now=self.now())


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield Env(stores)
    finally:
        await stores.close()


def by_topic(outputs: Iterable[Output], topic: str) -> list[Output]:
    return [o for o in outputs if o.topic == topic]


async def test_all_cached_is_rewritten_and_published_at_once(env: Env) -> None:
    await env.cache("https://img.test/a.jpg", "https://img.test/b.jpg")
    doc = document("https://news.test/1", ["https://img.test/a.jpg", "//img.test/b.jpg"])
    out = await env.handler.handle(doc, CTX)
    assert [o.topic for o in out] == ["documents.ready"]
    ready = out[0].message
    assert isinstance(ready, Document)
    assert out[0].key == "https://news.test/1"
    assert ready.media_ready_at == env.now()
    assert 'src="/cdn/img/a.jpg"' in ready.content_html
    assert 'src="/cdn/img/b.jpg"' in ready.content_html
    assert "img.test" not in ready.content_html
    assert await env.stores.delay.count() == 0


async def test_missing_images_are_ordered_and_the_document_parked(env: Env) -> None:
    await env.cache("https://img.test/a.jpg")
    doc = document(
        "https://news.test/2",
        ["https://img.test/a.jpg", "https://img.test/b.jpg"],
        video="https://vid.test/v.mp4",
    )
    out = await env.handler.handle(doc, CTX)
    assert by_topic(out, "documents.ready") == []
    orders = [o.message for o in by_topic(out, "crawl.requests")]
    assert all(isinstance(o, CrawlRequest) for o in orders)
    assert {(o.url, o.kind, o.host) for o in orders} == {  # type: ignore[attr-defined]
        ("https://img.test/b.jpg", CrawlKind.image, "img.test"),
        ("https://vid.test/v.mp4", CrawlKind.video, "vid.test"),
    }
    assert {o.key for o in by_topic(out, "crawl.requests")} == {"img.test", "vid.test"}
    assert all(o.requesters == ["media:https://news.test/2"] for o in orders)  # type: ignore[attr-defined]
    parked = await env.stores.delay.get("https://news.test/2")
    assert parked is not None
    assert parked.pending == {"https://img.test/b.jpg", "https://vid.test/v.mp4"}
    assert parked.deadline == env.now() + timedelta(seconds=env.settings.media.deadline_s)
    assert parked_document(parked.doc_json) == doc  # stored with the template of its rewrite


async def test_fifty_documents_sharing_one_image_order_it_once(env: Env) -> None:
    orders = 0
    for i in range(50):
        out = await env.handler.handle(document(f"https://news.test/p{i}", ["https://img.test/shared.jpg"]), CTX)
        orders += len(by_topic(out, "crawl.requests"))
    assert orders == 1
    assert await env.stores.delay.count() == 50


async def test_a_newer_version_replaces_the_parked_one_and_an_older_is_ignored(env: Env) -> None:
    url = "https://news.test/v"
    await env.handler.handle(document(url, ["https://img.test/1.jpg"], version=5), CTX)
    await env.handler.handle(document(url, ["https://img.test/2.jpg"], version=6), CTX)
    parked = await env.stores.delay.get(url)
    assert parked is not None
    assert parked.version == 6
    assert parked.pending == {"https://img.test/2.jpg"}
    out = await env.handler.handle(document(url, ["https://img.test/3.jpg"], version=4), CTX)
    assert by_topic(out, "documents.ready") == []
    parked = await env.stores.delay.get(url)
    assert parked is not None
    assert parked.version == 6


async def test_permanently_failed_images_are_removed_not_ordered(env: Env) -> None:
    env.handler.hold = False  # media.hold_incomplete off: published without it (held: the next test)
    await env.cache("https://img.test/ok.jpg")
    await env.stores.images.record_failed(
        "https://img.test/dead.jpg", "http_404", retry_at=env.now() + timedelta(days=7), now=env.now()
    )
    doc = document("https://news.test/f", ["https://img.test/ok.jpg", "https://img.test/dead.jpg"])
    out = await env.handler.handle(doc, CTX)
    assert [o.topic for o in out] == ["documents.ready"]
    html = out[0].message.content_html  # type: ignore[attr-defined]
    assert "dead.jpg" not in html
    assert 'src="/cdn/img/ok.jpg"' in html


async def test_a_page_that_lost_an_image_for_good_is_held_back_and_says_why(tmp_path: Path) -> None:
    """It was published without the image, as if it were complete."""
    stores = await open_stores(f"sqlite:///{tmp_path}/held.db")
    try:
        env = Env(stores)
        env.handler = MediaHandler(env.settings, stores.images, stores.delay, env.clock, stores.problems)
        await env.cache("https://img.test/ok.jpg")
        await stores.images.record_failed(
            "https://img.test/dead.jpg", "http_404", retry_at=env.now() + timedelta(days=7), now=env.now()
        )
        doc = document("https://news.test/f", ["https://img.test/ok.jpg", "https://img.test/dead.jpg"])
        assert await env.handler.handle(doc, CTX) == []  # nothing published
        (row,) = await stores.problems.page_problems(url="https://news.test/f")
        assert row.held
        assert [p.code for p in row.problems] == ["page.incomplete", "image.not_found"]
        assert "lost 1 of its 2 images (it could not be copied" in row.problems[0].message
    finally:
        await stores.close()


async def test_an_image_failed_only_for_now_does_not_hold_its_page(tmp_path: Path) -> None:
    stores = await open_stores(f"sqlite:///{tmp_path}/now.db")
    try:
        env = Env(stores)
        env.handler = MediaHandler(env.settings, stores.images, stores.delay, env.clock, stores.problems)
        await stores.images.record_failed(
            "https://img.test/sick.jpg", "http_503", retry_at=env.now() + timedelta(minutes=30), now=env.now()
        )
        out = await env.handler.handle(document("https://news.test/s", ["https://img.test/sick.jpg"]), CTX)
        assert [o.topic for o in out] == ["documents.ready"]  # published without it, and told
        await stores.pages.upsert(Page(url="https://news.test/s", host="news.test", version=1))
        (row,) = await stores.problems.page_problems(source_id="feed1")
        assert not row.held
        assert [p.code for p in row.problems] == ["image.http_error"]
    finally:
        await stores.close()


async def test_a_failure_whose_retry_time_came_is_ordered_again(env: Env) -> None:
    await env.stores.images.record_failed(
        "https://img.test/again.jpg", "http_503", retry_at=env.now() - timedelta(seconds=1), now=env.now()
    )
    out = await env.handler.handle(document("https://news.test/r", ["https://img.test/again.jpg"]), CTX)
    assert [o.message.url for o in by_topic(out, "crawl.requests")] == ["https://img.test/again.jpg"]  # type: ignore[attr-defined]


async def test_an_image_that_failed_before_the_webmaster_asked_is_ordered_again_at_once(env: Env) -> None:
    """The image was put back at its URL; "fetch now" (or a check) must not wait out its 7-day retry."""
    dead = "https://img.test/back.jpg"
    await env.stores.images.record_failed(dead, "http_404", retry_at=env.now() + timedelta(days=7), now=env.now())
    env.clock.advance(60)
    plain = document("https://news.test/b", [dead])
    assert by_topic(await env.handler.handle(plain, CTX), "crawl.requests") == []  # not yet, as before
    asked = plain.model_copy(update={"version": 2, "retry_failed_before": env.now()})
    (order,) = by_topic(await env.handler.handle(asked, CTX), "crawl.requests")
    assert isinstance(order.message, CrawlRequest)
    assert order.message.url == dead
    # fetched fresh, never answered from the crawler's memory of the 404 (shared.webmaster.feeds.FIX_PREFIX)
    assert order.message.requesters == ["media:https://news.test/b", "fix:https://news.test/b"]
    parked = await env.stores.delay.get("https://news.test/b")
    assert parked is not None
    assert (parked.version, parked.pending) == (2, frozenset({dead}))


async def test_a_checks_preview_waits_under_its_own_key(env: Env) -> None:
    """A check's preview parked under the page's URL replaced the live document waiting there."""
    live = document("https://news.test/p", ["https://img.test/p.jpg"])
    await env.handler.handle(live, CTX)
    preview = live.model_copy(
        update={"version": 9, "preview": True, "source": SourceRef(kind=SourceKind.upload, id="task1")}
    )
    await env.handler.handle(preview, CTX)
    kept = await env.stores.delay.get("https://news.test/p")
    assert kept is not None
    assert kept.version == 1
    assert (await env.stores.delay.get("preview:task1:https://news.test/p")) is not None


class _CachedDuringPark:
    """The real registry; the image is cached by "the cdn cube" right after the media cube looked."""

    def __init__(self, env: Env, url: str) -> None:
        self.env = env
        self.url = url
        self.calls = 0

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        found = await self.env.stores.images.get_many(urls)
        self.calls += 1
        if self.calls == 1:
            await self.env.cache(self.url)
        return found

    async def mark_ordered(
        self, url: str, now: datetime, *, window_s: float = 3600.0, failed_before: datetime | None = None
    ) -> bool:
        return await self.env.stores.images.mark_ordered(url, now, window_s=window_s, failed_before=failed_before)

    async def mark_ordered_many(
        self, urls: Iterable[str], now: datetime, *, window_s: float = 3600.0, failed_before: datetime | None = None
    ) -> set[str]:
        return await self.env.stores.images.mark_ordered_many(urls, now, window_s=window_s, failed_before=failed_before)


async def test_image_cached_between_look_up_and_park_releases_the_document(env: Env) -> None:
    images = _CachedDuringPark(env, "https://img.test/race.jpg")
    handler = MediaHandler(env.settings, images, env.stores.delay, env.clock)  # type: ignore[arg-type]
    out = await handler.handle(document("https://news.test/race", ["https://img.test/race.jpg"]), CTX)
    ready = by_topic(out, "documents.ready")
    assert len(ready) == 1
    assert 'src="/cdn/img/race.jpg"' in ready[0].message.content_html  # type: ignore[attr-defined]
    assert await env.stores.delay.count() == 0


async def test_ready_version_leaves_an_older_parked_version_to_versioning(env: Env) -> None:
    url = "https://news.test/old"
    await env.handler.handle(document(url, ["https://img.test/slow.jpg"], version=1), CTX)
    out = await env.handler.handle(document(url, [], version=2), CTX)
    assert [o.topic for o in out] == ["documents.ready"]
    assert out[0].message.version == 2  # type: ignore[attr-defined]
    parked = await env.stores.delay.get(url)
    assert parked is not None
    assert parked.version == 1  # released later and dropped as stale by the kvwriter (newest wins)


async def test_hostile_html_is_handled_not_crashed_on(env: Env) -> None:
    await env.cache("https://img.test/x.jpg")
    html = '<p>a\x00b</p></body><img src="https://img.test/x.jpg"></HTML ><img src=javascript:alert(1)><p>end</p>'
    out = await env.handler.handle(document("https://news.test/odd", []).model_copy(update={"content_html": html}), CTX)
    assert [o.topic for o in out] == ["documents.ready"]
    content = out[0].message.content_html  # type: ignore[attr-defined]
    assert "javascript" not in content
    assert 'src="/cdn/img/x.jpg"' in content  # what followed the stray </body> is kept
    assert content.endswith("<p>end</p>")


async def test_a_retried_message_orders_its_images_again(env: Env) -> None:
    doc = document("https://news.test/retry", ["https://img.test/lost.jpg"])
    assert await env.stores.images.mark_ordered("https://img.test/lost.jpg", env.now())  # won, then crashed
    out = await env.handler.handle(doc, CTX)
    assert by_topic(out, "crawl.requests") == []  # first delivery: someone ordered it already
    retry = Context("documents.parsed", 0, 0, None, 2, T0)
    out = await env.handler.handle(doc, retry)
    assert [o.message.url for o in by_topic(out, "crawl.requests")] == ["https://img.test/lost.jpg"]  # type: ignore[attr-defined]


async def test_the_sizes_the_cdn_measured_go_with_the_document(env: Env) -> None:
    """The page's images get width / height from the CDN's probe (no layout jump)."""
    await env.stores.images.record_ok(
        "https://img.test/a.jpg", cdn_url="/cdn/img/a.jpg", width=1200, height=675, now=env.now(), variants=(480, 960)
    )
    doc = document("https://news.test/1", ["https://img.test/a.jpg"]).model_copy(
        update={"media": [Media(url="https://img.test/a.jpg", role="content", width=10, height=10)]}
    )
    [out] = await env.handler.handle(doc, CTX)
    ready = out.message
    assert isinstance(ready, Document)
    assert [(m.cdn_url, m.width, m.height, m.variants) for m in ready.media] == [
        ("/cdn/img/a.jpg", 1200, 675, [480, 960])  # and the widths of its smaller copies, for srcset
    ]


class _CountedLookUps(_CachedDuringPark):
    """The real registry, counting look-ups (and caching nothing meanwhile)."""

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        self.calls += 1
        return await self.env.stores.images.get_many(urls)


async def test_a_document_whose_images_it_orders_itself_is_looked_up_once(env: Env) -> None:
    # the second look after the park is for images someone else ordered (their media.cached may have
    # come and gone meanwhile); ours get theirs after our orders are published: a round trip saved
    images = _CountedLookUps(env, "")
    handler = MediaHandler(env.settings, images, env.stores.delay, env.clock)  # type: ignore[arg-type]
    urls = ["https://img.test/mine-1.jpg", "https://img.test/mine-2.jpg"]
    out = await handler.handle(document("https://news.test/mine", urls), CTX)
    assert sorted(o.message.url for o in by_topic(out, "crawl.requests")) == urls  # type: ignore[attr-defined]
    assert images.calls == 1
    parked = await env.stores.delay.get("https://news.test/mine")
    assert parked is not None
    assert sorted(parked.pending) == urls


async def test_an_image_someone_else_ordered_is_looked_up_again_after_the_park(env: Env) -> None:
    theirs = "https://img.test/theirs.jpg"
    await env.stores.images.mark_ordered(theirs, env.now())  # another document's order, in flight
    images = _CachedDuringPark(env, theirs)  # ... and its image is cached right after our look-up
    handler = MediaHandler(env.settings, images, env.stores.delay, env.clock)  # type: ignore[arg-type]
    out = await handler.handle(document("https://news.test/theirs", [theirs]), CTX)
    assert by_topic(out, "crawl.requests") == []  # not ours to order
    assert len(by_topic(out, "documents.ready")) == 1  # the second look found it: released at once
    assert images.calls == 2
    assert await env.stores.delay.count() == 0


@pytest.mark.parametrize("paragraphs", [10, 2_000])  # ~200 characters, ~40 KB: past media's THREAD_CHARS
async def test_a_large_document_is_parsed_and_rewritten_off_the_loop(
    env: Env, monkeypatch: pytest.MonkeyPatch, paragraphs: int
) -> None:
    """1 MB of HTML parsed on the loop held it (every cube, the API, /healthz) for up to 1.5 s (bench/hostile.py)."""
    import threading

    from cubes.media import handler as media_handler
    from shared.images import media

    threads: dict[str, int] = {}
    real_init, real_rewrite = media.MediaDoc.__init__, media.MediaDoc.rewrite

    def init(self: media.MediaDoc, doc: Document) -> None:
        threads["parse"] = threading.get_ident()
        real_init(self, doc)

    def rewrite(self: media.MediaDoc, *args: object, **kw: object) -> Document:
        threads["rewrite"] = threading.get_ident()
        return real_rewrite(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(media.MediaDoc, "__init__", init)
    monkeypatch.setattr(media.MediaDoc, "rewrite", rewrite)
    await env.cache("https://img.test/a.jpg")
    doc = document("https://news.test/big", ["https://img.test/a.jpg"])
    doc = doc.model_copy(update={"content_html": "<p>words of a story</p>" * paragraphs + doc.content_html})
    large = len(doc.content_html) > media_handler.THREAD_CHARS
    assert large is (paragraphs > 1_000)
    out = await env.handler.handle(doc, CTX)
    ready = out[0].message
    assert isinstance(ready, Document)
    assert 'src="/cdn/img/a.jpg"' in ready.content_html  # the same rewrite, wherever it ran
    assert ready.content_html.count("words of a story") == paragraphs
    loop = threading.get_ident()
    assert {step: t != loop for step, t in threads.items()} == {"parse": large, "rewrite": large}
