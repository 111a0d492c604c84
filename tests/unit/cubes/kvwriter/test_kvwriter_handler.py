"""The kvwriter handler writes and deletes pages by version (cubes/kvwriter/handler.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from cubes.kvwriter.handler import KvwriterHandler
from cubes.kvwriter.render import preview_key
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import Document, DocumentDeleted, Media, SourceKind, SourceRef
from shared.stores import DeleteOutcome, Stores, UpsertOutcome, open_stores
from tests.searching import found

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
URL = "https://news.example/a/story"


def make_doc(version: int, **kw: object) -> Document:
    base: dict[str, object] = {
        "url": URL,
        "host": "news.example",
        "source": SourceRef(kind=SourceKind.rss, id="feed-1"),
        "title": f"Story v{version}",
        "content_html": f"<p>Body of version {version}</p>",
        "content_hash": f"hash{version}",
        "version": version,
        "seen_at": T0,
        "parsed_at": T0,
    }
    base.update(kw)
    return Document.model_validate(base)


def deleted(version: int) -> DocumentDeleted:
    return DocumentDeleted(
        url=URL, host="news.example", source=SourceRef(kind=SourceKind.rss, id="feed-1"), version=version,
        deleted_at=T0,
    )  # fmt: skip


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=T0.timestamp() + 2.5)  # pages are written 2.5 s after they were seen


@pytest.fixture
def handler(stores: Stores, clock: ManualClock) -> KvwriterHandler:
    return KvwriterHandler(stores.pages, Settings(), clock)


async def test_write_then_read(handler: KvwriterHandler, stores: Stores) -> None:
    assert await handler.handle(make_doc(1)) == []
    page = await stores.pages.get(URL)
    assert page is not None
    assert page.version == 1
    assert page.title == "Story v1"
    assert "<p>Body of version 1</p>" in page.html
    assert page.etag.startswith('"hash1-1-')
    assert page.written_at == T0 + timedelta(seconds=2.5)
    assert page.seen_at == T0
    assert page.text == "Body of version 1"


async def test_older_versions_never_win(handler: KvwriterHandler, stores: Stores) -> None:
    assert await handler.write(make_doc(2)) is UpsertOutcome.inserted
    assert await handler.write(make_doc(1)) is UpsertOutcome.stale
    assert await handler.write(make_doc(2)) is UpsertOutcome.unchanged
    page = await stores.pages.get(URL)
    assert page is not None
    assert page.version == 2
    assert await handler.write(make_doc(3)) is UpsertOutcome.updated
    page = await stores.pages.get(URL)
    assert page is not None
    assert page.title == "Story v3"


async def test_tombstone_fences_late_writes(handler: KvwriterHandler, stores: Stores) -> None:
    await handler.handle(make_doc(1))
    assert await handler.delete(deleted(3)) is DeleteOutcome.deleted
    assert await stores.pages.get(URL) is None
    # the delete overtook version 2 on the way: its late arrival changes nothing
    assert await handler.write(make_doc(2)) is UpsertOutcome.stale
    assert await stores.pages.get(URL) is None
    assert await handler.delete(deleted(3)) is DeleteOutcome.unchanged
    assert await handler.delete(deleted(2)) is DeleteOutcome.stale
    assert await handler.write(make_doc(4)) is UpsertOutcome.inserted
    page = await stores.pages.get(URL)
    assert page is not None
    assert page.version == 4


async def test_any_order_of_the_same_messages_ends_the_same(tmp_path: Path, clock: ManualClock) -> None:
    msgs: list[Document | DocumentDeleted] = [make_doc(1), make_doc(2), deleted(3), make_doc(4), make_doc(2)]
    orders = [msgs, list(reversed(msgs)), [msgs[3], msgs[2], msgs[0], msgs[4], msgs[1]]]
    finals = []
    for i, order in enumerate(orders):
        async with await open_stores(f"sqlite:///{tmp_path}/order{i}.db") as s:
            h = KvwriterHandler(s.pages, Settings(), clock)
            for m in order:
                await h.handle(m)
            page = await s.pages.get(URL)
            assert page is not None
            finals.append((page.version, page.title))
    assert finals == [(4, "Story v4")] * 3


async def test_a_non_cdn_image_is_never_stored(handler: KvwriterHandler, stores: Stores) -> None:
    doc = make_doc(
        1,
        content_html='<p>a<img src="https://news.example/hot.jpg">b<img src="https://news.example/c.jpg"></p>',
        media=[Media(url="https://news.example/c.jpg", cdn_url="/cdn/img/c.jpg")],
    )
    await handler.handle(doc)
    page = await stores.pages.get(URL)
    assert page is not None
    assert "hot.jpg" not in page.html
    assert "hot.jpg" not in page.doc_json.decode()
    assert '<img src="/cdn/img/c.jpg"' in page.html


async def test_preview_goes_under_its_own_key(handler: KvwriterHandler, stores: Stores) -> None:
    doc = make_doc(1, preview=True, source=SourceRef(kind=SourceKind.upload, id="task-9"))
    await handler.handle(doc)
    assert await stores.pages.get(URL) is None
    page = await stores.pages.get(preview_key("task-9", URL))
    assert page is not None
    assert "Preview: this page is not published" in page.html
    assert await found(stores, "Story") == []


async def test_canonical_urls_are_trusted_not_normalized_again(handler: KvwriterHandler, stores: Stores) -> None:
    """A URL is canonicalized once, where it enters (parser identity, API, autoparser).

    The kvwriter keys the page by the URL it is given; it used to canonicalize it a second time
    (here: a spelling no boundary would ever let through, to show that it is not rewritten).
    """
    given = "HTTPS://News.Example/a/story"
    await handler.handle(make_doc(1, url=given))
    assert await stores.pages.get(given) is not None
    assert await stores.pages.get(URL) is None


async def test_freshness_is_observed_once_per_written_page(handler: KvwriterHandler) -> None:
    def sample(name: str) -> float:
        return REGISTRY.get_sample_value(name) or 0.0

    count0, sum0 = sample("turbocubes_freshness_seconds_count"), sample("turbocubes_freshness_seconds_sum")
    le5 = REGISTRY.get_sample_value("turbocubes_freshness_seconds_bucket", {"le": "5.0"}) or 0.0
    await handler.handle(make_doc(1))
    await handler.handle(make_doc(1))  # a redelivery is not a new page
    await handler.handle(make_doc(1, preview=True, source=SourceRef(kind=SourceKind.upload, id="t")))
    assert sample("turbocubes_freshness_seconds_count") == count0 + 1
    assert sample("turbocubes_freshness_seconds_sum") == pytest.approx(sum0 + 2.5)
    assert REGISTRY.get_sample_value("turbocubes_freshness_seconds_bucket", {"le": "5.0"}) == le5 + 1
    written = REGISTRY.get_sample_value("turbocubes_kvwriter_writes_total", {"outcome": "unchanged"})
    assert written is not None
    assert written >= 1
