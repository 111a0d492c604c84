"""Start cubes in this process: ``turbocubes up`` (all) and ``turbocubes cube NAME`` (one).

Composition only: open the engines once, create the topics, build each cube
through the registry, run them side by side with a ``/healthz`` + ``/metrics``
server and a status writer (each runner's stats, lag and DLQ counts into the
status store every ``runtime.status_interval_s``; ``shared/status.py``), and
turn SIGTERM / SIGINT into a graceful stop of every runner
(in-flight work finishes and is committed; the process exits within
``runtime.shutdown_timeout_s``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Sequence
from typing import Any

from cubes import registry
from shared.config import Settings
from shared.runtime import Runner, ensure_topics, open_deps
from shared.runtime.health import HealthServer
from shared.status import StatusWriter

__all__ = ["run_up"]

log = logging.getLogger("turbocubes.up")


async def run_up(settings: Settings, *, only: Sequence[str] = (), demo: bool = False,
                 stop_event: asyncio.Event | None = None) -> int:
    names = list(only) or registry.available_cubes()
    unknown = [n for n in names if n not in registry.available_cubes()]
    if unknown:
        print(f"turbocubes: no such cube in this checkout: {', '.join(unknown)}; "
              f"available: {', '.join(registry.available_cubes())}")
        return 2
    demo_site: Any = None
    if demo:
        from cubes.demo import DemoSite

        demo_site = DemoSite(settings)
        settings = await demo_site.start()
    try:
        deps = await open_deps(settings)
    except BaseException:
        if demo_site is not None:
            await demo_site.stop()
        raise
    runners: list[Runner] = []
    health: HealthServer | None = None
    status_task: asyncio.Task[None] | None = None
    try:
        await ensure_topics(deps, names)
        for name in names:
            cube = await registry.cube_module(name).build(settings, deps)
            runners.append(Runner(cube, deps))

        def health_doc() -> dict[str, Any]:
            return {
                "ok": all(not r.breaker_open for r in runners),
                "bus": settings.bus.url,
                "cubes": {
                    r.cube.name: {"processed": r.stats.processed, "dead_lettered": r.stats.dead_lettered,
                                  "retried": r.stats.retried, "breaker_open": r.breaker_open}
                    for r in runners
                },
            }

        health = HealthServer(settings.runtime.metrics_host, settings.runtime.metrics_port, health_doc)
        port = await health.start()
        print(f"turbocubes: running {', '.join(names)} on {settings.bus.url}; "
              f"metrics at http://{settings.runtime.metrics_host}:{port}/metrics", flush=True)

        stop = stop_event or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        tasks = [asyncio.create_task(r.run(), name=f"cube:{r.cube.name}") for r in runners]
        # the status page's and the overload gate's view of this process (shared/status.py); kept out of
        # `tasks`, whose first ending means "stop"
        status_task = asyncio.create_task(StatusWriter(deps, runners).run(), name="status")
        if demo_site is not None:
            tasks.append(asyncio.create_task(demo_site.run(deps, stop), name="demo"))
        stopper = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({*tasks, stopper}, return_when=asyncio.FIRST_COMPLETED)
        failed = [t for t in done if t is not stopper and not t.cancelled() and t.exception() is not None]
        for t in failed:
            log.error("cube task %s failed", t.get_name(), exc_info=t.exception())
        print("turbocubes: stopping (finishing in-flight work)...", flush=True)
        for r in runners:
            r.stop()
        _, pending = await asyncio.wait(tasks, timeout=settings.runtime.shutdown_timeout_s)
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        stopper.cancel()
        print("turbocubes: stopped", flush=True)
        return 1 if failed else 0
    finally:
        if status_task is not None:
            status_task.cancel()
            await asyncio.gather(status_task, return_exceptions=True)
        if health is not None:
            await health.stop()
        await deps.close()
        if demo_site is not None:
            await demo_site.stop()
