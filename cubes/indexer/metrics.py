"""The indexer's metrics (docs/architecture.md section 3, "indexer": how far search lags the pages)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

__all__ = ["CPU", "LAG", "PAGES", "PENDING"]

LAG = Histogram(
    "turbocubes_search_index_lag_seconds",
    "From a page's write (written_at) to its search index rows being committed",
    # the indexer's period (a quarter second) to a backlog of minutes (a rebuild, a long outage)
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800),
)
PAGES = Counter(
    "turbocubes_search_index_pages_total",
    "Pages the indexer took from the queue, by outcome (indexed, removed, moved_on: written again meanwhile)",
    ["outcome"],
)
CPU = Counter(
    "turbocubes_search_index_cpu_seconds_total",
    "CPU seconds this process spent indexing (analysis and index writes, every thread)",
)
PENDING = Gauge("turbocubes_search_index_pending", "Queue rows left after the indexer's last round")
