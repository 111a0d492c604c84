"""Helpers for the crawler's tests: a handler wired to the partner server."""

from __future__ import annotations

from datetime import UTC, datetime

from cubes.crawler.handler import CrawlHandler
from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.http import Fetcher
from shared.messages import CrawlKind, CrawlRequest
from shared.runtime.cube import Context

CTX = Context(topic="crawl.requests", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


def make_handler(settings: Settings, resolver, clock: Clock | None = None, blobs=None) -> CrawlHandler:
    clock = clock or SystemClock()
    return CrawlHandler(settings, Fetcher(settings, resolver=resolver, clock=clock), clock, blobs=blobs)


def request(url: str, host: str, kind: CrawlKind = CrawlKind.feed, requesters=("feed:1",), **kw) -> CrawlRequest:
    return CrawlRequest(
        kind=kind, url=url, host=host, requesters=list(requesters), requested_at=datetime.now(UTC), **kw
    )


def fast_settings(**crawler) -> Settings:
    """Allowlisted loopback, lanes fast enough that unit tests do not wait."""
    return Settings().replace(
        http={"allowlist": ["127.0.0.1/32"], "total_timeout_s": 2.0},
        crawler={"rate": 50.0, "burst": 10, "concurrency": 4, "max_rate": 100.0, **crawler},
    )
