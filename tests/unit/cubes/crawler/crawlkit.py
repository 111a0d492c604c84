"""Helpers for the crawler's tests: a handler wired to the partner server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from aiohttp.abc import AbstractResolver

from cubes.crawler.handler import CrawlHandler
from shared.blobs import BlobStore
from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.http import Fetcher
from shared.messages import CrawlKind, CrawlRequest, CrawlResult
from shared.runtime.cube import Context, Output

CTX = Context(topic="crawl.requests", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


def make_handler(
    settings: Settings,
    resolver: AbstractResolver,
    clock: Clock | None = None,
    blobs: Callable[[], Awaitable[BlobStore]] | None = None,
) -> CrawlHandler:
    clock = clock or SystemClock()
    return CrawlHandler(settings, Fetcher(settings, resolver=resolver, clock=clock), clock, blobs=blobs)


def request(
    url: str, host: str, kind: CrawlKind = CrawlKind.feed, requesters: Sequence[str] = ("feed:1",), **kw: Any
) -> CrawlRequest:
    return CrawlRequest(
        kind=kind, url=url, host=host, requesters=list(requesters), requested_at=datetime.now(UTC), **kw
    )


def fast_settings(**crawler: Any) -> Settings:
    """Allowlisted loopback, lanes fast enough that unit tests do not wait."""
    return Settings().replace(
        http={"allowlist": ["127.0.0.1/32"], "total_timeout_s": 2.0},
        crawler={"rate": 50.0, "burst": 10, "concurrency": 4, "max_rate": 100.0, **crawler},
    )


def crawl_result(out: Output) -> CrawlResult:
    """The crawl result an output of the crawler carries (what every test of its outputs reads)."""
    assert isinstance(out.message, CrawlResult), out
    return out.message
