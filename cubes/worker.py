"""One child process of ``turbocubes up --workers N``: the cubes its parent names, on stdin (docs/architecture.md s.8).

The parent's side -- starting, watching and stopping children, and the
settings they get -- is ``cubes/workers.py``; this is the child's. It reads one
JSON line from stdin (its index, its cubes, the parent's effective settings),
runs ``cubes.launcher.run_cubes`` with them, and keeps reading stdin as a
lifeline: when the parent goes away, even by SIGKILL, the pipe closes and the
child stops gracefully. Here and not in ``workers.py`` because it imports the
launcher, which imports the pool: one direction, no cycle.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import orjson

from cubes.launcher import run_cubes
from cubes.workers import LOG_LEVELS, settings_from_dict
from shared.config.sections import EVENT_LOOPS
from shared.runtime.shutdown import run_main

__all__ = ["serve_worker", "worker_main"]


async def _read_spec_and_watch_stdin(stop: asyncio.Event) -> tuple[dict[str, Any], asyncio.Task[None]]:
    """Read the spec line from stdin, then keep reading until EOF (the parent gone) and set ``stop``."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    line = await reader.readline()
    if not line.endswith(b"\n"):
        raise SystemExit("turbocubes worker: no spec on stdin (started by `turbocubes up --workers N`, not by hand)")
    spec: dict[str, Any] = orjson.loads(line)

    async def lifeline() -> None:
        while await reader.read(65536):
            pass
        stop.set()

    return spec, asyncio.create_task(lifeline(), name="lifeline")


async def serve_worker(resolver: Any = None) -> int:
    """Run the cubes the parent named on stdin until SIGTERM / SIGINT or the parent's end."""
    stop = asyncio.Event()
    spec, lifeline = await _read_spec_and_watch_stdin(stop)
    try:
        return await run_cubes(
            settings_from_dict(spec["settings"]),
            list(spec["cubes"]),
            stop_event=stop,
            resolver=resolver,
            label=f"turbocubes worker {spec['index']} (pid {os.getpid()})",
            settle_heap=True,
        )
    finally:
        lifeline.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await lifeline


def worker_main(argv: Sequence[str] | None = None, *, resolver: Any = None) -> int:
    """A child's ``main``: ``python -m cubes.worker`` (``resolver``: an aiohttp resolver, for the bench)."""
    p = argparse.ArgumentParser(prog="turbocubes-worker", description="a child of `turbocubes up --workers N`")
    p.add_argument("--log-level", default="INFO", choices=LOG_LEVELS)
    # the loop the parent's settings choose (WorkerPool): the loop runs before they arrive on stdin
    p.add_argument("--event-loop", default="auto", choices=EVENT_LOOPS)
    args = p.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return run_main(serve_worker(resolver), event_loop=args.event_loop)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(worker_main())
