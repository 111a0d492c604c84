"""Prometheus metrics shared by every cube (DESIGN.md section 4, runtime).

One registry per process (prometheus_client's default); label ``cube`` tells
the cubes of a ``turbocubes up`` process apart. Cube-specific metrics live in
the cube's own package and register on the same default registry.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

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
HANDLER_SECONDS = Histogram(
    "turbocubes_handler_seconds",
    "Handler latency",
    ["cube"],
    # from 0.1 ms (a pass-through) to 30 s (a slow crawl): the range handlers live in
    buckets=(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30),
)
CONSUMER_LAG = Gauge("turbocubes_consumer_lag", "Records behind the end, per partition",
                     ["cube", "topic", "partition"])
BREAKER_OPEN = Gauge("turbocubes_dlq_breaker_open",
                     "1 while a cube has paused its input because most messages were being dead-lettered",
                     ["cube"])
