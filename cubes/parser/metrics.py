"""The parser's counters (docs/architecture.md section 4, metrics), labelled by source kind (rss, turbo, yml, upload).

parsed = items read from bodies; changed = published as a new version (new
items included); unchanged = skipped by the hash; deleted = tombstones
published; rejected = items refused (no link, another host, no title, over a
limit, outranked by a source of higher priority). ``feed_errors`` counts
bodies that could not be read at all; ``same_body`` counts fetched bodies skipped before
parsing because they are byte-identical to the last one processed for that feed. ``isolated`` counts
items prepared in a worker process (``preparing.py``) by outcome: done, timeout (refused), failed.
"""

from __future__ import annotations

from prometheus_client import Counter

__all__ = ["CHANGED", "DELETED", "FEED_ERRORS", "ISOLATED", "PARSED", "REJECTED", "SAME_BODY", "UNCHANGED"]

PARSED = Counter("turbocubes_parser_parsed_total", "Items read from feeds and uploads", ["source"])
UNCHANGED = Counter("turbocubes_parser_unchanged_total", "Items skipped: same content hash", ["source"])
CHANGED = Counter("turbocubes_parser_changed_total", "Documents published (new or changed)", ["source"])
DELETED = Counter("turbocubes_parser_deleted_total", "Deletions published", ["source"])
REJECTED = Counter("turbocubes_parser_rejected_total", "Items refused, with a reason in the status", ["source"])
FEED_ERRORS = Counter("turbocubes_parser_feed_errors_total", "Bodies that could not be parsed", ["source"])
SAME_BODY = Counter("turbocubes_parser_same_body_total", "Feed bodies identical to the last one: skipped", ["source"])
ISOLATED = Counter(
    "turbocubes_parser_isolated_total", "Items prepared in a worker process (past 16 KB of HTML)", ["outcome"]
)
