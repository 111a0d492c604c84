"""Shutdown always finishes: no wait at shutdown depends on a task honouring cancellation.

A full run once hung for more than a minute at a load of 7-9, the launcher
waiting on its status-snapshot task inside a PostgreSQL call (a driver waiting
for its cancelled query, MagicStack/asyncpg#431). Here that store call is
played by one that ignores its cancellation until the test lets it go; before
the fix ``run_cubes`` never returned. The same for a cube whose timer ignores
cancellation. ``filterwarnings = error`` turns any ResourceWarning (a
connection left open) into a failure too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cubes import launcher, registry
from shared.config import Settings
from shared.runtime.cube import Cube, Output, Timer, TimerContext
from shared.runtime.deps import Deps
from shared.stores.sql.status import SqlStatusStore

GRACE_S = 1.0
#: far above what a stop that does not wait on the stuck task takes; far below "for ever"
WITHIN_S = 60.0


class Stubborn:
    """An awaitable that ignores cancellation until ``release`` (as a driver waiting for a cancelled query)."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancels = 0

    async def hold(self) -> None:
        self.entered.set()
        while not self.release.is_set():
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancels += 1  # swallowed: the task goes on waiting


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": GRACE_S, "status_interval_s": 0.05},
    )


@pytest.fixture
async def stubborn() -> AsyncIterator[Stubborn]:
    s = Stubborn()
    yield s
    s.release.set()  # whatever was left behind ends now, before the test's loop closes
    for _ in range(10):
        await asyncio.sleep(0)


async def _stop_and_wait(settings: Settings, names: list[str], stubborn: Stubborn) -> int:
    """Run ``names``, stop once the stubborn call is entered, and wait (a hang detector, not a timing)."""
    stop = asyncio.Event()
    task = asyncio.create_task(launcher.run_cubes(settings, names, stop_event=stop))
    await asyncio.wait_for(stubborn.entered.wait(), WITHIN_S)
    stop.set()
    done, _ = await asyncio.wait({task}, timeout=WITHIN_S)
    assert task in done, f"shutdown did not finish within {WITHIN_S:.0f} s"
    return task.result()


async def test_a_status_write_that_ignores_cancellation_does_not_hold_the_shutdown(
    settings: Settings, stubborn: Stubborn, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def put_status(self: SqlStatusStore, name: str, data: dict[str, Any], *, now: Any = None) -> None:
        await stubborn.hold()

    monkeypatch.setattr(SqlStatusStore, "put_status", put_status)
    rc = await _stop_and_wait(settings, ["kvwriter"], stubborn)
    assert rc == 0
    assert stubborn.cancels >= 1  # it was asked to stop, and did not


async def test_a_timer_that_ignores_cancellation_does_not_hold_the_shutdown(
    settings: Settings, stubborn: Stubborn, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def build(settings: Settings, deps: Deps) -> Cube:
        async def stuck(ctx: TimerContext) -> list[Output]:
            await stubborn.hold()
            return []

        return Cube(name="stuck", timers=(Timer("stuck", 3600.0, stuck),))

    real = registry.cube_module
    monkeypatch.setattr(
        registry,
        "cube_module",
        lambda name: SimpleNamespace(CUBE=Cube(name="stuck"), build=build) if name == "stuck" else real(name),
    )
    rc = await _stop_and_wait(settings, ["stuck"], stubborn)
    assert rc == 0
    assert stubborn.cancels >= 1
