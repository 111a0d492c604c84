"""The kvwriter's metrics (docs/architecture.md sections 3 and 5: freshness is measured end to end)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

__all__ = ["DELETES", "FRESHNESS", "MEDIA_DROPPED", "REBRANDS", "REFRESHES", "WRITES"]

FRESHNESS = Histogram(
    "turbocubes_freshness_seconds",
    "From a document being seen (seen_at) to its Turbo page being written",
    # 0.1 s (a push through an idle pipeline) to 1 h (a feed polled hourly with parked media):
    # the range in which a page's freshness still tells the operator something
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600),
)
WRITES = Counter("turbocubes_kvwriter_writes_total", "Page upserts by outcome", ["outcome"])
DELETES = Counter("turbocubes_kvwriter_deletes_total", "Page tombstones by outcome", ["outcome"])
MEDIA_DROPPED = Counter(
    "turbocubes_kvwriter_media_dropped_total", "Media left out of a page because it is not in the CDN"
)
REBRANDS = Counter(
    "turbocubes_kvwriter_rebrands_total",
    "Pages rendered again because their host's branding changed or its logo reached the CDN",
)
REFRESHES = Counter(
    "turbocubes_kvwriter_refreshes_total",
    "Pages rendered again because an image they show changed at its source, by outcome",
    ["outcome"],
)
