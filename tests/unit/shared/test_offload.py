"""Worker processes for CPU-heavy partner content (``shared/offload.py``): a deadline and a cancellation stop the work.

The functions the workers run are this module's (a worker imports it to run them). Nothing here
waits on a clock to learn what happened: where a call is is read from the pool after one turn of the
loop, and a worker's end from the process.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared.errors import OffloadClosed, OffloadFailed, OffloadTimeout
from shared.offload import Offload

HERE = "tests.unit.shared.test_offload"


def _until(path: str) -> str:
    """Work that ends only when ``path`` exists (the test decides when), polling as a busy worker would."""
    while not os.path.exists(path):
        time.sleep(0.005)
    return "done"


def _forever() -> None:
    while True:
        pass


def _fail(text: str) -> None:
    raise ValueError(text)


def _die() -> None:
    os._exit(3)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, killed and not reaped yet, does not)."""
    try:
        return not Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except FileNotFoundError:
        return False


async def _gone(pid: int) -> None:
    """Until process ``pid`` has ended: a process's end has no event to wait on, so it is looked at."""
    while _alive(pid):  # noqa: ASYNC110 - see the docstring; the callers bound it with wait_for
        await asyncio.sleep(0.01)


@pytest.fixture
async def pool() -> AsyncIterator[Offload]:
    offload = Offload(1, preload=(HERE,))
    await offload.run(len, "", deadline_s=60)  # started: the deadlines below are the work's alone
    try:
        yield offload
    finally:
        offload.close()


async def test_the_result_and_the_error_come_back(pool: Offload) -> None:
    assert await pool.run(len, "abc", deadline_s=30) == 3
    with pytest.raises(ValueError, match="no such thing"):
        await pool.run(_fail, "no such thing", deadline_s=30)
    assert pool.started == 1  # the same worker, still there after an error of the work


async def test_the_loop_is_free_while_the_work_runs(pool: Offload, tmp_path: Path) -> None:
    flag = tmp_path / "go"
    work = asyncio.create_task(pool.run(_until, str(flag), deadline_s=60))
    await asyncio.sleep(0)  # one turn: the call takes the idle worker and sends it the work
    assert pool._running
    # the work cannot end before the loop does more of its own: here, making the file it waits for
    assert not work.done()
    await asyncio.to_thread(flag.touch)
    assert await work == "done"


async def test_past_its_deadline_the_worker_is_killed(pool: Offload) -> None:
    [pid] = pool.pids
    with pytest.raises(OffloadTimeout, match=r"spinning took longer than 0\.3s"):
        await pool.run(_forever, deadline_s=0.3, what="spinning")
    await asyncio.wait_for(_gone(pid), 10)
    assert await pool.run(len, "ab", deadline_s=30) == 2  # a fresh worker takes the next call
    assert pool.pids != [pid]


async def test_a_cancelled_call_kills_its_worker(pool: Offload) -> None:
    [pid] = pool.pids
    task = asyncio.create_task(pool.run(_forever, deadline_s=3600))
    await asyncio.sleep(0)
    assert pool._running
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(_gone(pid), 10)  # the cancellation stopped the work, not just the wait


async def test_a_worker_that_dies_is_a_failure_and_the_next_call_gets_another(pool: Offload) -> None:
    with pytest.raises(OffloadFailed, match="ended before it answered"):
        await pool.run(_die, deadline_s=30)
    assert await pool.run(len, "x", deadline_s=30) == 1


async def test_calls_past_the_pool_size_wait_for_a_worker(pool: Offload, tmp_path: Path) -> None:
    flag = tmp_path / "go"
    first = asyncio.create_task(pool.run(_until, str(flag), deadline_s=60))
    second = asyncio.create_task(pool.run(len, "abcd", deadline_s=60))
    await asyncio.sleep(0)  # one turn: the first call holds the one worker, the second waits for it
    assert len(pool._running) == 1
    assert len(pool._waiters) == 1
    await asyncio.to_thread(flag.touch)
    assert (await first, await second) == ("done", 4)
    assert pool.started == 1


async def test_close_kills_the_workers_and_fails_what_waits(pool: Offload) -> None:
    busy = asyncio.create_task(pool.run(_forever, deadline_s=3600))
    waiting = asyncio.create_task(pool.run(len, "", deadline_s=3600))
    await asyncio.sleep(0)
    [pid] = pool.pids
    pool.close()
    with pytest.raises(OffloadClosed):
        await busy
    with pytest.raises(OffloadClosed):
        await waiting
    await asyncio.wait_for(_gone(pid), 10)
    with pytest.raises(OffloadClosed):
        await pool.run(len, "", deadline_s=1)
