"""documents.ready / documents.deleted -> kvwriter cube (real runtime, embedded bus) -> frontend."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from cubes.registry import cube_module
from shared.config import Settings
from shared.messages import Document, DocumentDeleted, SourceKind, SourceRef
from shared.runtime import Output, ensure_topics, open_deps, run_cube
from shared.runtime.cube import TimerContext

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
SRC = SourceRef(kind=SourceKind.rss, id="feed-1")


def doc(url: str, title: str, version: int) -> Document:
    return Document(
        url=url, host="news.example", source=SRC, title=title, content_html=f"<p>{title} body</p>",
        content_hash=f"h{version}", version=version, seen_at=T0, parsed_at=T0,
    )  # fmt: skip


async def test_a_ready_document_is_served_and_the_indexer_makes_it_searchable(tmp_path: Path) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        runtime={"metrics_port": 0},
    )
    a, b = "https://news.example/a", "https://news.example/b"
    deps = await open_deps(settings)
    try:
        await ensure_topics(deps, ["kvwriter"])
        await deps.publish(
            [
                Output("documents.ready", doc(a, "Zeppelin returns", 2)),
                Output("documents.ready", doc(a, "Zeppelin draft", 1)),  # late and older: ignored
                Output("documents.ready", doc(b, "Zeppelin leaves", 1)),
                Output(
                    "documents.deleted",
                    DocumentDeleted(url=b, host="news.example", source=SRC, version=2, deleted_at=T0),
                ),
            ]
        )
        cube = await cube_module("kvwriter").build(settings, deps)
        assert cube.inputs == ("documents.ready", "documents.deleted", "media.cached", "hosts.branding")
        assert cube.outputs == ()
        stats = await run_cube(cube, deps, group="kvwriter-test", max_messages=4, idle_timeout=10.0)
        assert stats.processed == 4
        assert stats.dead_lettered == 0

        stores = await deps.stores()
        # and the indexer cube makes the written pages searchable (one round drains its queue)
        indexer = await cube_module("indexer").build(settings, deps)
        assert (indexer.inputs, indexer.outputs) == ((), ())
        assert await indexer.timers[0].fn(TimerContext("search-index")) == []
        assert await stores.index_queue.pending() == 0
        client = TestClient(TestServer(create_app(settings, stores, await deps.cdn()), host="127.0.0.1", port=0))
        await client.start_server()
        try:
            r = await client.get("/turbo", params={"url": a})
            assert r.status == 200
            assert "<h1>Zeppelin returns</h1>" in await r.text()
            assert (await client.get("/turbo", params={"url": b})).status == 404
            body = await (await client.get("/search", params={"q": "zeppelin"})).text()
            assert body.count('class="hit"') == 1
            assert "<mark>Zeppelin</mark> returns" in body  # the title with the matched word marked
        finally:
            await client.close()
    finally:
        await deps.close()
