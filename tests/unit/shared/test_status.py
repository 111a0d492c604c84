"""Status snapshots: the store round trip on both engines, each process's writer, the readers (shared/status.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cubes.launcher import run_up
from shared.clock import ManualClock
from shared.config import Settings
from shared.runtime import Cube, Output, Runner, ensure_topics, open_deps
from shared.status import (
    CUBE_PREFIX,
    STALE_INTERVALS,
    StatusWriter,
    is_stopped,
    percentile,
    pipeline_lag,
    stamp,
)
from shared.stores import Page, StatusSnapshot, Stores, open_stores
from tests.pgschema import fresh_schema

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    if request.param == "sqlite":
        s = await open_stores(f"sqlite:///{tmp_path}/store.db")
        yield s
        await s.close()
        return
    async with fresh_schema(request.getfixturevalue("postgres_url")) as url:
        s = await open_stores(url)
        yield s
        await s.close()


def _page(url: str, seen: datetime, written: datetime, **kw: Any) -> Page:
    return Page(
        url=url,
        host=url.split("/")[2],
        version=1,
        html="<p>x</p>",
        doc_json=b"{}",
        title="t",
        text="x",
        seen_at=seen,
        written_at=written,
        **kw,
    )


async def test_put_and_get_by_prefix_newest_wins(stores: Stores) -> None:
    st = stores.status
    await st.put_status("cube:parser:h1:1", {"lag": 5, "cube": "parser"}, now=T0)
    await st.put_status("cube:parser_x:h1:2", {"lag": 1}, now=T0)
    await st.put_status("lanes:h1:3", {"lanes": [{"host": "a.example", "rate": 0.5}]}, now=T0)
    await st.put_status("cube:parser:h1:1", {"lag": 7, "cube": "parser"}, now=T0 + timedelta(seconds=5))
    # a delayed write of an older snapshot does not hide the newer one
    await st.put_status("cube:parser:h1:1", {"lag": 99, "cube": "parser"}, now=T0 + timedelta(seconds=1))

    cubes = await st.get_status("cube:")
    assert [s.name for s in cubes] == ["cube:parser:h1:1", "cube:parser_x:h1:2"]
    assert cubes[0] == StatusSnapshot("cube:parser:h1:1", {"lag": 7, "cube": "parser"}, T0 + timedelta(seconds=5))
    # '_' is no wildcard and the match is case-sensitive
    assert [s.name for s in await st.get_status("cube:parser_")] == ["cube:parser_x:h1:2"]
    assert await st.get_status("CUBE:") == []
    (lanes,) = await st.get_status("lanes:")
    assert lanes.data == {"lanes": [{"host": "a.example", "rate": 0.5}]}
    assert len(await st.get_status()) == 3

    assert await st.prune_status(T0 + timedelta(seconds=2)) == 2
    assert [s.name for s in await st.get_status()] == ["cube:parser:h1:1"]
    with pytest.raises(ValueError, match="needs a name"):
        await st.put_status("", {})


async def test_page_counts_and_freshness_read_the_page_table(stores: Stores) -> None:
    for i, delay in enumerate((1.0, 2.0, 3.0, 40.0)):
        await stores.pages.upsert(_page(f"https://a.example/{i}", T0, T0 + timedelta(seconds=delay)))
    await stores.pages.upsert(_page("https://b.example/x", T0, T0 + timedelta(seconds=0.5)))
    # a preview, a page without seen_at and a tombstone do not count
    await stores.pages.upsert(_page("preview:t1:https://a.example/0", T0, T0 + timedelta(seconds=500)))
    await stores.pages.upsert(
        Page(
            url="https://b.example/y",
            host="b.example",
            version=1,
            doc_json=b"{}",
            written_at=T0 + timedelta(seconds=60),
        )
    )
    await stores.pages.upsert(_page("https://b.example/z", T0, T0 + timedelta(seconds=900)))
    await stores.pages.delete("https://b.example/z", 2, now=T0 + timedelta(seconds=901))

    assert await stores.status.page_counts() == {"a.example": 4, "b.example": 2}
    assert sorted(await stores.status.freshness()) == [0.5, 1.0, 2.0, 3.0, 40.0]
    # the most recently written first: a limit keeps the newest
    assert sorted(await stores.status.freshness(limit=3)) == [2.0, 3.0, 40.0]


def _snap(name: str, at: datetime, **data: object) -> StatusSnapshot:
    return StatusSnapshot(name, dict(data), at)


def test_pipeline_lag_sums_fresh_snapshots_of_the_chosen_groups() -> None:
    now = T0.timestamp()
    snaps = [
        _snap("cube:parser:a", T0, group="parser", lag=3000),
        _snap("cube:parser:b", T0 - timedelta(seconds=4), group="parser", lag=1000),
        _snap("cube:media:a", T0, group="media", lag=500),
        _snap("cube:crawler:a", T0, group="crawler", lag=90_000),  # not a chosen group
        # stopped long ago: its last lag no longer counts
        _snap("cube:kvwriter:a", T0 - timedelta(seconds=5 * STALE_INTERVALS + 1), group="kvwriter", lag=7000),
        _snap("lanes:a", T0, lag=1),
    ]
    total, by_group = pipeline_lag(snaps, ["parser", "media", "kvwriter"], now, 5.0)
    assert total == 4500
    assert by_group == {"parser": 4000, "media": 500}
    assert pipeline_lag(snaps, ["cdn"], now, 5.0) == (None, {})


def test_percentile_nearest_rank() -> None:
    assert percentile([], 0.5) is None
    values = [float(i) for i in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([7.0], 0.99) == 7.0


async def test_status_writer_publishes_stats_lag_and_dlq_depth(tmp_path: Path) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        runtime={"metrics_port": 0},
    )
    clock = ManualClock(T0.timestamp())
    deps = await open_deps(settings, clock=clock)
    try:
        await ensure_topics(deps, ["parser"])
        producer = deps.bus.producer()
        for i in range(3):
            await producer.send("crawl.feeds", b"{}", key=f"h{i}".encode())
        for _ in range(2):
            await producer.send("crawl.feeds.dlq", b"{}", key=b"h")
        await producer.flush()

        async def handle(msg: object, ctx: object) -> list[Output]:
            return []

        cube = Cube(name="parser", inputs=("crawl.feeds",), handler=handle)
        runner = Runner(cube, deps)
        runner.stats.processed = 11
        runner.stats.dead_lettered = 1
        # the consumer the runner would have: nothing committed, so all three records are lag
        runner.consumer = await deps.bus.consumer("parser", ["crawl.feeds", "retry.parser"])
        idle = Runner(Cube(name="frontend"), deps)  # no inputs: no lag, still reported

        writer = StatusWriter(deps, [runner, idle], instance="h1:42")
        assert await writer.write_once() == 2
        stores = await deps.stores()
        snaps = {s.name: s for s in await stores.status.get_status(CUBE_PREFIX)}
        assert set(snaps) == {"cube:parser:h1:42", "cube:frontend:h1:42"}
        parser = snaps["cube:parser:h1:42"]
        assert parser.updated_at == stamp(clock)
        assert parser.data["lag"] == 3
        assert parser.data["lag_by_topic"] == {"crawl.feeds": 3, "retry.parser": 0}
        assert parser.data["dlq"] == {"crawl.feeds.dlq": 2}
        assert (parser.data["processed"], parser.data["dead_lettered"]) == (11, 1)
        assert parser.data["group"] == "parser"
        assert parser.data["instance"] == "h1:42"
        assert snaps["cube:frontend:h1:42"].data["lag"] == 0
        assert pipeline_lag(snaps.values(), ["parser"], clock.time(), 5.0) == (3, {"parser": 3})
        await runner.consumer.stop()

        # a snapshot of a process gone for over PRUNE_AFTER_S is deleted by the next writer's first round
        await stores.status.put_status("cube:parser:gone:1", {"lag": 5}, now=T0 - timedelta(hours=2))
        await StatusWriter(deps, [idle], instance="h1:43").write_once()
        names = [s.name for s in await stores.status.get_status(CUBE_PREFIX)]
        assert "cube:parser:gone:1" not in names
        assert "cube:frontend:h1:43" in names
    finally:
        await deps.close()


async def test_every_turbocubes_process_publishes_its_cubes(tmp_path: Path) -> None:
    """``run_up`` (cubes/launcher.py) runs a StatusWriter beside its runners."""
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 2.0},
    )
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(settings, only=["kvwriter"], stop_event=stop))
    stores = await open_stores(settings.store.url)
    try:
        async with asyncio.timeout(30):
            while not await stores.status.get_status("cube:kvwriter:"):
                assert not task.done(), "run_up ended early"
                await asyncio.sleep(0.05)  # polling the store, which another task writes
        (snap,) = await stores.status.get_status("cube:kvwriter:")
        assert snap.data["group"] == "kvwriter"
        assert snap.data["inputs"] == ["documents.ready", "documents.deleted", "media.cached", "hosts.branding"]
        assert snap.data["breaker_open"] is False
        assert not is_stopped(snap)
        stop.set()
        assert await asyncio.wait_for(task, 30) == 0
        # a clean stop says so (stopped processes once showed as red rows for an hour)
        (snap,) = await stores.status.get_status("cube:kvwriter:")
        assert is_stopped(snap)
        assert pipeline_lag([snap], ["kvwriter"], snap.updated_at.timestamp(), 5.0) == (None, {})
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
        await stores.close()
