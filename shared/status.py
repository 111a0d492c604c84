"""State that cubes publish and the status page and the overload gate read (docs/architecture.md sections 4 and 6).

Each process writes small JSON snapshots into the stores' ``StatusStore``
every ``runtime.status_interval_s`` seconds; the store is the one place every
process reaches in every deployment (one ``turbocubes up`` process, or one
process per cube on a cluster), so the frontend and the overload gate need no
connection to the processes they describe. Names:

``cube:<cube>:<instance>``
    runner stats, consumer lag per topic and the DLQ depth of the cube's
    inputs (``StatusWriter``: one per process, run by ``cubes/launcher.py``);
``lanes:<instance>``
    the crawler's per-host lanes (``cubes/crawler/report.py``);
``overload:<cube>:<instance>``
    an overload watcher's state (``shared/overload.py``).

``<instance>`` is ``<hostname>:<pid>``. A snapshot not rewritten for
``STALE_INTERVALS`` intervals belongs to a process that crashed or hangs: it
is shown as such and never counts towards the pipeline's lag. A process that
stops cleanly says so: ``StatusWriter.close`` writes a last snapshot marked
``"state": "stopped"`` (``is_stopped``), which readers leave out at once --
so a clean restart leaves no stale rows behind, and a stale row always means
a process that did not stop cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from shared import contracts
from shared.clock import Clock, at, sleep_unless
from shared.outages import OUTAGES
from shared.stores import StatusSnapshot

if TYPE_CHECKING:
    from shared.runtime.deps import Deps
    from shared.runtime.runner import Runner

__all__ = [
    "CUBE_PREFIX",
    "LANES_PREFIX",
    "OVERLOAD_PREFIX",
    "PRUNE_AFTER_S",
    "STALE_INTERVALS",
    "STOPPED",
    "StatusWriter",
    "instance_id",
    "is_fresh",
    "is_stopped",
    "percentile",
    "pipeline_lag",
    "runner_snapshot",
    "stamp",
]

log = logging.getLogger(__name__)

CUBE_PREFIX = "cube:"
LANES_PREFIX = "lanes:"
OVERLOAD_PREFIX = "overload:"
#: a snapshot older than this many publishing intervals is stale: one missed write (a slow store, a
#: long GC pause) is normal, three in a row mean the process is gone or stuck
STALE_INTERVALS = 3
#: snapshots of processes silent this long are deleted: long enough for an operator to notice a
#: process that died (the status page lists it as stopped), short enough that restarts do not pile up
PRUNE_AFTER_S = 3600.0
#: a lag or DLQ read that takes longer than this is skipped for this round (a broker in trouble)
READ_TIMEOUT_S = 5.0
#: the ``state`` of a process's last snapshot when it stopped cleanly
STOPPED = "stopped"


def instance_id() -> str:
    """This process's name in snapshot names: unique per process on a cluster."""
    return f"{socket.gethostname()}:{os.getpid()}"


def stamp(clock: Clock) -> datetime:
    """The clock's wall time as the aware datetime the stores take."""
    return clock.now()


def is_fresh(snap: StatusSnapshot, now: float, interval_s: float) -> bool:
    """True while the snapshot's process is still writing (see ``STALE_INTERVALS``)."""
    return now - snap.updated_at.timestamp() <= STALE_INTERVALS * interval_s


def is_stopped(snap: StatusSnapshot) -> bool:
    """True for the last snapshot of a process that stopped cleanly (``StatusWriter.close``)."""
    return snap.data.get("state") == STOPPED


def pipeline_lag(
    snaps: Iterable[StatusSnapshot], groups: Sequence[str], now: float, interval_s: float
) -> tuple[int | None, dict[str, int]]:
    """Lag summed over the fresh ``cube:`` snapshots of ``groups``, and per group.

    ``None`` when no fresh snapshot of any of those groups exists: nothing is measured,
    which is not the same as no lag (the overload gate then lets work through).
    """
    wanted = set(groups)
    by_group: dict[str, int] = {}
    for snap in snaps:
        if not snap.name.startswith(CUBE_PREFIX) or not is_fresh(snap, now, interval_s) or is_stopped(snap):
            continue
        group = str(snap.data.get("group") or snap.data.get("cube") or "")
        if group in wanted:
            by_group[group] = by_group.get(group, 0) + int(snap.data.get("lag") or 0)
    if not by_group:
        return None, {}
    return sum(by_group.values()), by_group


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values`` by the nearest-rank method; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


async def runner_snapshot(runner: Runner, dlq_depth: dict[str, int]) -> dict[str, Any]:
    """What the status page shows of one runner; ``dlq_depth`` maps each DLQ topic to its records
    (a topic's DLQ is shared by every group that consumes the topic, so it is reported as a topic's)."""
    lag_by_topic: dict[str, int] = {}
    with contextlib.suppress(Exception):  # a broker in trouble: no lag this round, the rest still goes
        # through the runner, which lets the reading end before its consumer stops (Runner.lag)
        for tp, n in (await asyncio.wait_for(runner.lag(), READ_TIMEOUT_S)).items():
            lag_by_topic[tp.topic] = lag_by_topic.get(tp.topic, 0) + int(n)
    s = runner.stats
    inputs = list(runner.cube.inputs)
    return {
        "cube": runner.cube.name,
        "group": runner.group,
        "inputs": inputs,
        "processed": s.processed,
        "failed": s.failed,
        "retried": s.retried,
        "dead_lettered": s.dead_lettered,
        "published": s.published,
        "breaker_open": runner.breaker_open,
        "lag": sum(lag_by_topic.values()),
        "lag_by_topic": lag_by_topic,
        "dlq": {d: dlq_depth[d] for d in map(contracts.dlq_topic, inputs) if d in dlq_depth},
        # the process's engines that are away now (engine.unavailable problems: shared/outages.py)
        "outages": [p.as_dict() for p in OUTAGES.problems()],
    }


class StatusWriter:
    """Publishes a ``cube:`` snapshot of every runner of this process, every ``status_interval_s``.

    The launcher runs one per process beside its runners. A failed round (the
    store or the broker unreachable) is logged and the next round tries again:
    the status page then shows the snapshot as stale, which is the truth.
    """

    def __init__(self, deps: Deps, runners: Sequence[Runner], *, instance: str | None = None) -> None:
        self.deps = deps
        self.runners = list(runners)
        self.instance = instance or instance_id()
        self.interval_s = deps.settings.runtime.status_interval_s
        self._next_prune = 0.0

    async def _dlq_depth(self) -> dict[str, int]:
        depth: dict[str, int] = {}
        for topic in sorted({contracts.dlq_topic(t) for r in self.runners for t in r.cube.inputs}):
            with contextlib.suppress(Exception):  # a DLQ topic not created yet counts as empty
                ends = await asyncio.wait_for(self.deps.bus.end_offsets(topic), READ_TIMEOUT_S)
                depth[topic] = sum(ends.values())
        return depth

    async def write_once(self) -> int:
        """Write one snapshot per runner (and prune long-silent ones); how many were written."""
        store = (await self.deps.stores()).status
        clock = self.deps.clock
        dlq = await self._dlq_depth()
        written = 0
        for runner in self.runners:
            data = await runner_snapshot(runner, dlq)
            data["instance"] = self.instance
            await store.put_status(f"{CUBE_PREFIX}{runner.cube.name}:{self.instance}", data, now=stamp(clock))
            written += 1
        now = clock.time()
        if now >= self._next_prune:
            self._next_prune = now + PRUNE_AFTER_S
            await store.prune_status(at(now - PRUNE_AFTER_S))
        return written

    async def close(self) -> None:
        """Say that this process stopped cleanly: one last snapshot per runner, marked ``STOPPED``.

        Best effort: a store that is gone by now leaves the snapshots to go stale, which then
        reads as "crashed" -- wrong only for a process whose store died with it.
        """
        try:
            store = (await self.deps.stores()).status
            for runner in self.runners:
                data = {"cube": runner.cube.name, "group": runner.group, "instance": self.instance, "state": STOPPED}
                await store.put_status(
                    f"{CUBE_PREFIX}{runner.cube.name}:{self.instance}", data, now=stamp(self.deps.clock)
                )
        except Exception as exc:
            log.warning("the stopped state was not written (%s: %s)", type(exc).__name__, exc)

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Write one round per interval until ``stop`` (or cancelled).

        A stop ends the pause between rounds, never a round: cancelling one half-way through a
        broker or store call can leave a connection open (aiokafka, asyncpg) or hold the shutdown.
        """
        stop = stop or asyncio.Event()
        while not stop.is_set():
            try:
                await self.write_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not OUTAGES.met(exc, "status snapshot"):  # an outage is told once, not every interval
                    log.warning(
                        "status snapshot not written (%s: %s); next try in %.0fs",
                        type(exc).__name__,
                        exc,
                        self.interval_s,
                    )
            else:
                OUTAGES.up("store")
            await sleep_unless(self.deps.clock, self.interval_s, stop)
