"""A page renders again with the new copy of a changed image (cubes/kvwriter/refresh.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.kvwriter.handler import KvwriterHandler
from cubes.kvwriter.refresh import shown_copies, unpack, with_new_copy, without_copy
from shared.config import Settings
from shared.messages import Document, Media, MediaCached, MediaStatus, SourceKind, SourceRef
from shared.stores import Stores, UpsertOutcome, open_stores

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
OLD, NEW = "/cdn/img/aa/" + "a" * 64 + ".png", "/cdn/img/bb/" + "b" * 64 + ".png"
SRC = "https://img.example/lake.png"
VERSION = 1_764_489_600_000_000  # versions are microsecond clocks


def doc(url: str, html: str, media: list[Media] | None = None, version: int = VERSION, **kw: object) -> Document:
    return Document(
        url=url,
        host="news.example",
        source=SourceRef(kind=SourceKind.rss, id="feed-1"),
        title="The lake",
        content_html=html,
        media=media or [],
        content_hash=f"h{version}",
        version=version,
        seen_at=T0,
        parsed_at=T0,
        **kw,  # type: ignore[arg-type]
    )


def changed(**kw: object) -> MediaCached:
    fields: dict[str, object] = {
        "url": SRC,
        "status": MediaStatus.ok,
        "cdn_url": NEW,
        "mime": "image/png",
        "width": 1000,
        "height": 1000,
        "variants": [480, 960],
        "replaces": OLD,
        "cached_at": T0,
    }
    fields.update(kw)
    return MediaCached.model_validate(fields)


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield s
    finally:
        await s.close()


def test_the_swap_touches_only_the_old_copy() -> None:
    other = "/cdn/img/cc/" + "c" * 64 + ".jpg"
    d = doc(
        "https://news.example/a",
        f'<img src="{OLD}" alt=""><img src="{other}" alt=""><picture><source srcset="{OLD} 1x, {other} 2x"></picture>',
        [Media(url=SRC, role="enclosure", cdn_url=OLD, width=1200, height=600, variants=[480, 960])],
    )
    assert shown_copies(d, "/cdn") == {OLD, other}
    new = with_new_copy(d, changed())
    assert new is not None
    assert OLD not in new.content_html
    assert new.content_html.count(NEW) == 2
    assert new.content_html.count(other) == 2
    assert new.media[0].model_dump(include={"cdn_url", "width", "height", "variants"}) == {
        "cdn_url": NEW,
        "width": 1000,
        "height": 1000,
        "variants": [480, 960],
    }
    assert new.version == VERSION + 1
    # a page that no longer shows it, a message that replaces nothing: no new version
    assert with_new_copy(doc("https://news.example/b", f'<img src="{other}">'), changed()) is None
    assert with_new_copy(d, changed(replaces=None)) is None


async def test_pages_showing_the_old_copy_render_again_and_a_later_edit_still_wins(stores: Stores) -> None:
    handler = KvwriterHandler(stores.pages, Settings(), images=stores.images)
    a, b, c = "https://news.example/a", "https://news.example/b", "https://news.example/c"
    await handler.write(doc(a, f'<p>lake</p><img src="{OLD}" alt="">'))
    await handler.write(doc(b, "<p>lake</p>", [Media(url=SRC, role="enclosure", cdn_url=OLD, width=1200, height=600)]))
    await handler.write(doc(c, f'<img src="{OLD}" alt="">'))
    await handler.write(doc(c, "<p>edited: no picture now</p>", version=VERSION + 5))  # edited since
    preview = doc("https://news.example/p", f'<img src="{OLD}">', preview=True)
    await handler.write(preview)
    assert await stores.images.pages_using(OLD) == [a, b, c]  # previews are never refreshed
    before = {u: await stores.pages.get(u) for u in (a, b, c)}

    await handler.handle(changed())
    for u in (a, b):
        page, old = await stores.pages.get(u), before[u]
        assert page is not None
        assert old is not None
        assert (page.version, OLD in page.html, NEW in page.html) == (old.version + 1, False, True)
        assert page.etag != old.etag  # readers' caches see the new page
        assert unpack(page.ready).version == page.version
    page_b = await stores.pages.get(b)
    assert page_b is not None
    assert 'width="1000" height="1000"' in page_b.html
    assert await stores.pages.get(c) == before[c]  # it no longer shows the picture: left alone
    assert await stores.images.pages_using(NEW) == [a, b]  # the refreshed pages are linked to the new copy

    # a later edit of the source (a higher version) still wins over the refresh
    later = doc(a, "<p>rewritten</p>", version=VERSION + 10)
    assert await handler.write(later) is UpsertOutcome.updated
    page_a = await stores.pages.get(a)
    assert page_a is not None
    assert "rewritten" in page_a.html
    # and a refresh after an edit renders the edited page, not the old one
    assert await handler.refresh(changed(replaces=NEW, cdn_url=OLD)) == 1  # b only: a shows no picture now


def dropped() -> MediaCached:
    return MediaCached(url=SRC, status=MediaStatus.failed, reason="http_404", replaces=OLD, cached_at=T0)


async def test_a_purged_copy_leaves_its_pages_and_only_it_goes(stores: Stores) -> None:
    handler = KvwriterHandler(stores.pages, Settings(), images=stores.images)
    other = "/cdn/img/cc/" + "c" * 64 + ".jpg"
    small = OLD.removesuffix(".png") + ".w480.webp"
    a, b = "https://news.example/a", "https://news.example/b"
    await handler.write(
        doc(
            a,
            f'<p>lake</p><figure><img src="{OLD}" srcset="{small} 480w, {OLD} 1200w" alt=""><figcaption>The lake'
            f'</figcaption></figure><p>and</p><img src="{other}" alt="">',
        )
    )
    await handler.write(doc(b, "<p>lake</p>", [Media(url=SRC, role="enclosure", cdn_url=OLD, width=1200, height=600)]))
    before = {u: await stores.pages.get(u) for u in (a, b)}
    await handler.handle(dropped())
    for u in (a, b):
        page, old = await stores.pages.get(u), before[u]
        assert page is not None
        assert old is not None
        assert (page.version, OLD in page.html, small in page.html) == (old.version + 1, False, False)
    page_a = await stores.pages.get(a)
    assert page_a is not None
    assert other in page_a.html
    assert "<p>and</p>" in page_a.html
    assert "figcaption" not in page_a.html  # a figure of only a caption goes with its picture
    assert unpack(page_a.ready).media == []
    assert without_copy(unpack(page_a.ready), OLD) is None  # nothing left to drop: no new version


async def test_a_large_pages_kept_document_is_packed_off_the_loop(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1 MB of a document dumped and compressed on the loop held it ~0.3 s (bench/hostile.py): past 16 KB of HTML
    it is packed in a thread, into the same bytes."""
    import threading

    from cubes.kvwriter import handler as kv
    from cubes.kvwriter.refresh import pack
    from shared.offload import OFFLOAD_CHARS

    threads: list[int] = []

    def spy(d: Document) -> bytes:
        threads.append(threading.get_ident())
        return pack(d)

    monkeypatch.setattr(kv, "pack", spy)
    handler = KvwriterHandler(stores.pages, Settings(), images=stores.images)
    for n, paragraphs in ((1, 10), (2, 2_000)):
        written = doc(f"https://news.example/{n}", "<p>words of the lake</p>" * paragraphs)
        await handler.write(written)
        page = await stores.pages.get(written.url)
        assert page is not None
        assert unpack(page.ready) == written
        assert (threads.pop() != threading.get_ident()) is (len(written.content_html) > OFFLOAD_CHARS)
