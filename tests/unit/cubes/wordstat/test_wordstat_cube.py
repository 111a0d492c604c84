"""Searches made in the frontend reach the wordstat cube (real runtime, embedded bus) and its counts."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from cubes.frontend.queries import QueryEvents
from cubes.registry import cube_module
from shared.config import Settings
from shared.runtime import ensure_topics, open_deps, run_cube
from shared.wordstat.frequency import frequency
from shared.wordstat.operators import parse

PHONE = {"User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) Mobile/15E148"}


async def test_frontend_searches_are_counted_once_each(tmp_path: Path) -> None:
    """Each search once, and a client's search of one query once a day: the second "купить слона" from the
    same address is not counted (it was: padding a guessed query was one request a search)."""
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        runtime={"metrics_port": 0},
        search={"region_header": "X-Region"},
        wordstat={"privacy_threshold": 1, "privacy_noise": 0},  # exact counts: each search is read back
    )
    deps = await open_deps(settings)
    try:
        await ensure_topics(deps, ["frontend", "wordstat"])
        stores = await deps.stores()
        events = QueryEvents(deps.publish, queue_max=100)
        client = TestClient(TestServer(create_app(settings, stores, events=events), host="127.0.0.1", port=0))
        await client.start_server()
        try:
            for q, headers in [
                ("Купить слона", PHONE),
                ("куплю слонов", {"X-Region": "spb"}),
                ("слон купить", {}),
                ("продать слона", {}),
                ("КУПИТЬ   слона", PHONE),  # the same query from the same address, that day
            ]:
                assert (await client.get("/search", params={"q": q}, headers=headers)).status == 200
        finally:
            await client.close()
            await events.stop()  # publishes what is queued
        cube = await cube_module("wordstat").build(settings, deps)
        assert cube.inputs == ("search.queries",)
        stats = await run_cube(cube, deps, group="wordstat-test", max_messages=5, idle_timeout=10.0)
        assert stats.processed == 5
        assert stats.dead_lettered == 0
        # the same records again (a replay from the start, as after a lost commit): nothing counts twice
        again = await run_cube(cube, deps, group="wordstat-replay", max_messages=5, idle_timeout=10.0)
        assert again.processed == 5
        now = datetime.now(UTC)
        f = await frequency(stores.wordstat, parse("купить слона"), now=now, threshold=1)
        assert f.total.n == 3
        assert {s.key: s.count.n for s in f.devices} == {"mobile": 1, "desktop": 2}
        assert {s.key: s.count.n for s in f.regions} == {"unknown": 2, "spb": 1}
        assert (await frequency(stores.wordstat, parse('"купить слона"'), now=now, threshold=1)).total.n == 3
        assert (await frequency(stores.wordstat, parse("[купить слона]"), now=now, threshold=1)).total.n == 2
        assert (await frequency(stores.wordstat, parse("слона -продать"), now=now, threshold=1)).total.n == 3
        # an alternative of function words only counts nothing, the others count as alone (was an SQL error)
        assert (await frequency(stores.wordstat, parse("в|продать"), now=now, threshold=1)).total.n == 1
    finally:
        await deps.close()
