"""``turbocubes parse FILE|URL``: what the parser makes of a feed (docs/architecture.md section 1).

The command's work; ``commands.py`` declares its arguments and imports this module only when it runs.

The webmaster's and developer's check before registering a feed: the
documents go to stdout as JSON lines (exactly what ``documents.parsed``
would carry, with version 0), deletions as ``DocumentDeleted`` lines, and
every problem to stderr as ``WHERE:LINE:COLUMN: error|warning: reason``.
Exit status: 0 when the feed could be read (even if some items were
refused), 1 when it could not (or the fetch failed), 2 on bad arguments.

A URL is fetched through the crawler's SSRF guard and limits
(``shared.http.Fetcher``); ``--allow`` lets a private address through for a
local test server. A YML file is streamed offer by offer, so a catalog of
any size is checked in bounded memory.

Relative links in a file are resolved against ``--base-url`` (the address the
feed will be served from; its host is then the default ``--host``), else
against the feed's own address when it names one (``<atom:link rel="self">``),
as the cube resolves them against the URL it fetched.

    turbocubes parse feed.xml --host example.com
    turbocubes parse feed.xml --base-url https://example.com/feed.xml
    turbocubes parse https://example.com/turbo.xml --format turbo
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from cubes.parser.categories import Listings
from cubes.parser.detect import detect_format
from cubes.parser.documents import Candidate, prepare_deletions, prepare_one, source_kind, to_document
from cubes.parser.feed import Limits, parse_feed
from cubes.parser.identity import IdentityError
from cubes.parser.model import DetectedFormat, ItemError, ParsedItem, Severity
from cubes.parser.sanitize import ContentCleaner
from cubes.parser.xmlsafe import HostileXml
from cubes.parser.yml import Catalog, iter_yml
from shared.clock import SystemClock
from shared.config import Settings, load_settings
from shared.messages import CrawlKind, DocumentDeleted, SourceRef

__all__ = ["parse_command", "parse_path", "run"]


def run(args: argparse.Namespace) -> int:
    """``turbocubes parse`` with its parsed arguments: a file is parsed in this thread, a URL fetched on a loop."""
    settings = load_settings(args.config)
    if not _is_url(args.source):  # no event loop for a file: asyncio and its network stack cost a tenth of the command
        return parse_path(settings, args.source, fmt=args.format, host=args.host, base_url=args.base_url)
    import asyncio

    return asyncio.run(
        parse_command(settings, args.source, fmt=args.format, host=args.host, allow=args.allow, base_url=args.base_url)
    )


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _err(where: str, e: ItemError, err: TextIO) -> None:
    pos = f":{e.line}" + (f":{e.column}" if e.column is not None else "") if e.line is not None else ""
    item = f" (item {e.index + 1})" if e.index is not None else ""
    print(f"{where}{pos}: {e.severity.value}{item}: {e.reason}", file=err)


async def _fetch(settings: Settings, url: str, allow: list[str], err: TextIO) -> tuple[bytes, str | None] | None:
    from shared.http import Fetcher

    settings = settings.replace(http={"allowlist": [*settings.http.allowlist, *allow]})
    fetcher = Fetcher(settings)
    try:
        res = await fetcher.fetch(url, kind=CrawlKind.feed)
    finally:
        await fetcher.close()
    if res.body is None or res.http_status is None or not 200 <= res.http_status < 300:
        print(f"{url}: error: fetch failed: {res.status.value}: {res.error or res.http_status}", file=err)
        return None
    return res.body, res.headers.get("content-type")


async def parse_command(
    settings: Settings,
    source: str,
    *,
    fmt: str = "auto",
    host: str | None = None,
    allow: list[str] | None = None,
    base_url: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Parse a file (in a worker thread) or a fetched URL; the exit status (the module's docstring)."""
    import asyncio

    out = out or sys.stdout
    err = err or sys.stderr
    if not _is_url(source):
        return await asyncio.to_thread(
            parse_path, settings, source, fmt=fmt, host=host, base_url=base_url, out=out, err=err
        )
    if _bad_base_url(base_url, err):
        return 2
    fetched = await _fetch(settings, source, allow or [], err)
    if fetched is None:
        return 1
    body, content_type = fetched
    host = _host(host, base_url, source)
    return _parse_body(
        settings, body, source, url=source, content_type=content_type, fmt=fmt, host=host, out=out, err=err
    )


def parse_path(
    settings: Settings,
    source: str,
    *,
    fmt: str = "auto",
    host: str | None = None,
    base_url: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Parse the feed file at ``source``; the exit status (the module's docstring). A catalog is streamed."""
    out = out or sys.stdout
    err = err or sys.stderr
    if _bad_base_url(base_url, err):
        return 2
    host = _host(host, base_url)
    path = Path(source)
    head = _head(path)
    if head is None:
        print(f"{source}: error: no such file (give a file path or an http(s) URL)", file=err)
        return 2
    if detect_format(head, None if fmt == "auto" else fmt) is DetectedFormat.yml:
        return _stream_yml(path, host, out, err, _cleaner(settings), base_url)
    body = path.read_bytes()
    return _parse_body(settings, body, source, url=base_url, content_type=None, fmt=fmt, host=host, out=out, err=err)


def _bad_base_url(base_url: str | None, err: TextIO) -> bool:
    """Whether ``--base-url`` was given and is not an absolute http(s) URL (said on ``err``)."""
    if base_url is None or (_is_url(base_url) and urlsplit(base_url).hostname):
        return False
    print(f"--base-url {base_url!r}: error: give an absolute http(s) URL", file=err)
    return True


def _host(given: str | None, *urls: str | None) -> str | None:
    """The documents' host: ``--host``, else the host of the first URL given (``--base-url``, the feed's)."""
    return given or next((urlsplit(u).hostname for u in urls if u), None)


def _cleaner(settings: Settings) -> ContentCleaner:
    return ContentCleaner(settings.kvwriter.video_hosts, hold_incomplete=settings.media.hold_incomplete)


def _parse_body(
    settings: Settings,
    body: bytes,
    source: str,
    *,
    url: str | None,
    content_type: str | None,
    fmt: str,
    host: str | None,
    out: TextIO,
    err: TextIO,
) -> int:
    limits = Limits(settings.parser.max_items, settings.parser.max_item_bytes, settings.parser.max_body_bytes)
    declared = None if fmt == "auto" else fmt
    result = parse_feed(body, url=url, content_type=content_type, declared_format=declared, limits=limits)
    for e in result.errors:
        _err(source, e, err)
    if result.fatal:
        return 1
    kind = source_kind(result.format)
    ref = SourceRef(kind=kind, id="cli")
    _emit([*result.items, *result.listings], host, ref, source, out, err, _cleaner(settings))
    removals, derrs = prepare_deletions(result.deletions, feed_host=host)
    for e in derrs:
        _err(source, e, err)
    now = SystemClock().now()
    for r in removals:
        msg = DocumentDeleted(
            url=r.url, host=r.host, source=ref, version=0, reason="removed by the source", deleted_at=now
        )
        print(msg.model_dump_json(), file=out)
    return 0


def _head(path: Path) -> bytes | None:
    if not path.is_file():
        return None
    with path.open("rb") as f:
        return f.read(8192)


def _emit(
    items: Iterable[ParsedItem | ItemError],
    host: str | None,
    ref: SourceRef,
    where: str,
    out: TextIO,
    err: TextIO,
    cleaner: ContentCleaner,
) -> int:
    """Print each item's document (or its error); the number of feed-level errors seen."""
    seen: set[str] = set()
    fatal = 0
    for item in items:
        if isinstance(item, ItemError):
            _err(where, item, err)
            fatal += item.index is None and item.severity is Severity.error
            continue
        try:
            cand: Candidate = prepare_one(item, host, cleaner)
        except IdentityError as exc:
            reason = str(exc)
            if exc.code == "item.bad_link" and item.base is None:
                reason += "; a file has no address of its own: give --base-url"
            _err(where, ItemError(reason, item.line, None, item.index, item.link, code=exc.code), err)
            continue
        if cand.url in seen:
            _err(
                where,
                ItemError(
                    "duplicate link: an earlier item has the same URL",
                    item.line,
                    None,
                    item.index,
                    item.link,
                    code="item.duplicate_link",
                ),
                err,
            )
            continue
        seen.add(cand.url)
        for warning in cand.warnings:
            _err(where, warning, err)
        now = SystemClock().now()
        doc = to_document(cand, source=ref, version=0, seen_at=now, parsed_at=now)
        print(doc.model_dump_json(), file=out)
    return fatal


def _stream_yml(
    path: Path, host: str | None, out: TextIO, err: TextIO, cleaner: ContentCleaner, base_url: str | None
) -> int:
    from shared.messages import SourceKind

    ref = SourceRef(kind=SourceKind.yml, id="cli")
    catalog, listings = Catalog(), Listings()

    def offers() -> Iterator[ParsedItem | ItemError]:
        count = 0
        for entry in iter_yml(f, base=base_url, catalog=catalog):
            if isinstance(entry, ParsedItem):
                listings.add(entry)
                count += 1
            yield entry
        yield from listings.items(catalog, count)  # the category listing pages (categories.py), last

    with path.open("rb") as f:
        try:
            fatal = _emit(offers(), host, ref, str(path), out, err, cleaner)
        except HostileXml as exc:
            _err(str(path), ItemError(exc.reason, exc.line, exc.column, code="xml.hostile"), err)
            return 1
    return 1 if fatal else 0
