"""The delay cube on the real runtime (embedded SQLite bus and store): a lost publish loses no document.

The broker refuses the first ``documents.ready`` send: the runtime reads the
``media.cached`` message again, which finds nothing left to release, and the
after-commit hook that would confirm the release never runs. A new process's
sweep publishes the document once the lease has passed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cubes.delay.cube import build
from shared import contracts
from shared.bus.base import Headers
from shared.clock import ManualClock
from shared.config import Settings
from shared.errors import BusUnavailable
from shared.messages import Document, MediaCached, MediaStatus, SourceKind, SourceRef
from shared.runtime import Deps, Output, ensure_topics, open_deps, run_cube
from shared.runtime.timers import run_round

T0 = datetime(2026, 3, 1, tzinfo=UTC)
IMG = "https://img.test/a.jpg"


def document(url: str) -> Document:
    return Document(
        url=url,
        host="news.test",
        source=SourceRef(kind=SourceKind.rss, id="feed1"),
        title="Title",
        content_html=f'<p>x</p><img src="{IMG}">',
        content_hash="h",
        version=1,
        seen_at=T0,
        parsed_at=T0,
    )


async def read_all(deps: Deps, topic: str) -> list[Any]:
    out = []
    for partition, end in (await deps.bus.end_offsets(topic)).items():
        for rec in await deps.bus.read(topic, partition, 0, end + 1):
            out.append(contracts.decode(topic, rec.value))
    return out


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        runtime={"metrics_port": 0},
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=T0.timestamp())


@pytest.fixture
async def deps(settings: Settings, clock: ManualClock) -> AsyncIterator[Deps]:
    d = await open_deps(settings, clock=clock)
    await ensure_topics(d, ["delay"])
    try:
        yield d
    finally:
        await d.close()


async def park_and_cache(deps: Deps, url: str) -> None:
    """The media cube parked ``url`` waiting for IMG; the cdn cube cached IMG and announced it."""
    stores = await deps.stores()
    deadline = T0 + timedelta(hours=1)
    await stores.delay.park(url, 1, document(url).model_dump_json().encode(), [IMG], deadline, host="news.test")
    await stores.images.record_ok(IMG, cdn_url="/cdn/img/a.jpg", now=T0)
    await deps.publish(
        [Output("media.cached", MediaCached(url=IMG, status=MediaStatus.ok, cdn_url="/cdn/img/a.jpg", cached_at=T0))]
    )


async def test_released_documents_are_confirmed_after_the_commit(settings: Settings, deps: Deps) -> None:
    url = "https://news.test/ok"
    await park_and_cache(deps, url)
    stats = await run_cube(await build(settings, deps), deps, group="delay-ok", max_messages=1, idle_timeout=10.0)
    assert (stats.processed, stats.dead_lettered) == (1, 0)
    [doc] = await read_all(deps, "documents.ready")
    assert doc.url == url
    assert 'src="/cdn/img/a.jpg"' in doc.content_html
    assert await (await deps.stores()).delay.get(url) is None  # the after-commit hook confirmed it


async def test_a_refused_publish_is_published_by_a_later_sweep(
    settings: Settings, deps: Deps, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "https://news.test/refused"
    await park_and_cache(deps, url)
    producer = deps.bus.producer()
    real_send = producer.send
    refused: list[str] = []

    async def flaky_send(topic: str, value: bytes, *, key: bytes | None = None, headers: Headers = ()) -> Any:
        if topic == "documents.ready" and not refused:
            refused.append(topic)
            raise BusUnavailable("broker down")
        return await real_send(topic, value, key=key, headers=headers)

    monkeypatch.setattr(producer, "send", flaky_send)
    stats = await run_cube(await build(settings, deps), deps, group="delay-flaky", max_messages=1, idle_timeout=10.0)
    assert refused == ["documents.ready"]
    assert stats.processed == 1  # the message was read again after the failure and handled
    assert await read_all(deps, "documents.ready") == []  # the publish was lost ...
    stores = await deps.stores()
    held = await stores.delay.get(url)
    assert held is not None  # ... the document is not
    assert held.released_at == T0
    await deps.close()  # the process ends; a new one starts

    clock.advance(settings.delay.release_lease_s)
    fresh = await open_deps(settings, clock=clock)
    try:
        cube = await build(settings, fresh)
        [sweep] = cube.timers
        # one round as the runtime runs it: the outputs published and acknowledged, then the confirm
        assert await run_round("delay", sweep.name, sweep.fn, fresh.publish) == 1
        [doc] = await read_all(fresh, "documents.ready")
        assert doc.url == url
        assert 'src="/cdn/img/a.jpg"' in doc.content_html
        assert await (await fresh.stores()).delay.get(url) is None  # confirmed
    finally:
        await fresh.close()
