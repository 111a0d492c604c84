"""Pages follow their source (cubes/parser/removals.py): a full catalog's lost offers go."""

from __future__ import annotations

import pytest

from cubes.parser import removals
from cubes.parser.removals import HELD_SUFFIX
from shared.hashing import TOMBSTONE
from shared.messages import DocumentDeleted, FeedFormat
from shared.runtime.cube import Output
from tests.unit.cubes.parser.test_parser_catalog import OFFERS, Env, catalog, docs, env, offer  # noqa: F401

FEED = "https://shop.test/yml.xml"


def deleted(outputs: list[Output]) -> list[str]:
    return sorted(o.message.url for o in outputs if isinstance(o.message, DocumentDeleted))


def products(urls: list[str]) -> list[str]:
    return [u for u in urls if "/p/" in u]


async def test_offers_gone_from_the_catalog_are_removed(env: Env) -> None:  # noqa: F811
    """A catalog going {1,2,3} -> {1,2} -> {} produced no deletion; stale prices stayed."""
    first = await env.load(catalog([offer(i) for i in (1, 2, 3)]))
    assert len(docs(first)) == 3
    second = await env.load(catalog([offer(i) for i in (1, 2)]))
    assert products(deleted(second)) == ["https://shop.test/p/3"]
    [tomb] = [o.message for o in second if isinstance(o.message, DocumentDeleted) and "/p/3" in o.message.url]
    assert tomb.reason == "not in the catalog any more"
    # the category listing page that held only offer 3 goes with it (category 0 here: 3 % 3)
    assert "https://shop.test/?turbo_category=0" in deleted(second)
    third = await env.load(catalog([]))  # two offers, both gone: too few for the guard to hold them
    assert products(deleted(third)) == ["https://shop.test/p/1", "https://shop.test/p/2"]
    again = await env.load(catalog([], date="2026-01-02 10:00"))
    assert deleted(again) == []  # removed once


async def test_a_catalog_that_loses_most_offers_is_held_until_the_next_fetch_agrees(env: Env) -> None:  # noqa: F811
    await env.load(catalog([offer(i) for i in range(10)]))
    short = catalog([offer(i) for i in range(3)])
    held = await env.load(short)
    assert deleted(held) == []
    [report] = await env.stores.problems.reports("shop", limit=1)
    [hold] = [p for p in report.problems if p.code == "catalog.held"]
    assert "lost 7 of its 10 offers" in hold.message
    assert hold.severity.value == "warning"
    # the same body again is read again (not "unchanged"), and this time it agrees: the 7 go
    agreed = await env.load(short)
    assert products(deleted(agreed)) == [f"https://shop.test/p/{i}" for i in sorted(range(3, 10), key=str)]
    marker = await env.stores.hashes.get("feed:shop", FEED + HELD_SUFFIX)
    assert marker is not None
    assert marker.content_hash == TOMBSTONE  # the hold is over


async def test_a_catalog_that_comes_back_whole_removes_nothing(env: Env) -> None:  # noqa: F811
    whole = catalog([offer(i) for i in range(10)])
    await env.load(whole)
    assert deleted(await env.load(catalog([offer(i) for i in range(3)]))) == []  # held
    assert deleted(await env.load(catalog([offer(i) for i in range(10)], date="2026-01-03 10:00"))) == []
    # and a later loss is held again, not taken as agreed by the old hold
    assert deleted(await env.load(catalog([offer(i) for i in range(3)], date="2026-01-04 10:00"))) == []


async def test_a_catalog_cut_off_by_an_xml_error_removes_nothing(env: Env) -> None:  # noqa: F811
    await env.load(catalog([offer(i) for i in range(6)]))
    cut = catalog([offer(i) for i in range(4)], tail=False)  # no closing tags: the file ends mid-way
    assert deleted(await env.load(cut)) == []


async def test_a_streamed_catalog_removes_what_it_lost(env: Env) -> None:  # noqa: F811
    body = catalog([offer(i) for i in range(OFFERS)])
    assert len(body) > 256 * 1024  # the streamed path
    await env.load(body)
    fewer = catalog([offer(i) for i in range(OFFERS) if i % 25])
    gone = products(deleted(await env.load(fewer)))
    assert gone == sorted(f"https://shop.test/p/{i}" for i in range(0, OFFERS, 25))


async def test_a_deleted_feed_takes_its_pages_unless_another_source_owns_them(env: Env) -> None:  # noqa: F811
    """Deleting a feed left its pages in the store and in search."""
    from datetime import UTC, datetime

    from shared.messages import FeedRegistration, SourceKind
    from shared.runtime.cube import Context

    await env.load(catalog([offer(i) for i in range(3)]))
    # an upload (higher priority) took offer 1 over since
    await env.stores.hashes.claim("https://shop.test/p/1", "tenant:t", 100)
    bye = FeedRegistration(
        action="delete",
        feed_id="shop",
        url=FEED,
        host="shop.test",
        format=FeedFormat.yml,
        registered_at=datetime(2026, 3, 2, tzinfo=UTC),
    )
    ctx = Context(topic="feeds.registry", partition=0, offset=0, key="shop", attempt=1, received_at=bye.registered_at)
    out = list(await env.handler.handle(bye, ctx))
    gone = deleted(out)
    assert products(gone) == ["https://shop.test/p/0", "https://shop.test/p/2"]
    assert "https://shop.test/?turbo_category=0" in gone  # its category pages too
    assert all(o.message.source.kind is SourceKind.yml for o in out)  # type: ignore[attr-defined]
    for hook in ctx.committed_hooks or ():
        await hook()
    assert await env.stores.hashes.owner("https://shop.test/p/0") is None  # released for another source
    owner = await env.stores.hashes.owner("https://shop.test/p/1")
    assert owner is not None
    assert owner.source_id == "tenant:t"
    assert list(await env.handler.handle(bye, ctx)) == []  # a redelivered deletion removes nothing twice


async def test_the_sources_urls_are_read_a_page_at_a_time(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A million-offer catalog's URLs read as one list peaked the first load at 386 MB (floor 256)."""
    monkeypatch.setattr(removals, "_PAGE", 3)
    asked: list[int | None] = []
    read = env.stores.hashes.urls_of_source

    async def paged(source_id: str, limit: int | None = None, *, after: str | None = None) -> list[str]:
        asked.append(limit)
        return await read(source_id, limit, after=after)

    monkeypatch.setattr(env.stores.hashes, "urls_of_source", paged)
    await env.load(catalog([offer(i) for i in range(10)]))
    short = catalog([offer(i) for i in range(3)])
    assert deleted(await env.load(short)) == []  # held: the guard counted the offers of every page
    [report] = await env.stores.problems.reports("shop", limit=1)
    assert any("lost 7 of its 10 offers" in p.message for p in report.problems)
    agreed = await env.load(short)
    assert products(deleted(agreed)) == [f"https://shop.test/p/{i}" for i in sorted(range(3, 10), key=str)]
    assert len(asked) > 2
    assert set(asked) == {3}  # never the whole source at once
