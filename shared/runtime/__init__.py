"""The cube runtime (docs/architecture.md section 4): declare a cube, open its engines, run it.

deps = await open_deps(settings)
cube = await build(settings, deps)
stats = await run_cube(cube, deps, max_messages=10, idle_timeout=2.0)   # bounded, for tests
await deps.close()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared import contracts
from shared.bus import open_configured
from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.runtime.cube import Context, Cube, Handler, Output, Service, Timer
from shared.runtime.deps import Deps
from shared.runtime.headers import HEADERS
from shared.runtime.publish import Encoder, publish_outputs
from shared.runtime.runner import Runner
from shared.runtime.stats import RunStats

__all__ = [
    "HEADERS",
    "Context",
    "Cube",
    "Deps",
    "Handler",
    "Output",
    "RunStats",
    "Runner",
    "Service",
    "Timer",
    "ensure_topics",
    "open_deps",
    "run_cube",
]


async def ensure_topics(deps: Deps, cube_names: Sequence[str] = ()) -> list[str]:
    """Create the catalog's topics that do not exist yet (idempotent; ``contracts.topic_specs``)."""
    return await deps.bus.create_topics(contracts.topic_specs(cube_names))


async def open_deps(settings: Settings, *, clock: Clock | None = None, resolver: Any = None) -> Deps:
    """Open (start) the bus; stores and blob stores open lazily through the returned ``Deps``."""
    bus = open_configured(settings.bus)
    await bus.start()
    # any catalog topic: the HTTP cubes publish what their requests carry (counted as cube "publish")
    encoder = Encoder("publish", None)

    async def publish(outputs: Sequence[Output]) -> None:
        await publish_outputs(bus.producer(), encoder, outputs)

    deps = Deps(settings=settings, bus=bus, publish=publish, clock=clock or SystemClock(), resolver=resolver)
    deps._closers.append(bus.close)
    return deps


async def run_cube(
    cube: Cube,
    deps: Deps,
    *,
    group: str | None = None,
    max_messages: int | None = None,
    idle_timeout: float | None = None,
) -> RunStats:
    """Run ``cube`` until stopped, or (for tests) until ``max_messages`` or ``idle_timeout`` seconds idle."""
    return await Runner(cube, deps, group=group, max_messages=max_messages, idle_timeout=idle_timeout).run()
