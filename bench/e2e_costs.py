"""Where the end-to-end benchmark's time goes: CPU by process kind and by cube, and
round trips to the engines per document.

* ``EngineCpu`` -- CPU seconds of the engines' processes, read from ``/proc``: the Kafka JVM
  (``kafka.Kafka`` on its command line), every PostgreSQL process (the postmaster, its backends,
  and through the postmaster's ``cutime`` the backends already gone) and SeaweedFS (``weed``).
  They share the machine with our processes, so "CPU per document" is printed for ours and theirs
  apart. On embedded engines there are none: SQLite and the file CDN run inside our processes.
  Only the engines ``ops/`` started under ``$TURBOCUBES_VAR`` count when it is set.
* ``Idle`` -- what the pipeline costs with nothing to do (``Costs.measure_idle``): taken out of each
  pass's per-document figure, beside the raw one.
* ``Counters`` -- totals of Prometheus counters over our processes: this one's registry, and each
  worker process's ``/metrics`` (served on ``runtime.metrics_port + index``, see
  ``cubes/workers.py``). Read: ``turbocubes_s3_requests_total`` (``shared/blobs/s3_objects.py``) and
  ``turbocubes_postgres_round_trips_total`` (the PostgreSQL store engine's client-side count of
  round trips to the server), each when present.
* ``CubeCpu`` -- CPU of each cube's handler in this process: the handler's coroutine is stepped by a
  wrapper that reads the thread's CPU clock around every step, so only the handler's own work counts
  (its store calls' synchronous part included), not the other coroutines that ran while it awaited;
  one call in ``SAMPLE_EVERY`` is measured (the clock reads are system calls), scaled up.
  Whatever this process spent outside handlers is the runtime's: polling, validation, publishing,
  commits, the engines' client libraries.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Awaitable, Callable, Generator, Iterable
from pathlib import Path
from typing import Any

import aiohttp
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["COUNTERS", "Costs", "Counters", "CubeCpu", "EngineCpu", "Idle"]

#: counter families the bench reads (``_total`` is the sample's suffix, not the family's name)
COUNTERS = ("turbocubes_postgres_round_trips", "turbocubes_s3_requests", "turbocubes_bench_kafka_requests")
_CLK = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[str, list[str]] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    comm = raw[raw.index(b"(") + 1 : raw.rindex(b")")].decode(errors="replace")
    return comm, raw[raw.rindex(b")") + 2 :].decode().split()


def _engine_of(pid: str, comm: str) -> str | None:
    if comm == "postgres":
        return "postgres"
    if comm == "weed":
        return "weed"
    if comm == "java":
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return None
        return "kafka" if b"kafka.Kafka" in cmdline else None
    return None


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


class EngineCpu:
    """CPU seconds of the engine processes on this machine, by engine (``kafka``, ``postgres``, ``weed``).

    Kept per process (pid and start time), so a process that restarts during a pass counts from its
    start instead of making the total go backwards; a PostgreSQL backend that ended is in its
    postmaster's ``cutime`` then, and its share from before the pass is taken out again. The
    engines are shared: whatever else uses them at the time (other tests, other benches) counts too.

    ``owner`` (``$TURBOCUBES_VAR``, where ``ops/`` keeps the engines it started) keeps only the engines
    started there: their command lines name it (Kafka's config, PostgreSQL's data directory,
    SeaweedFS's) and a PostgreSQL backend is a child of such a postmaster. Without it, every engine
    on the machine counts: on a machine shared with other engineers' engines that was most of the
    figure (16 s of "engines' CPU" in a run of the embedded engines, which have none).
    """

    def __init__(self, owner: str | None = None) -> None:
        self.owner = owner.encode() if owner else None

    def snapshot(self) -> dict[tuple[str, str, str], tuple[float, str]]:
        """(engine, pid, start time) -> (CPU seconds, parent pid)."""
        found: dict[str, tuple[str, list[str]]] = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or (st := _stat(pid)) is None:
                continue
            comm, fields = st
            engine = _engine_of(pid, comm)
            if engine is not None:
                found[pid] = (engine, fields)
        if self.owner is not None:
            owner = self.owner
            roots = {pid for pid in found if owner in _cmdline(pid)}
            found = {pid: v for pid, v in found.items() if pid in roots or v[1][1] in roots}
        out: dict[tuple[str, str, str], tuple[float, str]] = {}
        for pid, (engine, fields) in found.items():
            # utime, stime, and the reaped children's cutime, cstime (fields 14-17 of proc(5)); ppid is
            # field 4, the start time field 22
            ticks = sum(int(f) for f in fields[11:15])
            out[(engine, pid, fields[19])] = (ticks / _CLK, fields[1])
        return out

    @staticmethod
    def delta(
        before: dict[tuple[str, str, str], tuple[float, str]], after: dict[tuple[str, str, str], tuple[float, str]]
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        for key, (cpu, _ppid) in after.items():
            out[key[0]] = out.get(key[0], 0.0) + cpu - before.get(key, (0.0, ""))[0]
        watched = {pid for _engine, pid, _start in after}
        for key, (cpu, ppid) in before.items():
            if key not in after and ppid in watched:  # reaped into a parent we read: its past is in there
                out[key[0]] = out.get(key[0], 0.0) - cpu
        return {k: max(v, 0.0) for k, v in out.items()}


#: a family whose totals are also kept per value of this label (``family:value``)
SPLIT_BY = {"turbocubes_postgres_round_trips": "store", "turbocubes_bench_kafka_requests": "api"}


def _add(totals: dict[str, float], family: Any) -> None:
    """Add ``family``'s ``_total`` samples into ``totals`` (and per label value, for ``SPLIT_BY``)."""
    label = SPLIT_BY.get(family.name)
    for sample in family.samples:
        if not sample.name.endswith("_total"):
            continue
        totals[family.name] = totals.get(family.name, 0.0) + sample.value
        if label is not None and label in sample.labels:
            key = f"{family.name}:{sample.labels[label]}"
            totals[key] = totals.get(key, 0.0) + sample.value


def _local_totals() -> dict[str, float]:
    totals: dict[str, float] = {}
    for family in REGISTRY.collect():
        if family.name in COUNTERS:
            _add(totals, family)
    return totals


class Counters:
    """Totals of ``COUNTERS`` over this process and the worker processes serving ``/metrics`` on ``ports``."""

    def __init__(self, ports: Iterable[int] = ()) -> None:
        self.ports = list(ports)

    async def read(self) -> dict[str, float]:
        totals = _local_totals()
        if not self.ports:
            return totals
        timeout = aiohttp.ClientTimeout(total=5)
        async with aiohttp.ClientSession(timeout=timeout) as http:
            for port in self.ports:
                try:
                    async with http.get(f"http://127.0.0.1:{port}/metrics") as resp:
                        text = await resp.text()
                except (aiohttp.ClientError, TimeoutError):
                    continue  # a worker that is gone or busy: its share is missing, not fatal
                for family in text_string_to_metric_families(text):
                    if family.name in COUNTERS:
                        _add(totals, family)
        return totals


class _Stepped:
    """Awaits ``coro`` step by step, adding ``weight`` x the thread CPU time of each step to ``into[name]``."""

    __slots__ = ("coro", "into", "name", "weight")

    def __init__(self, coro: Awaitable[Any], into: dict[str, float], name: str, weight: float = 1.0) -> None:
        self.coro, self.into, self.name, self.weight = coro, into, name, weight

    def __await__(self) -> Generator[Any, Any, Any]:
        gen = self.coro.__await__()
        clock = time.thread_time
        weight = self.weight
        send: Any = None
        thrown: BaseException | None = None
        while True:
            t = clock()
            try:
                step = gen.send(send) if thrown is None else gen.throw(thrown)
            except StopIteration as done:
                self.into[self.name] = self.into.get(self.name, 0.0) + (clock() - t) * weight
                return done.value
            except BaseException:
                self.into[self.name] = self.into.get(self.name, 0.0) + (clock() - t) * weight
                raise
            self.into[self.name] = self.into.get(self.name, 0.0) + (clock() - t) * weight
            try:
                send, thrown = (yield step), None
            except BaseException as exc:  # cancellation and the like go into the handler, as awaited
                send, thrown = None, exc


#: handler calls measured: one in this many, counted this many times. Reading the thread's CPU clock
#: is a system call, two per step of a handler's coroutine: measuring every call cost ~8 % of the bench
#: process's CPU on the real engines (py-spy), which the figures it splits then carried.
SAMPLE_EVERY = 8


class CubeCpu:
    """Handler CPU by cube, in this process (an estimate: one handler call in ``SAMPLE_EVERY`` is measured)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(
        self, name: str, handler: Callable[..., Awaitable[Any]], every: int = SAMPLE_EVERY
    ) -> Callable[..., Awaitable[Any]]:
        seconds = self.seconds
        calls = 0

        async def stepped(*args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls % every:
                return await handler(*args, **kwargs)
            return await _Stepped(handler(*args, **kwargs), seconds, name, every)

        return stepped

    def instrument(self, cube: Any) -> Any:
        """``cube`` (a ``shared.runtime.Cube``) with its handler and timers wrapped (every timer round measured)."""
        handler = cube.handler and self.wrap(cube.name, cube.handler)
        timers = tuple(dataclasses.replace(t, fn=self.wrap(cube.name, t.fn, every=1)) for t in cube.timers)
        return dataclasses.replace(cube, handler=handler, timers=timers)

    def take(self) -> dict[str, float]:
        """The seconds since the last ``take`` (the wrappers keep adding into the same dict)."""
        out = dict(self.seconds)
        self.seconds.clear()
        return out


@dataclasses.dataclass(frozen=True)
class Idle:
    """What the pipeline costs with nothing to do: CPU of our processes and of the engines, and Kafka
    requests, over ``seconds`` with every cube started and no work (``measure_idle``)."""

    seconds: float
    ours_s: float
    engines_s: dict[str, float]
    kafka_requests: float

    def ours_per_s(self) -> float:
        return self.ours_s / self.seconds

    def engines_per_s(self) -> float:
        return sum(self.engines_s.values()) / self.seconds

    def report(self, target_share: float | None = None) -> list[str]:
        parts = ", ".join(f"{k} {v / self.seconds * 1000:.1f}" for k, v in sorted(self.engines_s.items()))
        line = (
            f"   IDLE ({self.seconds:.0f} s, every cube started, nothing to do): ours {self.ours_per_s() * 1000:.1f} ms"
            f" CPU a second ({self.ours_per_s():.1%} of a core)"
        )
        if self.engines_s:
            line += f", engines' {self.engines_per_s() * 1000:.1f} ms a second ({parts})"
        if self.kafka_requests:
            line += f"; {self.kafka_requests / self.seconds:.1f} Kafka requests a second"
        return [line]


class Costs:
    """One pass's costs, from ``begin`` to ``end``: engines' CPU, round trips, handler CPU by cube."""

    def __init__(self, counters: Counters, cubes: CubeCpu, owner: str | None = None, *, engines: bool = True) -> None:
        self.counters, self.cubes = counters, cubes
        #: the engines' processes are watched only where the pipeline uses them (not embedded)
        self.engines = EngineCpu(owner) if engines else None
        #: the engines' CPU seconds over the last pass (``end``)
        self.last_engines_s = 0.0
        #: the idle cost measured before the passes, taken out of each pass's figures (``end``)
        self.idle: Idle | None = None
        self._engines0: dict[tuple[str, str, str], tuple[float, str]] = {}
        self._counters0: dict[str, float] = {}

    async def measure_idle(self, seconds: float, ours_cpu: Callable[[], float]) -> Idle:
        """``seconds`` of nothing to do: what our processes (``ours_cpu``) and the engines spend meanwhile."""
        engines0, counters0, cpu0 = self._snapshot(), await self.counters.read(), ours_cpu()
        t0 = time.monotonic()
        await asyncio.sleep(seconds)  # the span measured, not a synchronization
        ours, span = ours_cpu() - cpu0, time.monotonic() - t0
        engines = EngineCpu.delta(engines0, self._snapshot())
        kafka = (await self.counters.read()).get("turbocubes_bench_kafka_requests", 0.0) - counters0.get(
            "turbocubes_bench_kafka_requests", 0.0
        )
        self.idle = Idle(span, ours, engines, kafka)
        return self.idle

    def _snapshot(self) -> dict[tuple[str, str, str], tuple[float, str]]:
        return self.engines.snapshot() if self.engines is not None else {}

    async def begin(self) -> None:
        self._engines0 = self._snapshot()
        self._counters0 = await self.counters.read()
        self.cubes.take()

    async def end(
        self, *, documents: int, new_images: int, ours_cpu_s: float, bench_cpu_s: float, wall_s: float = 0.0
    ) -> list[str]:
        """Report lines: ``ours_cpu_s`` is every process of ours, ``bench_cpu_s`` this one's, over ``wall_s``."""
        engines = EngineCpu.delta(self._engines0, self._snapshot())
        counters = await self.counters.read()
        delta = {k: v - self._counters0.get(k, 0.0) for k, v in counters.items()}
        per_doc = max(documents, 1)
        lines = []
        theirs = self.last_engines_s = sum(engines.values())
        if engines:
            parts = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(engines.items()))
            lines.append(
                f"   engines' processes: {theirs:.1f} CPU s ({parts}) = {theirs / per_doc * 1000:.2f} ms per document;"
                f" ours {ours_cpu_s / per_doc * 1000:.2f} ms per document (the engines' figure counts whatever else"
                f" used them meanwhile)"
            )
        if self.idle is not None and wall_s > 0:
            ours_net = max(0.0, ours_cpu_s - self.idle.ours_per_s() * wall_s)
            theirs_net = max(0.0, theirs - self.idle.engines_per_s() * wall_s)
            both = f"; together {(ours_net + theirs_net) / per_doc * 1000:.2f} ms" if engines else ""
            lines.append(
                f"   with the idle cost taken out ({wall_s:.1f} s x the IDLE rates): ours"
                f" {ours_net / per_doc * 1000:.2f} ms per document"
                + (f", engines' {theirs_net / per_doc * 1000:.2f} ms" if engines else "")
                + both
            )
        rt = delta.get("turbocubes_postgres_round_trips")
        if rt is not None:
            prefix = "turbocubes_postgres_round_trips:"
            split = sorted(
                ((k[len(prefix) :], v) for k, v in delta.items() if k.startswith(prefix) and v), key=lambda kv: -kv[1]
            )
            by_store = ", ".join(f"{store} {n / per_doc:.2f}" for store, n in split)
            lines.append(
                f"   PostgreSQL round trips: {rt:,.0f} = {rt / per_doc:.2f} per document"
                + (f" (by store: {by_store})" if by_store else "")
            )
        kafka = delta.get("turbocubes_bench_kafka_requests")
        if kafka:
            prefix = "turbocubes_bench_kafka_requests:"
            split = sorted(
                ((k[len(prefix) :], v) for k, v in delta.items() if k.startswith(prefix) and v), key=lambda kv: -kv[1]
            )
            by_api = ", ".join(f"{api} {n / per_doc:.2f}" for api, n in split)
            lines.append(f"   Kafka requests: {kafka:,.0f} = {kafka / per_doc:.2f} per document (by API: {by_api})")
        s3 = delta.get("turbocubes_s3_requests")
        if s3 is not None and new_images:
            lines.append(f"   S3 requests: {s3:,.0f} = {s3 / new_images:.2f} per new image")
        by_cube = self.cubes.take()
        if by_cube and bench_cpu_s > 0:
            handlers = sum(by_cube.values())
            shares = [f"{name} {sec / bench_cpu_s:.0%}" for name, sec in sorted(by_cube.items(), key=lambda kv: -kv[1])]
            rest = max(bench_cpu_s - handlers, 0.0)
            lines.append(
                f"   bench process CPU by cube handler: {', '.join(shares)}; runtime, bus and clients"
                f" {rest / bench_cpu_s:.0%} (of {bench_cpu_s:.1f} s)"
            )
        return lines
