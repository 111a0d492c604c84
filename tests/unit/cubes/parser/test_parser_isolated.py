"""Items past 16 KB of HTML are prepared in a worker process, under a deadline that stops them (``preparing.py``).

Through the parser cube on the embedded engines, with its real worker pool (``Deps.offload``). Before,
the hostile item below held the event loop for seconds (nested lists cost nh3 quadratic time: 128 KB
took 3.2 s) and was then published; a 1 MB one ran 137 s in a thread nothing could stop.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from cubes.parser.cube import build as build_parser
from cubes.parser.documents import prepare_items
from cubes.parser.feed import parse_feed
from cubes.parser.handler import ParserHandler
from cubes.parser.preparing import PRELOAD, Preparer
from cubes.parser.sanitize import ContentCleaner
from shared.blobs import open_blobs
from shared.config import ParserConfig
from shared.messages import Document
from shared.offload import OFFLOAD_CHARS, Offload
from shared.runtime import run_cube
from shared.stores import Feed, open_stores
from tests.unit.cubes.api.apikit import ApiHarness, api_settings
from tests.unit.cubes.parser.test_parser_catalog import OFFERS, Env, catalog, docs
from tests.unit.cubes.parser.test_parser_catalog import offer as catalog_offer

HOST = "a.partner.test"
#: nested lists: nh3 (html5ever) pays for every open element at every new one
HOSTILE = "<ul><li>" * 16_000
#: an article past the inline bound, of the ordinary kind: prepared in the worker, published
LONG = "<p>The committee met on <a href='/budget'>the new budget</a> and the <b>timetable</b>.</p>" * 300


def _docs(*contents: str) -> bytes:
    docs = [{"url": f"https://{HOST}/d/{i}", "title": f"D{i}", "content_html": c} for i, c in enumerate(contents)]
    return orjson.dumps({"documents": docs})


async def _task(api: ApiHarness, token: str, task_id: str) -> Any:
    return await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()


async def test_an_item_past_its_deadline_is_refused_and_the_others_are_published(tmp_path: Path) -> None:
    assert len(HOSTILE) > OFFLOAD_CHARS
    assert len(LONG) > OFFLOAD_CHARS
    settings = api_settings(tmp_path, tenant_bytes_per_s=1e9).replace(parser={"item_deadline_s": 0.5})
    async with ApiHarness(tmp_path, settings=settings) as api:
        _, token = await api.tenant(HOST)
        resp = await api.upload(
            token, _docs("<p>short</p>", HOSTILE, LONG), host=HOST, fmt="json", content_type="application/json"
        )
        assert resp.status == 202
        task_id = (await resp.json())["task_id"]
        await run_cube(await build_parser(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=30.0)
        task = await _task(api, token, task_id)
        docs = [m for m in await api.messages("documents.parsed") if isinstance(m, Document)]
        assert sorted(d.url for d in docs) == [f"https://{HOST}/d/0", f"https://{HOST}/d/2"]
        [problem] = task["problems"]
        assert (problem["code"], problem["where"]["item"]) == ("item.too_complex", 1)  # the second document
        assert "parser.item_deadline_s" in problem["message"]
        assert api.deps.offload().started == 1  # the worker that ran out of time was replaced for the long item


async def test_an_item_prepared_in_a_worker_is_the_item_prepared_here() -> None:
    body = _docs(
        LONG, LONG.replace("committee", "board") + '<img src="/a.jpg"><iframe src="https://evil.test/"></iframe>'
    )
    items = parse_feed(body).items
    here, _ = prepare_items(items, feed_host=HOST)
    offload = Offload(1, preload=PRELOAD)
    try:
        preparer = Preparer(ContentCleaner(), offload, deadline_s=60)
        there, errs = await preparer.prepare(items, HOST)
        assert offload.started == 1  # really there
    finally:
        offload.close()
    assert errs == []
    assert there == here


async def test_a_streamed_catalogs_hostile_offer_is_refused_and_the_rest_published(tmp_path: Path) -> None:
    offers = [catalog_offer(i) for i in range(OFFERS)]
    offers[7] = offers[7].replace("<p>About product 7, a fine thing.</p>", HOSTILE)
    body = catalog(offers)
    assert len(body) > 256 * 1024  # the streamed path
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    blobs = await open_blobs(f"file://{tmp_path}/blobs")
    offload = Offload(1, preload=PRELOAD)
    await stores.feeds.upsert_feed(
        Feed(feed_id="shop", url="https://shop.test/yml.xml", host="shop.test", format="yml")
    )
    try:
        env = Env(stores, blobs)
        env.handler = ParserHandler(
            stores, env.handler._blobs, ParserConfig(item_deadline_s=0.5), env.clock, offload=offload
        )
        published = docs(await env.load(body))
        assert len(published) == OFFERS - 1
        assert "https://shop.test/p/7" not in {d.url for d in published}
        status = await stores.feeds.get("shop")
        assert status is not None
        assert "item.too_complex" in str(status.status)
    finally:
        offload.close()
        await stores.close()
        await blobs.close()
