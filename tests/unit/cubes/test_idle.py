"""An idle pipeline costs nothing: ``turbocubes up`` with no feeds and no work sleeps (docs/architecture.md section 8).

Every cube ``up`` runs, on the embedded engines, in one process on a ``FastForwardLoop``: once
each consumer has joined its group, a minute of the loop's time passes with no work while the loop
counts its wake-ups (each one a sleep the kernel ends: what an idle process costs) and the
embedded log counts the calls it is asked. Nothing is timed: the loop's clock jumps from one
timer to the next. Before, each of the nine consumers read the log's partition ends every 20 ms,
each runner's commit loop and watchdog woke 10 and 1 times a second, and each lag gauge read the
file: this loop counted 334 wake-ups a second then, 10 now.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cubes import launcher, registry
from cubes.registry import replicable
from shared.bus.sqlite_log import EmbeddedLog
from shared.config import Settings
from tests.fastforward import FastForwardLoop

#: the loop's time the idle pipeline is watched for
SPAN_S = 60.0
#: wake-ups a second allowed: the consumers' idle polls and heartbeats, all on one beat (4 a second,
#: ``shared/bus/sqlite_log.py``), the look for other processes' appends on the same beat, and the
#: cubes' own timers (the scheduler's tick, the indexer's look at its queue, status snapshots)
MAX_WAKEUPS_PER_S = 15.0
#: calls to the embedded log a second allowed: a heartbeat per consumer about every second, and the
#: status snapshot's dead-letter counts; nothing polls the file for records
MAX_LOG_CALLS_PER_S = 15.0
#: how long the cubes get to start and join their groups (at real speed), a bound, not a timing
JOIN_WITHIN_S = 60.0


def _members(bus_db: Path) -> int:
    try:
        with sqlite3.connect(bus_db) as db:
            return int(db.execute("SELECT count(DISTINCT grp) FROM members").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


async def _idle_counts(tmp: Path, loop: FastForwardLoop, calls: Counter[str]) -> tuple[float, int, int]:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp}/bus.db"},
        store={"url": f"sqlite:///{tmp}/store.db"},
        cdn={"url": f"file://{tmp}/cdn"},
        blobs={"url": f"file://{tmp}/blobs"},
        runtime={"metrics_port": 0},
        frontend={"port": 0},
        api={"port": 0},
        scheduler={"websub_port": 0},
    )
    names = list(registry.CUBE_NAMES)
    consumers = len(replicable(names))
    stop = asyncio.Event()
    task = asyncio.create_task(launcher.run_cubes(settings, names, stop_event=stop))
    try:
        async with asyncio.timeout(JOIN_WITHIN_S):
            while _members(tmp / "bus.db") < consumers:
                assert not task.done(), f"run_cubes ended early: {task.result()}"
                await asyncio.sleep(0.05)  # a poll interval, not a synchronization
        loop.fast = True
        start, woke, asked = loop.time(), loop.wakeups, calls.total()
        await asyncio.sleep(SPAN_S)
        span = loop.time() - start
        return span, loop.wakeups - woke, calls.total() - asked
    finally:
        loop.fast = False
        stop.set()
        await asyncio.wait_for(task, JOIN_WITHIN_S)


def _counting(calls: Counter[str], call: Callable[..., Any]) -> Callable[..., Any]:
    async def counted(self: EmbeddedLog, fn: Any, *args: Any) -> Any:
        calls[getattr(fn, "__qualname__", repr(fn))] += 1
        return await call(self, fn, *args)

    return counted


def test_an_idle_up_sleeps_between_rare_wakeups_and_asks_its_log_little(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: Counter[str] = Counter()
    monkeypatch.setattr(EmbeddedLog, "_call", _counting(calls, EmbeddedLog._call))
    loop = FastForwardLoop()
    try:
        span, wakeups, asked = loop.run_until_complete(_idle_counts(tmp_path, loop, calls))
    finally:
        loop.close()
    assert span >= SPAN_S
    assert wakeups / span <= MAX_WAKEUPS_PER_S, f"{wakeups} wake-ups in {span:.0f} s"
    assert asked / span <= MAX_LOG_CALLS_PER_S, f"{asked} calls to the log in {span:.0f} s: {calls.most_common(5)}"
