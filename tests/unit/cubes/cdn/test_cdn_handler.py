"""cubes.cdn.handler on the embedded engines: SQLite registry, file CDN, a manual clock."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PIL import Image

from cubes.cdn.handler import CACHE_CONTROL, HEAD_FIRST_BYTES, CdnHandler, media_key
from shared.blobs.file import FileBlobStore
from shared.clock import ManualClock
from shared.config import Settings
from shared.images.variants import variant_key
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FetchStatus, MediaCached, MediaStatus
from shared.runtime.cube import Context, Output
from shared.stores import ImageStatus, Stores, open_stores

CTX = Context(topic="crawl.images", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


def png(color: tuple[int, int, int] = (10, 200, 30), size: tuple[int, int] = (12, 7)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, "PNG")
    return buf.getvalue()


def result(url: str, body: bytes | None = None, **kw: object) -> CrawlResult:
    fields: dict[str, object] = {
        "kind": CrawlKind.image,
        "url": url,
        "host": url.split("/")[2],
        "status": FetchStatus.ok,
        "http_status": 200,
        "content_type": "image/jpeg",  # what the partner claims; never trusted
        "body": body,
        "size": len(body or b""),
        "requesters": ["media:https://news.test/1"],
        "fetched_at": datetime.now(UTC),
    }
    fields.update(kw)
    return CrawlResult.model_validate(fields)


class Env:
    def __init__(self, stores: Stores, cdn: FileBlobStore, blobs: FileBlobStore, clock: ManualClock) -> None:
        self.stores = stores
        self.cdn = cdn
        self.blobs = blobs
        self.clock = clock
        self.settings = Settings()
        self.handler = CdnHandler(self.settings, stores.images, cdn, blobs, clock)

    def now(self) -> datetime:
        return self.clock.now()

    def objects(self) -> list[Path]:
        return sorted(p for p in self.cdn.root.rglob("*") if p.is_file())


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield Env(
            stores,
            FileBlobStore("file://cdn", tmp_path / "cdn", "/cdn"),
            FileBlobStore("file://blobs", tmp_path / "blobs"),
            ManualClock(start=1_750_000_000.0),
        )
    finally:
        await stores.close()


async def test_good_image_is_stored_content_addressed_and_recorded(env: Env) -> None:
    body = png()
    out = await env.handler.handle(result("https://img.test/a.jpg", body), CTX)
    assert len(out) == 1
    msg = out[0].message
    assert isinstance(msg, MediaCached)
    assert out[0].topic == "media.cached"
    assert msg.status == MediaStatus.ok
    assert msg.mime == "image/png"  # from the bytes, not the claimed image/jpeg
    assert (msg.width, msg.height) == (12, 7)
    assert msg.sha256 is not None
    key = media_key(msg.sha256, "png", msg.kind)
    assert key == f"img/{msg.sha256[:2]}/{msg.sha256}.png"
    assert msg.cdn_url == f"/cdn/{key}"
    assert await env.cdn.get(key) == body
    rec = await env.stores.images.get("https://img.test/a.jpg")
    assert rec is not None
    assert rec.status == ImageStatus.ok
    assert rec.cdn_url == msg.cdn_url
    assert CACHE_CONTROL == "public, max-age=31536000, immutable"


async def test_same_bytes_from_two_urls_make_one_object(env: Env) -> None:
    body = png((1, 2, 3))
    a = await env.handler.handle(result("https://img.test/a.png", body), CTX)
    b = await env.handler.handle(result("https://other.test/copy.png", body), CTX)
    assert a[0].message.cdn_url == b[0].message.cdn_url  # type: ignore[attr-defined]
    assert len(env.objects()) == 1
    records = await env.stores.images.get_many(["https://img.test/a.png", "https://other.test/copy.png"])
    assert {r.cdn_url for r in records.values()} == {a[0].message.cdn_url}  # type: ignore[attr-defined]


async def test_body_by_reference_is_read_from_the_blob_store(env: Env) -> None:
    body = png((9, 9, 9), (300, 200))
    await env.blobs.put("crawl/x", body)
    out = await env.handler.handle(result("https://img.test/big.png", None, body_ref="crawl/x", size=len(body)), CTX)
    assert out[0].message.status == MediaStatus.ok  # type: ignore[attr-defined]
    assert len(env.objects()) == 1


async def test_html_claiming_jpeg_is_refused_and_not_stored(env: Env) -> None:
    html = b"<html><body>Not found</body></html>"
    out = await env.handler.handle(result("https://img.test/fake.jpg", html), CTX)
    msg = out[0].message
    assert isinstance(msg, MediaCached)
    assert msg.status == MediaStatus.failed
    assert msg.reason == "not_an_image"
    assert env.objects() == []
    rec = await env.stores.images.get("https://img.test/fake.jpg")
    assert rec is not None
    assert rec.status == ImageStatus.failed
    # a permanent failure is not fetched again for a long time
    assert rec.retry_after == env.now() + timedelta(seconds=env.settings.media.failure_retry_s)
    assert not await env.stores.images.mark_ordered("https://img.test/fake.jpg", env.now())


@pytest.mark.parametrize(
    ("status", "http_status", "reason"),
    [
        (FetchStatus.http_4xx, 404, "http_404"),
        (FetchStatus.robots_denied, None, "robots_denied"),
        (FetchStatus.too_large, None, "too_large"),
        (FetchStatus.blocked_address, None, "blocked_address"),
    ],
)
async def test_permanent_fetch_failures_are_recorded_with_their_reason(
    env: Env, status: FetchStatus, http_status: int | None, reason: str
) -> None:
    out = await env.handler.handle(result("https://img.test/x.jpg", None, status=status, http_status=http_status), CTX)
    assert [o.topic for o in out] == ["media.cached"]
    assert out[0].message.reason == reason  # type: ignore[attr-defined]
    rec = await env.stores.images.get("https://img.test/x.jpg")
    assert rec is not None
    assert rec.reason == reason


async def test_transient_fetch_failure_is_ordered_again_then_gives_up(env: Env) -> None:
    url = "https://img.test/flaky.jpg"
    requesters = ["media:https://news.test/1"]
    for attempt in range(1, env.settings.media.fetch_retries + 1):
        out = await env.handler.handle(
            result(url, None, status=FetchStatus.http_5xx, http_status=503, requesters=requesters), CTX
        )
        assert [o.topic for o in out] == ["crawl.requests"]
        order = out[0].message
        assert isinstance(order, CrawlRequest)
        assert order.url == url
        assert order.kind == CrawlKind.image
        assert order.host == "img.test"
        assert order.requesters == ["media:https://news.test/1", f"cdn:retry:{attempt}"]
        requesters = order.requesters  # the crawler echoes them in its result
    out = await env.handler.handle(
        result(url, None, status=FetchStatus.http_5xx, http_status=503, requesters=requesters), CTX
    )
    assert [o.topic for o in out] == ["media.cached"]
    assert out[0].message.reason == "http_503"  # type: ignore[attr-defined]
    rec = await env.stores.images.get(url)
    assert rec is not None
    assert rec.retry_after == env.now() + timedelta(seconds=env.settings.media.transient_retry_s)


async def test_bomb_is_refused(env: Env) -> None:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    # 60000 x 60000 pixels declared in a 100-byte file
    ihdr = struct.pack(">IIBBBBB", 60_000, 60_000, 8, 2, 0, 0, 0)
    bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
    out = await env.handler.handle(result("https://img.test/bomb.png", bomb), CTX)
    assert out[0].message.reason == "too_many_pixels"  # type: ignore[attr-defined]
    assert env.objects() == []


async def test_video_is_stored_under_vid_with_its_mime(env: Env) -> None:
    mp4 = b"\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2" + bytes(range(256)) * 4
    out = await env.handler.handle(result("https://vid.test/clip.mp4", mp4, kind=CrawlKind.video), CTX)
    msg = out[0].message
    assert isinstance(msg, MediaCached)
    assert msg.status == MediaStatus.ok
    assert msg.kind.value == "video"
    assert msg.mime == "video/mp4"
    assert msg.cdn_url == f"/cdn/vid/{msg.sha256[:2]}/{msg.sha256}.mp4"  # type: ignore[index]
    # the same bytes ordered as an image are refused: an image order never stores a video
    out = await env.handler.handle(result("https://vid.test/not-a-picture.jpg", mp4), CTX)
    assert out[0].message.reason == "unsupported_format"  # type: ignore[attr-defined]


class CountingCdn(FileBlobStore):
    """The file CDN, counting puts and HEADs."""

    puts = 0
    heads = 0

    async def put(self, key: str, data: bytes, **kw: str | None) -> str:
        self.puts += 1
        return await super().put(key, data, **kw)

    async def exists(self, key: str) -> bool:
        self.heads += 1
        return await super().exists(key)


async def test_puts_are_skipped_for_content_already_stored(env: Env, tmp_path: Path) -> None:
    cdn = CountingCdn("file://cdn", tmp_path / "cdn", "/cdn")
    small = png((5, 5, 5))
    big = _noise_png(600, 600)
    assert len(small) < HEAD_FIRST_BYTES <= len(big)

    first = CdnHandler(env.settings, env.stores.images, cdn, env.blobs, env.clock)
    await first.handle(result("https://a.test/s.png", small), CTX)
    await first.handle(result("https://b.test/s-copy.png", small), CTX)  # known to this process: no put
    assert (cdn.puts, cdn.heads) == (1, 0)  # a small body is put without asking first

    second = CdnHandler(env.settings, env.stores.images, cdn, env.blobs, env.clock)  # another process
    await first.handle(result("https://a.test/big.png", big), CTX)
    assert (cdn.puts, cdn.heads) == (3, 1)  # a big body: HEAD first, then put (and its 480-pixel copy)
    await second.handle(result("https://c.test/big-copy.png", big), CTX)
    assert (cdn.puts, cdn.heads) == (3, 3)  # found by HEAD, its copy too: not uploaded again
    assert len(env.objects()) == 3


def _noise_png(w: int, h: int) -> bytes:
    import random

    buf = io.BytesIO()
    Image.frombytes("RGB", (w, h), random.Random(1).randbytes(w * h * 3)).save(buf, "PNG")
    return buf.getvalue()


async def test_a_wide_image_gets_smaller_webp_copies_for_srcset(env: Env) -> None:
    """Srcset from CDN variants (shared/images/variants.py): 480 and 960 pixels, beside the original."""
    wide = _noise_png(1200, 675)
    [out] = await env.handler.handle(result("https://a.test/wide.png", wide), CTX)
    cached = out.message
    assert isinstance(cached, MediaCached)
    assert cached.variants == [480, 960]
    record = await env.stores.images.get("https://a.test/wide.png")
    assert record is not None
    assert record.variants == (480, 960)
    assert cached.cdn_url is not None
    key = cached.cdn_url.removeprefix("/cdn/")
    for width in (480, 960):
        with Image.open(env.cdn.root / variant_key(key, width)) as copy:
            assert (copy.format, copy.width, copy.height) == ("WEBP", width, round(675 * width / 1200))
    # a narrow image and a GIF (its animation would be lost) get none
    [narrow] = await env.handler.handle(result("https://a.test/narrow.png", _noise_png(300, 200)), CTX)
    assert narrow.message.variants == []  # type: ignore[attr-defined]


# ---------------------------------------------------------------- re-checks

RECHECK = ["cdn:recheck"]


async def test_a_recheck_answered_304_or_with_the_same_bytes_keeps_the_copy(env: Env) -> None:
    url = "https://img.test/same.png"
    await env.handler.handle(result(url, png(), headers={"etag": '"v1"', "last-modified": "Mon, 1 Dec 2025"}), CTX)
    first = await env.stores.images.get(url)
    assert first is not None
    assert (first.etag, first.last_modified, first.checked_at) == ('"v1"', "Mon, 1 Dec 2025", env.now())
    env.clock.advance(3600)
    answer = result(url, None, status=FetchStatus.not_modified, http_status=304, requesters=RECHECK)
    assert await env.handler.handle(answer, CTX) == []  # nothing changed: nothing to announce
    env.clock.advance(3600)
    same = result(url, png(), requesters=RECHECK, headers={"etag": '"v1b"'})
    assert await env.handler.handle(same, CTX) == []
    rec = await env.stores.images.get(url)
    assert rec is not None
    assert (rec.cdn_url, rec.sha256, rec.etag, rec.last_modified) == (
        first.cdn_url,
        first.sha256,
        '"v1b"',
        "Mon, 1 Dec 2025",
    )
    assert rec.checked_at == env.now()


async def test_a_recheck_with_new_bytes_is_a_new_copy_that_replaces_the_old(env: Env) -> None:
    url = "https://img.test/changing.png"
    await env.handler.handle(result(url, png((200, 0, 0), (1200, 600))), CTX)
    old = await env.stores.images.get(url)
    assert old is not None
    env.clock.advance(7200)
    out = await env.handler.handle(result(url, png((0, 0, 200), (1000, 1000)), requesters=RECHECK), CTX)
    (msg,) = [o.message for o in out]
    assert isinstance(msg, MediaCached)
    assert msg.replaces == old.cdn_url
    assert msg.cdn_url != old.cdn_url
    assert (msg.width, msg.height, msg.variants) == (1000, 1000, [480, 960])
    assert msg.sha256 is not None
    key = media_key(msg.sha256, "png", msg.kind)
    for k in (key, variant_key(key, 480), variant_key(key, 960)):
        assert await env.cdn.exists(k), k
    assert old.cdn_url is not None
    assert await env.cdn.exists(old.cdn_url.removeprefix("/cdn/"))  # the old copy stays: old pages still work
    rec = await env.stores.images.get(url)
    assert rec is not None
    assert (rec.cdn_url, rec.width) == (msg.cdn_url, 1000)


async def test_a_failed_recheck_keeps_the_copy_and_orders_nothing(env: Env) -> None:
    url = "https://img.test/flaky.png"
    await env.handler.handle(result(url, png()), CTX)
    before = await env.stores.images.get(url)
    for status, code in ((FetchStatus.http_4xx, 404), (FetchStatus.http_5xx, 503), (FetchStatus.timeout, None)):
        failed = result(url, None, status=status, http_status=code, requesters=RECHECK)
        assert await env.handler.handle(failed, CTX) == []
    assert await env.stores.images.get(url) == before


@pytest.mark.parametrize(
    ("headers", "after"),
    [
        ({}, timedelta(days=7)),  # media.recheck_s
        ({"cache-control": "public, max-age=172800"}, timedelta(days=2)),  # its own lifetime
        ({"cache-control": "max-age=60"}, timedelta(days=1)),  # held to media.recheck_min_s
        ({"cache-control": "max-age=31536000, immutable"}, timedelta(days=30)),  # held to media.recheck_max_s
        ({"cache-control": "no-cache"}, timedelta(days=1)),  # "ask every time": the floor
        ({"expires": "Sat, 21 Jun 2025 15:06:40 GMT"}, timedelta(days=1, hours=12)),  # 36 h after fetched_at
    ],
)
async def test_an_image_is_asked_about_again_when_its_own_lifetime_says(
    env: Env, headers: dict[str, str], after: timedelta
) -> None:
    url = "https://img.test/lifetime.png"
    fetched = datetime(2025, 6, 20, 3, 6, 40, tzinfo=UTC)
    await env.handler.handle(result(url, png(), headers=headers, fetched_at=fetched), CTX)
    rec = await env.stores.images.get(url)
    assert rec is not None
    assert rec.recheck_at == env.now() + after
    # a 304 to the re-check says it again, with the lifetime it carries now
    env.clock.advance(3600)
    answer = result(
        url,
        None,
        status=FetchStatus.not_modified,
        http_status=304,
        requesters=RECHECK,
        headers={"cache-control": "max-age=259200"},
        fetched_at=fetched,
    )
    await env.handler.handle(answer, CTX)
    rec = await env.stores.images.get(url)
    assert rec is not None
    assert rec.recheck_at == env.now() + timedelta(days=3)


async def test_a_recheck_round_whose_orders_did_not_go_out_orders_them_again(env: Env) -> None:
    from cubes.cdn.recheck import Rechecks
    from shared.runtime.timers import run_round

    url = "https://img.test/again.png"
    await env.handler.handle(result(url, png()), CTX)
    env.clock.advance(8 * 86_400)
    rechecks = Rechecks(env.settings, env.stores.images, env.clock)

    async def bus_down(outputs: object) -> None:
        raise ConnectionError("bus down")

    with pytest.raises(ConnectionError):
        await run_round("cdn", "image-recheck", rechecks.sweep, bus_down)
    published: list[Output] = []

    async def publish(outputs: Sequence[Output]) -> None:
        published.extend(outputs)

    # the next round, a minute later, orders the image (the claim held it a whole week before)
    env.clock.advance(60)
    assert await run_round("cdn", "image-recheck", rechecks.sweep, publish) == 1
    assert [o.message.url for o in published] == [url]  # type: ignore[attr-defined]


# ---------------------------------------------------------------- a webmaster's refresh and purge


async def test_a_refresh_is_a_recheck_and_a_purge_drops_a_copy_the_source_no_longer_gives(env: Env) -> None:
    url = "https://img.test/purged.png"
    await env.handler.handle(result(url, png()), CTX)
    before = await env.stores.images.get(url)
    assert before is not None
    assert before.cdn_url is not None
    gone = result(url, None, status=FetchStatus.http_4xx, http_status=404, requesters=["refresh:r1"])
    assert await env.handler.handle(gone, CTX) == []  # a refresh that failed keeps the copy, as a re-check
    assert await env.stores.images.get(url) == before
    same = result(url, png(), requesters=["purge:p0"])
    assert await env.handler.handle(same, CTX) == []  # the same bytes: the same copy, nothing to drop
    out = await env.handler.handle(
        result(url, None, status=FetchStatus.http_4xx, http_status=404, requesters=["purge:p1"]), CTX
    )
    (msg,) = [o.message for o in out]
    assert isinstance(msg, MediaCached)
    assert (msg.status, msg.reason, msg.replaces) == (MediaStatus.failed, "http_404", before.cdn_url)
    rec = await env.stores.images.get(url)
    assert rec is not None
    assert rec.cdn_url is None
    assert await env.cdn.exists(before.cdn_url.removeprefix("/cdn/"))  # the bytes stay: content-addressed
    html = result(url, b"<html>now a page</html>", requesters=["purge:p2"])
    await env.handler.handle(result(url, png(), headers={}), CTX)  # cached again
    (again,) = [o.message for o in await env.handler.handle(html, CTX)]
    assert isinstance(again, MediaCached)
    assert (again.status, again.replaces) == (MediaStatus.failed, before.cdn_url)  # no image any more: dropped
