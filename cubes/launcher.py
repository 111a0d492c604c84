"""Start cubes in this process: ``turbocubes up`` (all) and ``turbocubes cube NAME`` (one).

Composition only: open the engines once, create the topics, build each cube
through the registry, run them side by side with a ``/healthz`` + ``/metrics``
server and a status writer (each runner's stats, lag and DLQ counts into the
status store every ``runtime.status_interval_s``; ``shared/status.py``), and
turn SIGTERM / SIGINT into a graceful stop of every runner
(in-flight work finishes and is committed).

A stop always ends (``shared/runtime/shutdown.py``): in-flight work
gets ``runtime.shutdown_timeout_s``, a runner ``WRAP_UP_S`` more to commit and
leave its group; then what is still running is cancelled, and what ignores
that for ``CANCEL_GRACE_S`` is left behind (named in the log); the status
writer, the ``/metrics`` server and each engine then close under deadlines of
their own. No wait at shutdown depends on a task honouring its cancellation.

``up --workers N`` also starts N-1 child processes running the replicable
cubes (``cubes/workers.py``); each child runs ``run_cubes`` as this process
does. They stop with this process, and one that ends on its own stops
everything with exit code 1, like a failed cube task here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from cubes import registry
from cubes.workers import WorkerCrashed, WorkerPool
from shared.config import Settings
from shared.errors import ConfigError
from shared.outages import OUTAGES
from shared.runtime import Runner, ensure_topics, heap, open_deps
from shared.runtime.deps import Deps
from shared.runtime.health import HealthServer
from shared.runtime.shutdown import WRAP_UP_S, bounded, settle
from shared.status import READ_TIMEOUT_S, StatusWriter

__all__ = ["run_cubes", "run_up"]

log = logging.getLogger("turbocubes.up")

#: something else to run beside the cubes until the stop event (the demo site)
SideTask = Callable[[Deps, asyncio.Event], Coroutine[Any, Any, None]]


async def run_up(
    settings: Settings,
    *,
    only: Sequence[str] = (),
    demo: bool = False,
    stop_event: asyncio.Event | None = None,
    workers: int = 1,
    log_level: str | None = None,
    settle_heap: bool = False,
) -> int:
    """Every cube (or ``only`` these) in this process, with ``workers - 1`` more processes for the
    replicable ones; ``settle_heap``: this process is ``up``'s own (``shared.runtime.heap.settle``)."""
    if workers < 1:
        raise ConfigError("--workers", workers, "a whole number of processes, at least 1")
    names = list(only) or list(registry.CUBE_NAMES)
    unknown = [n for n in names if n not in registry.CUBE_NAMES]
    if unknown:
        print(f"turbocubes: no such cube: {', '.join(unknown)}; the cubes: {', '.join(registry.CUBE_NAMES)}")
        return 2
    shared_cubes = registry.replicable(names)
    if workers > 1 and not shared_cubes:
        print(f"turbocubes: --workers {workers} ignored: none of {', '.join(names)} can run in several processes")
        workers = 1
    demo_site: Any = None
    if demo:
        from demo import DemoSite

        demo_site = DemoSite(settings)
        settings = await demo_site.start()
    try:
        # the pool gets the settings as adjusted for the demo (its crawler fetches the demo site)
        pool = WorkerPool(settings, shared_cubes, workers - 1, log_level=log_level) if workers > 1 else None
        side = demo_site.run if demo_site is not None else None
        return await run_cubes(settings, names, stop_event=stop_event, pool=pool, side=side, settle_heap=settle_heap)
    finally:
        if demo_site is not None:
            await demo_site.stop()


async def run_cubes(
    settings: Settings,
    names: Sequence[str],
    *,
    stop_event: asyncio.Event | None = None,
    resolver: Any = None,
    pool: WorkerPool | None = None,
    side: SideTask | None = None,
    label: str = "turbocubes",
    settle_heap: bool = False,
) -> int:
    """Run ``names`` in this process until SIGTERM / SIGINT / ``stop_event`` (or a cube task fails: 1).

    ``pool`` (worker processes) is started once the topics exist and stopped
    beside this process's runners; ``side`` runs until the stop (the demo site).
    ``settle_heap``: the process is this program's own (the CLI, a worker), so its garbage
    collector is set for a long run once the cubes are built (``shared.runtime.heap``).
    """
    deps = await open_deps(settings, resolver=resolver)
    runners: list[Runner] = []
    health: HealthServer | None = None
    status_task: asyncio.Task[None] | None = None
    writer: StatusWriter | None = None
    watch: asyncio.Task[None] | None = None
    status_stop = asyncio.Event()
    try:
        await ensure_topics(deps, names)
        for name in names:
            cube = await registry.build(name, settings, deps)
            runners.append(Runner(cube, deps))
        if settle_heap:
            heap.settle()

        def health_doc() -> dict[str, Any]:
            doc = {
                "ok": all(not r.breaker_open for r in runners),
                "bus": settings.bus.url,
                "cubes": {
                    r.cube.name: {
                        "processed": r.stats.processed,
                        "dead_lettered": r.stats.dead_lettered,
                        "retried": r.stats.retried,
                        "breaker_open": r.breaker_open,
                    }
                    for r in runners
                },
                # engines this process cannot reach now, each an engine.unavailable problem (shared/outages.py)
                "outages": [p.as_dict() for p in OUTAGES.problems()],
            }
            if pool is not None:
                doc["workers"] = pool.describe()
            return doc

        health = HealthServer(settings.runtime.metrics_host, settings.runtime.metrics_port, health_doc)
        port = await health.start()
        print(
            f"{label}: running {', '.join(names)} on {settings.bus.url}; "
            f"metrics at http://{settings.runtime.metrics_host}:{port}/metrics",
            flush=True,
        )

        if pool is not None:
            await pool.start()  # before the runners' tasks: a failure here leaves nothing running
            print(
                f"{label}: {pool.count} worker process(es) {', '.join(map(str, pool.pids))} running "
                f"{', '.join(pool.cubes)}",
                flush=True,
            )

        stop = stop_event or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        tasks: list[asyncio.Task[Any]] = [asyncio.create_task(r.run(), name=f"cube:{r.cube.name}") for r in runners]
        # the status page's and the overload gate's view of this process (shared/status.py); kept out of
        # `tasks`, whose first ending means "stop"
        writer = StatusWriter(deps, runners)
        status_task = asyncio.create_task(writer.run(status_stop), name="status")
        if side is not None:
            tasks.append(asyncio.create_task(side(deps, stop), name="side"))
        if pool is not None:
            watch = asyncio.create_task(pool.watch(), name="workers")
        stopper = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait(
            {*tasks, stopper, *([watch] if watch else [])}, return_when=asyncio.FIRST_COMPLETED
        )
        failed = [t for t in done if t is not stopper and not t.cancelled() and t.exception() is not None]
        misconfigured = False
        for t in failed:
            if isinstance(t.exception(), WorkerCrashed):
                print(f"{label}: {t.exception()}; stopping everything", flush=True)
            elif isinstance(t.exception(), ConfigError):
                # a setting to change (a busy port...): one line naming the key, not a traceback
                print(f"{label}: configuration error: {t.exception()}", file=sys.stderr, flush=True)
                misconfigured = True
            else:
                log.error("cube task %s failed", t.get_name(), exc_info=t.exception())
        print(f"{label}: stopping (finishing in-flight work)...", flush=True)
        for r in runners:
            r.stop()
        problems: list[str] = []
        stopping = asyncio.create_task(pool.stop()) if pool is not None else None
        # the children drain and commit at the same time as this process's runners
        await settle(tasks, settings.runtime.shutdown_timeout_s + WRAP_UP_S)
        if stopping is not None:
            problems = await stopping  # bounded: children still there after their grace are killed
            for problem in problems:
                print(f"{label}: {problem}", flush=True)
        stopper.cancel()
        print(f"{label}: stopped", flush=True)
        return 2 if misconfigured else 1 if failed or problems else 0
    finally:
        if pool is not None and any(c.proc.returncode is None for c in pool.children):
            await pool.stop()  # an error before the normal stop: never leave children behind
        await settle([watch] if watch is not None else [], 0)
        # the status writer ends its round in progress (cancelling a broker call half-way leaks its
        # connection), within a deadline: then it is cancelled, and never waited on for long (it once
        # held a loaded machine's shutdown for over a minute, waiting on PostgreSQL)
        status_stop.set()
        await settle([status_task] if status_task is not None else [], 2 * READ_TIMEOUT_S)
        if writer is not None:
            # stopped, not crashed: the status page drops this process at once
            await bounded("status: the stopped snapshot", writer.close, READ_TIMEOUT_S)
        if health is not None:
            await bounded("the /metrics server", health.stop)
        await deps.close()
