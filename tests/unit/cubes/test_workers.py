"""``turbocubes up --workers N`` (cubes/workers.py, worker.py, launcher.py): the replicable cubes in child processes.

The children are real processes (``python -m cubes.worker``) on one SQLite bus and store. What each
process did is read from the status store: every process writes ``cube:<cube>:<host>:<pid>`` snapshots.
Waits poll a condition under a deadline; documents are published in small waves until both processes
have handled some, because the parent may drain a wave alone before the child has joined the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

import shared.bus.sqlite_consumer
from cubes import registry
from cubes.cli import main as cli_main
from cubes.launcher import run_up
from cubes.workers import (
    WorkerPool,
    settings_from_dict,
    settings_to_dict,
    worker_settings,
)
from demo import demo_settings
from shared.bus.sqlite import SqliteBus
from shared.config import Settings
from shared.errors import ConfigError
from shared.messages import Document, SourceKind, SourceRef
from shared.runtime import Output, Runner, ensure_topics, open_deps
from shared.runtime.deps import Deps
from shared.status import StatusWriter
from shared.stores import Stores, open_stores

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
SRC = SourceRef(kind=SourceKind.rss, id="feed-1")
#: how long a wait may take before it fails: generous, because starting `turbocubes up` and two worker
#: processes imports the whole package three times, which takes many seconds on a loaded CI machine
#: (only a failing run waits this long)
DEADLINE_S = 60.0
ME = f"{socket.gethostname()}:{os.getpid()}"
REPO = Path(__file__).resolve().parents[3]
#: partitions of documents.ready (schemas/topics.toml)
PARTITIONS = 12


def _settings(tmp_path: Path) -> Settings:
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0, "shutdown_timeout_s": 3.0, "status_interval_s": 0.2},
    )


def _doc(url: str) -> Document:
    return Document(url=url, host="news.example", source=SRC, title="A title", content_html="<p>body</p>",
                    content_hash="h1", version=1, seen_at=T0, parsed_at=T0)  # fmt: skip


async def _until(what: str, check: Callable[[], Awaitable[bool]], task: asyncio.Task[int] | None = None) -> None:
    """Poll ``check`` until true; fail after DEADLINE_S, or at once if ``task`` (run_up) ended."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DEADLINE_S
    while not await check():
        if task is not None and task.done():
            pytest.fail(f"run_up ended (rc={task.result()}) before {what}")
        if loop.time() > deadline:
            pytest.fail(f"timed out after {DEADLINE_S:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)  # a poll interval, not a synchronization


async def _processed(stores: Stores) -> dict[str, int]:
    """kvwriter messages handled so far, per process instance (``host:pid``)."""
    return {s.data["instance"]: int(s.data["processed"]) for s in await stores.status.get_status("cube:kvwriter:")}


class Feeder:
    """Publishes documents.ready in waves and checks which pages the kvwriters wrote."""

    def __init__(self, deps: Deps, stores: Stores) -> None:
        self.deps = deps
        self.stores = stores
        self.sent: list[str] = []
        self.missing: set[str] = set()

    async def wave(self, n: int = PARTITIONS * 2) -> None:
        urls = [f"https://news.example/{len(self.sent) + i}" for i in range(n)]
        await self.deps.publish([Output("documents.ready", _doc(u)) for u in urls])
        self.sent += urls
        self.missing.update(urls)

    async def all_written(self) -> bool:
        for url in list(self.missing):
            if await self.stores.pages.get(url) is not None:
                self.missing.discard(url)
        return not self.missing

    async def until_both_processed(self, task: asyncio.Task[int] | None = None) -> dict[str, int]:
        """Waves until two processes have each handled some; every page of every wave written."""

        async def both() -> bool:
            if not await self.all_written():
                return False
            counts = await _processed(self.stores)
            if len(counts) >= 2 and all(counts.values()):
                return True
            await self.wave()
            return False

        await _until("both processes to handle documents", both, task)
        return await _processed(self.stores)


@pytest.fixture
async def feeder(tmp_path: Path) -> AsyncIterator[Feeder]:
    settings = _settings(tmp_path)
    deps = await open_deps(settings)
    await ensure_topics(deps, ["kvwriter"])
    stores = await open_stores(settings.store.url)
    try:
        yield Feeder(deps, stores)
    finally:
        await stores.close()
        await deps.close()


def _pid(instance: str) -> int:
    return int(instance.rsplit(":", 1)[1])


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# --------------------------------------------------------------------------- the parts


def test_settings_reach_a_child_whole() -> None:
    """The child gets the parent's effective settings (here as --demo adjusts them) through JSON."""
    settings = demo_settings(Settings().replace(runtime={"metrics_port": 9300}, http={"allowlist": ["10.0.0.0/8"]}))
    wire = orjson.loads(orjson.dumps(settings_to_dict(settings)))
    assert settings_from_dict(wire) == settings
    assert worker_settings(settings, 2).runtime.metrics_port == 9302
    assert worker_settings(settings, 2).scheduler.websub_port == 0  # the parent binds the public one
    assert worker_settings(settings.replace(runtime={"metrics_port": 0}), 2).runtime.metrics_port == 0


def test_only_consumer_group_cubes_are_replicated() -> None:
    """Each cube's declaration says whether it is replicable; the workers take exactly those."""
    shared = registry.replicable()
    assert shared, "some cubes run in the children"
    assert shared == [n for n in registry.CUBE_NAMES if registry.declared(n).replicable]
    for name in shared:
        assert registry.declared(name).inputs, f"{name}: a replicable cube is a consumer group member"
    for singleton in ("api", "frontend", "indexer"):  # a port each; one queue drained by a timer
        assert singleton not in shared


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5"])
def test_a_bad_worker_count_is_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["up", "--workers", bad])
    assert exc.value.code == 2
    assert "--workers: expected a whole number of processes, at least 1" in capsys.readouterr().err


async def test_run_up_refuses_a_bad_worker_count(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--workers"):
        await run_up(_settings(tmp_path), only=["kvwriter"], workers=0)


async def test_workers_are_not_started_for_cubes_that_cannot_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stop = asyncio.Event()
    stop.set()  # start, then stop at once
    settings = _settings(tmp_path).replace(api={"port": 0})
    assert await asyncio.wait_for(run_up(settings, only=["api"], workers=2, stop_event=stop), 20) == 0
    out = capsys.readouterr().out
    assert "--workers 2 ignored: none of api can run in several processes" in out
    assert "worker process(es)" not in out


# --------------------------------------------------------------------------- up --workers 2


async def test_two_processes_share_the_partitions_and_stop_cleanly(tmp_path: Path, feeder: Feeder) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(_settings(tmp_path), only=["kvwriter"], workers=2, stop_event=stop))
    try:
        counts = await feeder.until_both_processed(task)
    finally:
        stop.set()
        rc = await asyncio.wait_for(task, 20)
    assert rc == 0
    # both drained and committed: nothing is left for the group to read again
    bus = feeder.deps.bus
    assert isinstance(bus, SqliteBus)
    assert await bus.committed_offsets("kvwriter", "documents.ready") == {
        p: end for p, end in (await bus.end_offsets("documents.ready")).items() if end
    }
    (child,) = [i for i in counts if i != ME]
    assert counts[ME] > 0
    assert counts[child] > 0
    # every document was written (the counts above come from periodic status snapshots, which lag;
    # and while a process joins, a few records may be handled by both, at-least-once, so neither
    # count is compared with the total; the split itself is asserted in
    # test_a_dead_workers_partitions_go_back_after_its_lease)
    assert await feeder.all_written()
    assert _gone(_pid(child)), "the worker process outlived `up`"


async def test_a_crashed_worker_stops_up_with_exit_code_1(
    tmp_path: Path, feeder: Feeder, capsys: pytest.CaptureFixture[str]
) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(run_up(_settings(tmp_path), only=["kvwriter"], workers=2, stop_event=stop))
    try:
        counts = await feeder.until_both_processed(task)
        (child,) = [i for i in counts if i != ME]
        os.kill(_pid(child), signal.SIGKILL)
        rc = await asyncio.wait_for(task, 20)
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 20)
    assert rc == 1
    assert f"worker 1 (pid {_pid(child)}) ended: killed by SIGKILL; stopping everything" in capsys.readouterr().out


async def test_a_dead_workers_partitions_go_back_after_its_lease(
    tmp_path: Path, feeder: Feeder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed without leaving its group: this process's kvwriter takes its partitions back once
    its lease ends, from the committed offsets, and every document published before and after is written."""
    monkeypatch.setattr(shared.bus.sqlite_consumer, "SESSION_TIMEOUT_S", 2.5)  # this process's view of a lease (10 s)
    settings = _settings(tmp_path)
    deps = await open_deps(settings)
    runner = Runner(await registry.cube_module("kvwriter").build(settings, deps), deps)
    pool = WorkerPool(settings, ["kvwriter"], 1)
    task = asyncio.create_task(runner.run())
    status = asyncio.create_task(StatusWriter(deps, [runner]).run())  # as `up` runs it beside its runners

    def held() -> set[int]:
        consumer = runner.consumer
        return {tp.partition for tp in consumer.assignment() if tp.topic == "documents.ready"} if consumer else set()

    try:
        await pool.start()
        await _until("the worker to take half of the partitions", lambda: _now(len(held()) == PARTITIONS // 2))
        (child,) = pool.pids
        await feeder.until_both_processed()
        assert pool.cpu_s() > 0  # read from /proc: what bench/e2e.py adds to its own CPU
        os.kill(child, signal.SIGKILL)
        # a wave over every partition, the dead worker's included: only a takeover writes all of it
        await feeder.wave(PARTITIONS * 10)
        keys = {zlib.crc32(u.encode()) % PARTITIONS for u in feeder.sent[-PARTITIONS * 10 :]}
        assert keys == set(range(PARTITIONS))
        await _until("every document written by the survivor", feeder.all_written)
        assert held() == set(range(PARTITIONS))
    finally:
        runner.stop()
        await asyncio.wait_for(task, 20)
        status.cancel()
        assert await pool.stop() == []  # the killed one is no stop problem: it was gone before
        await deps.close()


async def _now(value: bool) -> bool:
    return value


async def test_the_command_line_passes_its_config_file_to_the_workers(tmp_path: Path, feeder: Feeder) -> None:
    """``turbocubes --config FILE up --workers 2``: the worker reads the same bus and store; SIGTERM stops both."""
    s = _settings(tmp_path)
    config = tmp_path / "turbocubes.toml"
    config.write_text(
        f'[bus]\nurl = "{s.bus.url}"\n[store]\nurl = "{s.store.url}"\n[cdn]\nurl = "{s.cdn.url}"\n'
        f'[blobs]\nurl = "{s.blobs.url}"\n[runtime]\nmetrics_port = 0\nshutdown_timeout_s = 3.0\n'
        "status_interval_s = 0.2\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCUBES_")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cubes.cli", "--config", str(config), "up", "--only", "kvwriter", "--workers", "2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
        cwd=REPO,
    )  # fmt: skip
    try:
        counts = await feeder.until_both_processed()
        assert len(counts) == 2
        assert ME not in counts
        proc.send_signal(signal.SIGTERM)
        out, _ = await asyncio.wait_for(proc.communicate(), 20)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    text = out.decode()
    assert proc.returncode == 0, text
    assert "1 worker process(es)" in text
    assert "worker 1 (pid" in text
    assert "): stopped" in text
    assert all(_gone(_pid(i)) for i in counts)


@pytest.mark.parametrize(
    ("choice", "bus", "told"),
    [("auto", "kafka://127.0.0.1:9", "uvloop"), ("auto", "", "asyncio"), ("asyncio", "kafka://127.0.0.1:9", "asyncio")],
)
async def test_a_child_is_told_the_parents_event_loop(tmp_path: Path, choice: str, bus: str, told: str) -> None:
    # the child's loop runs before its settings arrive on stdin: the loop they choose goes on its command line
    said = tmp_path / "argv"
    script = f"import sys; open({str(said)!r}, 'w').write(' '.join(sys.argv[1:])); sys.stdin.readline()"
    settings = _settings(tmp_path).replace(runtime={"event_loop": choice})
    if bus:
        settings = settings.replace(bus={"url": bus})
    pool = WorkerPool(settings, ["kvwriter"], 1, command=(sys.executable, "-c", script), log_level="INFO")
    await pool.start()
    try:
        assert await asyncio.wait_for(pool.children[0].proc.wait(), DEADLINE_S) == 0
    finally:
        await pool.stop()
    assert said.read_text() == f"--log-level INFO --event-loop {told}"
