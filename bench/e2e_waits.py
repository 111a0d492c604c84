"""Where the end-to-end benchmark *waits*: the bus hops and the CPU run queue.

``bench/e2e_costs.py`` says where the CPU goes; on real engines the pipeline mostly waits, so these
say on what:

* ``HopProbe`` (``--probe``) -- per input topic, how long a record took from its producer to the
  runner's poll: now minus the record's timestamp (set by the producer when the record was handed
  to it: the linger, the produce round trip, the broker, the consumer's fetch and the wait for room
  in the runner, all in one). Only the consumers of this process are probed.
* ``count_kafka_requests`` -- every request our Kafka clients send, by API (Produce, Fetch,
  OffsetCommit, Heartbeat, ...), as the counter ``turbocubes_bench_kafka_requests_total`` that
  ``bench/e2e_costs.py`` sums over our processes: the broker's CPU goes mostly per request, so this
  is its steady, load-independent measure. A patch of aiokafka's connection, made by this bench
  only (in its process and in its worker processes), never by the product.
* ``RunQueue`` -- how long the threads of a set of processes were *runnable but waiting for a CPU*
  (``/proc/PID/task/TID/schedstat``, second field). On a machine shared with other people's tests
  this is the time the pipeline lost to them: a hop that waits for a CPU twice (the sender's
  wake-up and the receiver's) is slow however little work it is.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["HopProbe", "RunQueue", "count_kafka_requests"]


def _pct(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))] if s else float("nan")


class HopProbe:
    """Producer-to-poll time of every record the probed consumers return, by topic."""

    def __init__(self) -> None:
        self.hops: dict[str, list[float]] = {}

    def wrap_bus(self, bus: Any) -> None:
        """Probe every consumer ``bus`` opens from now on (the runners open theirs when they start)."""
        open_consumer = bus.consumer

        async def consumer(*args: Any, **kwargs: Any) -> Any:
            made = await open_consumer(*args, **kwargs)
            getmany = made.getmany
            hops = self.hops

            async def probed(timeout_s: float, max_records: int) -> Any:
                got = await getmany(timeout_s, max_records)
                now_ms = time.time() * 1000
                for r in got:
                    ts = getattr(r, "timestamp", None) or getattr(r, "timestamp_ms", 0)
                    if ts:
                        hops.setdefault(r.topic, []).append((now_ms - ts) / 1000)
                return got

            made.getmany = probed
            return made

        bus.consumer = consumer

    def report(self) -> list[str]:
        out = []
        for topic, hs in sorted(self.hops.items(), key=lambda kv: -sum(kv[1])):
            if hs:
                out.append(
                    f"   hop -> {topic:28} {len(hs):>7} records  p50 {_pct(hs, 0.5) * 1000:7.1f} ms"
                    f"  p99 {_pct(hs, 0.99) * 1000:7.1f} ms  max {max(hs) * 1000:7.1f} ms"
                )
        self.hops.clear()
        return out


def count_kafka_requests() -> None:
    """Count every request aiokafka sends in this process, by API (idempotent)."""
    from aiokafka.conn import AIOKafkaConnection
    from prometheus_client import Counter

    if getattr(AIOKafkaConnection.send, "_bench_counted", False):
        return
    requests = Counter("turbocubes_bench_kafka_requests", "Kafka requests our clients sent (bench only)", ["api"])
    original = AIOKafkaConnection.send
    children: dict[str, Any] = {}

    def send(self: Any, request: Any, expect_response: bool = True) -> Any:
        api = type(request).__name__.split("Request", 1)[0]
        child = children.get(api)
        if child is None:
            child = children[api] = requests.labels(api)
        child.inc()
        return original(self, request, expect_response)

    send._bench_counted = True  # type: ignore[attr-defined]
    AIOKafkaConnection.send = send  # type: ignore[method-assign]


def _run_delay_s(pid: int) -> float:
    """Seconds the threads of ``pid`` (live ones) spent runnable, waiting for a CPU."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for tid in tids:
        try:
            total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


class RunQueue:
    """Run-queue wait of our processes over a pass (``begin`` .. ``end``)."""

    def __init__(self) -> None:
        self._start: dict[int, float] = {}
        self._times = os.times()

    def begin(self, pids: Iterable[int]) -> None:
        self._start = {pid: _run_delay_s(pid) for pid in pids}
        self._times = os.times()

    def end(self, wall_s: float) -> str:
        waited = sum(max(0.0, _run_delay_s(pid) - s0) for pid, s0 in self._start.items())
        load = os.getloadavg()[0]
        t0, t1 = self._times, os.times()
        user, system = t1.user - t0.user, t1.system - t0.system
        return (
            f"   waiting for a CPU (runnable, not running; {len(self._start)} process(es) of ours): {waited:.1f} s"
            f" over {wall_s:.1f} s of wall time (load {load:.1f} on {os.cpu_count()} cpus: others' work counts here);"
            f" bench process user {user:.1f} s + kernel {system:.1f} s"
        )
