"""Documents past 16 KB of HTML are rendered in a worker process, under ``kvwriter.render_deadline_s``.

Before, every page was rendered on the event loop: a document whose HTML costs nh3 seconds held the
loop (and in ``turbocubes up`` every cube, the API and the frontend) for all of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cubes.kvwriter.branding import PageBrand
from cubes.kvwriter.handler import KvwriterHandler
from cubes.kvwriter.render import PRELOAD, page_sanitizer, render
from shared.config import Settings
from shared.errors import OffloadTimeout, Reject
from shared.offload import OFFLOAD_CHARS, Offload
from shared.stores import Stores, open_stores
from tests.unit.cubes.kvwriter.test_kvwriter_render import T0, make_doc

LONG = "<p>The committee met on <a href='https://news.example/b'>the budget</a> and the <b>timetable</b>.</p>" * 300
HOSTILE = "<ul><li>" * 16_000


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
async def offload() -> AsyncIterator[Offload]:
    pool = Offload(1, preload=PRELOAD)
    try:
        yield pool
    finally:
        pool.close()


async def test_a_long_page_rendered_in_the_worker_is_the_page_rendered_here(stores: Stores, offload: Offload) -> None:
    settings = Settings()
    doc = make_doc(content_html=LONG)
    assert len(doc.content_html) > OFFLOAD_CHARS
    handler = KvwriterHandler(stores.pages, settings, offload=offload)
    there = await handler.rendered(doc, T0)
    assert offload.started == 1  # really there
    assert there == render(doc, page_sanitizer(settings), written_at=T0)
    await handler.handle(doc)
    page = await stores.pages.get(doc.url)
    assert page is not None
    assert page.html == there.html


async def test_a_long_page_rendered_in_the_worker_wears_its_branding(stores: Stores, offload: Offload) -> None:
    settings = Settings()
    doc = make_doc(content_html=LONG)
    brand = PageBrand(name="Shop of Elephants", logo=None, accent="#aa3300", menu=(("Home", "/"),), contacts=())
    handler = KvwriterHandler(stores.pages, settings, offload=offload)
    there = await handler.rendered(doc, T0, brand)
    assert offload.started == 1
    assert there == render(doc, page_sanitizer(settings), written_at=T0, brand=brand)
    assert "Shop of Elephants" in there.html
    assert "#aa3300" in there.html


async def test_a_page_past_its_deadline_is_refused_with_the_reason(stores: Stores, offload: Offload) -> None:
    settings = Settings().replace(kvwriter={"render_deadline_s": 0.3})
    handler = KvwriterHandler(stores.pages, settings, offload=offload)
    doc = make_doc(content_html=HOSTILE)
    with pytest.raises(OffloadTimeout, match=r"rendering https://news\.example/a/story .* took longer than 0\.3s") as e:
        await handler.handle(doc)
    assert isinstance(e.value, Reject)  # dead-lettered at once, with the reason: the same page would take as long
    assert await stores.pages.get(doc.url) is None
    short = make_doc(url="https://news.example/a/short", content_html="<p>short</p>")
    await handler.handle(short)  # the next page is written as ever
    assert await stores.pages.get(short.url) is not None
