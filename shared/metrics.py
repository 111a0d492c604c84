"""Prometheus metrics shared by every cube (docs/architecture.md section 4, runtime).

One registry per process (prometheus_client's default); label ``cube`` tells
the cubes of a ``turbocubes up`` process apart. Cube-specific metrics live in
the cube's own package and register on the same default registry.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator

from prometheus_client import REGISTRY, Counter, Gauge
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

__all__ = [
    "BREAKER_OPEN",
    "CONSUMER_LAG",
    "DEAD_LETTERED",
    "FAILED",
    "HANDLER_SECONDS",
    "PROCESSED",
    "PUBLISHED",
    "RETRIED",
]

PROCESSED = Counter("turbocubes_processed_total", "Messages handled successfully", ["cube", "topic"])
FAILED = Counter("turbocubes_failed_total", "Handler failures (each attempt)", ["cube", "topic"])
RETRIED = Counter("turbocubes_retried_total", "Messages scheduled for a delayed retry", ["cube", "topic"])
DEAD_LETTERED = Counter("turbocubes_dead_lettered_total", "Messages sent to a DLQ", ["cube", "topic"])
PUBLISHED = Counter("turbocubes_published_total", "Messages published", ["cube", "topic"])


class BatchHistogram(Collector):
    """A histogram fed in batches, for per-message latencies on the hot path.

    prometheus_client's Histogram takes a lock and walks its buckets on every
    ``observe`` — a measurable share of a pass-through message. This one counts
    into plain lists (the runtime is one asyncio thread per process) and builds
    the standard histogram family only when Prometheus scrapes.
    """

    def __init__(self, name: str, documentation: str, label: str, buckets: Iterable[float]) -> None:
        self.name = name
        self.documentation = documentation
        self.label = label
        self.bounds = sorted(buckets)
        self._series: dict[str, tuple[list[int], list[float]]] = {}
        REGISTRY.register(self)

    def observe_many(self, label_value: str, values: Iterable[float]) -> None:
        counts, total = self._series.setdefault(label_value, ([0] * (len(self.bounds) + 1), [0.0]))
        bounds = self.bounds
        s = 0.0
        for v in values:
            counts[bisect.bisect_left(bounds, v)] += 1
            s += v
        total[0] += s

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=[self.label])
        for label_value, (counts, total) in self._series.items():
            cumulative = 0
            buckets = []
            for bound, n in zip([*map(floatToGoString, self.bounds), "+Inf"], counts, strict=True):
                cumulative += n
                buckets.append((bound, cumulative))
            family.add_metric([label_value], buckets, total[0])
        yield family


HANDLER_SECONDS = BatchHistogram(
    "turbocubes_handler_seconds",
    "Handler latency",
    "cube",
    # from 0.1 ms (a pass-through) to 30 s (a slow crawl): the range handlers live in
    (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30),
)
CONSUMER_LAG = Gauge("turbocubes_consumer_lag", "Records behind the end, per partition", ["cube", "topic", "partition"])
BREAKER_OPEN = Gauge(
    "turbocubes_dlq_breaker_open",
    "1 while a cube has paused its input because most messages were being dead-lettered",
    ["cube"],
)
