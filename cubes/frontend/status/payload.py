"""The status views as JSON: ``/api/v1/status`` (public, aggregates) and the console's host JSON.

The same view model as the HTML (``view.py``), so the page and its JSON can
never say different things.
"""

from __future__ import annotations

from typing import Any

from cubes.frontend.status.view import HostView, PipelineView
from shared.status import pipeline_lag

__all__ = ["host_json", "pipeline_json"]


def pipeline_json(view: PipelineView) -> dict[str, Any]:
    """Pipeline-wide aggregates only: no host, feed URL or error of any tenant."""
    st = view.status
    rt = st.settings.runtime
    lag, by_group = pipeline_lag(st.cubes, rt.overload_groups, st.now, rt.status_interval_s)
    return {
        "pages": st.pages,
        "feeds": st.feeds,
        "hosts": st.hosts,
        "failing_feeds": st.failing,
        "feed_results": st.results,
        "waiting_for_media": st.waiting,
        "freshness_s": {"p50": view.p50, "p99": view.p99, "sample": len(st.freshness)},
        "overload": {
            "lag": lag,
            "by_group": by_group,
            "threshold": rt.overload_lag,
            "resume_below": rt.overload_resume_lag,
            "paused": view.banner.hot,
            "paused_work": [w for w in view.banner.works.split(", ") if w],
        },
        "lanes": {"in_memory": st.lanes_total, "paused": st.lanes_paused},
        "cubes": [
            {
                "cube": c.cube,
                "instance": c.instance,
                "state": c.state,
                "processed": c.processed,
                "lag": c.lag,
                "retried": c.retried,
                "dead_lettered": c.dead_lettered,
                "reported_at": c.reported.iso if c.reported else None,
            }
            for c in view.cubes
        ],
        "dlq": view.dlq,
    }


def host_json(view: HostView) -> dict[str, Any]:
    """One host for its webmaster: pages, waiting documents, the crawl lane and each feed's status."""
    st = view.status
    return {
        "host": st.host,
        "pages": st.pages,
        "waiting_for_media": st.waiting,
        "failing_feeds": st.failing,
        "lane": st.lane,
        "feeds": [
            {
                "feed_id": r.feed.feed_id,
                "url": r.feed.url,
                "format": r.feed.format,
                "last_fetch_at": r.last_fetch.iso if r.last_fetch else None,
                "http_status": r.feed.status.last_http_status,
                "result": r.feed.status.last_result,
                "items": r.feed.status.items,
                "error": r.feed.status.last_error,
                "error_line": r.feed.status.error_line,
                "error_column": r.feed.status.error_column,
                "next_fetch_at": r.next_fetch.iso if r.next_fetch else None,
                "consecutive_failures": r.feed.status.consecutive_failures,
            }
            for r in view.feeds
        ],
    }
