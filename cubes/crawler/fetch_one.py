"""``turbocubes fetch URL``: fetch one URL exactly as the crawler would (docs/architecture.md section 6).

The operator's tool for "why doesn't this partner's feed come through?": the
same SSRF guard, robots.txt, host lane and limits as the crawler cube. It
prints the status, final URL, headers and size, and exits 1 with the reason
when the fetch is refused or fails (2 for a configuration error).

    turbocubes fetch https://example.com/feed.xml [--kind feed] [--allow 127.0.0.1/32] [--etag '"v1"']
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, TextIO

from yarl import URL

from cubes.crawler.handler import CrawlHandler
from shared.clock import SystemClock
from shared.config import Settings, load_settings
from shared.http import Fetcher
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FetchStatus

__all__ = ["fetch_command", "run"]

_GOOD = frozenset({FetchStatus.ok, FetchStatus.not_modified})


def run(args: argparse.Namespace) -> int:
    """``turbocubes fetch`` with its parsed arguments."""
    settings = load_settings(args.config)
    return asyncio.run(
        fetch_command(
            settings,
            args.url,
            kind=CrawlKind(args.kind),
            allow=args.allow,
            etag=args.etag,
            last_modified=args.last_modified,
        )
    )


async def fetch_command(
    settings: Settings,
    url: str,
    *,
    kind: CrawlKind = CrawlKind.page,
    allow: list[str] | None = None,
    etag: str | None = None,
    last_modified: str | None = None,
    resolver: Any = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Fetch ``url`` like the crawler, print what happened; 0 when fetched, 1 when refused or failed."""
    out = out or sys.stdout
    err = err or sys.stderr
    settings = settings.replace(
        http={"allowlist": [*settings.http.allowlist, *(allow or [])]},
        # the CLI prints the body size; nothing goes to the blob store
        crawler={"inline_body_max": 1 << 62, "coalesce_window_s": 0.0},
    )
    clock = SystemClock()
    fetcher = Fetcher(settings, resolver=resolver, clock=clock)
    try:
        handler = CrawlHandler(settings, fetcher, clock)
        host = _host_of(url)
        req = CrawlRequest(
            kind=kind,
            url=url,
            host=host,
            requesters=["cli"],
            etag=etag,
            last_modified=last_modified,
            requested_at=SystemClock().now(),
            priority=0,
        )
        result = await handler.crawl(req)
    finally:
        await fetcher.close()
    assert result is not None  # the only requester: nothing to coalesce with
    _print(result, out)
    if result.status not in _GOOD:
        print(f"turbocubes fetch: {result.status.value}: {result.error or 'refused'}", file=err)
        return 1
    return 0


def _host_of(url: str) -> str:
    try:
        return URL(url).host or "-"
    except (ValueError, TypeError):
        return "-"


def _print(r: CrawlResult, out: TextIO) -> None:
    print(f"status:      {r.status.value}", file=out)
    if r.http_status is not None:
        print(f"http status: {r.http_status}", file=out)
    print(f"url:         {r.url}", file=out)
    if r.final_url and r.final_url != r.url:
        print(f"final url:   {r.final_url}", file=out)
    print(f"size:        {r.size} bytes", file=out)
    print(f"elapsed:     {r.elapsed_ms:.0f} ms", file=out)
    if r.error:
        print(f"reason:      {r.error}", file=out)
    for name, value in sorted(r.headers.items()):
        print(f"  {name}: {value}", file=out)
