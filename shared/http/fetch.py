"""Guarded, bounded HTTP GET: the crawler's and ``turbocubes fetch``'s one way out (docs/architecture.md section 6).

``Fetcher`` wraps ONE ``aiohttp.ClientSession`` whose connector resolves
through the SSRF ``GuardedResolver``. ``fetch`` never raises: every failure
is a ``FetchResult`` with a specific ``FetchStatus``.

Limits, all from settings:

* timeouts: connect (``http.connect_timeout_s``), between two reads
  (``http.read_timeout_s``), and a deadline for the whole fetch, redirects and
  body included (``http.total_timeout_s``) — that last one cuts off a server
  that trickles a byte at a time;
* redirects are followed by hand (at most ``http.max_redirects``), every
  target re-checked by the guard, a URL seen twice is a ``redirect_loop``;
  ``same_origin`` follows only redirects that stay on the URL's origin (a proof
  of ownership must be read from the origin it proves): one to another origin
  ends the fetch as ``bad_url`` with ``left_origin`` naming where it pointed;
* the body is counted *after* decompression while it streams in and the
  fetch stops at the first byte over the kind's limit (``too_large``), so a
  gzip bomb costs at most the limit; a Content-Length over the limit is
  refused before reading anything;
* conditional GET: ``etag`` / ``last_modified`` are sent as If-None-Match /
  If-Modified-Since and a 304 is ``not_modified``;
* ``spill_over``: a body bigger than that goes to a temporary file while it streams in
  (``spill.py``; ``FetchResult.body_file`` and ``body_sha256``, the caller deletes the file), so a
  huge catalog or video costs a chunk of memory, not its size.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp.abc import AbstractResolver
from yarl import URL

from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.errors import BlockedAddressError
from shared.http.guard import AddressGuard, GuardedResolver
from shared.http.retry_after import parse_retry_after
from shared.http.spill import BodySink
from shared.messages import CrawlKind, FetchStatus
from shared.origins import try_origin

__all__ = ["KEPT_HEADERS", "FetchResult", "Fetcher", "max_bytes_for"]

#: response headers a result keeps (the parser and the scheduler need no others)
KEPT_HEADERS = (
    "content-type",
    "content-length",
    "content-encoding",
    "etag",
    "last-modified",
    "cache-control",
    "expires",
    "retry-after",
    "location",
    "x-robots-tag",
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: read granularity; small enough that the size limit is enforced within 64 KiB
_CHUNK = 64 * 1024


@dataclass(slots=True)
class FetchResult:
    url: str
    status: FetchStatus
    final_url: str | None = None
    http_status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    size: int = 0
    error: str | None = None
    elapsed_s: float = 0.0
    #: seconds the server asked us to wait (Retry-After), already converted from an HTTP date
    retry_after_s: float | None = None
    #: the body, when it was over ``spill_over``: a temporary file the caller owns (and deletes), with
    #: the sha256 of its bytes; ``body`` is None then
    body_file: Path | None = None
    body_sha256: str | None = None
    redirects: list[str] = field(default_factory=list)
    #: with ``same_origin``: the redirect target on another origin that was not followed
    left_origin: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in (FetchStatus.ok, FetchStatus.not_modified)


def max_bytes_for(kind: CrawlKind, settings: Settings) -> int:
    c = settings.crawler
    return {
        CrawlKind.feed: c.max_feed_bytes,
        CrawlKind.image: c.max_image_bytes,
        CrawlKind.video: c.max_video_bytes,
        CrawlKind.page: c.max_page_bytes,
    }[kind]


def _status_for(code: int, retry_after: float | None) -> FetchStatus:
    if 200 <= code < 300:
        return FetchStatus.ok
    if code == 304:
        return FetchStatus.not_modified
    if code == 429 or (code == 503 and retry_after is not None):
        return FetchStatus.throttled
    if 500 <= code < 600:
        return FetchStatus.http_5xx
    return FetchStatus.http_4xx  # 4xx, and the odd 1xx/3xx without Location


class Fetcher:
    """One ClientSession behind the SSRF guard. ``await fetcher.close()`` when done."""

    def __init__(
        self,
        settings: Settings,
        *,
        resolver: AbstractResolver | None = None,
        clock: Clock | None = None,
        connection_limit: int = 512,
    ) -> None:
        self.settings = settings
        self.guard = AddressGuard(settings.http.allowlist)
        self.clock: Clock = clock or SystemClock()
        self._resolver = GuardedResolver(self.guard, resolver)
        self._limit = connection_limit
        self._session: aiohttp.ClientSession | None = None

    @property
    def total_timeout_s(self) -> float:
        return self.settings.http.total_timeout_s

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None:
            h = self.settings.http
            connector = aiohttp.TCPConnector(
                resolver=self._resolver,
                limit=self._limit,
                limit_per_host=0,  # per-host caps are the crawl lanes' job
                ttl_dns_cache=60,  # caches *checked* answers only
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers={"User-Agent": h.user_agent},
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=h.connect_timeout_s, sock_read=h.read_timeout_s),
                auto_decompress=True,
                trust_env=False,  # a proxy from the environment would bypass the guard
                cookie_jar=aiohttp.DummyCookieJar(),  # partners must not track us across hosts
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(
        self,
        url: str | URL,
        *,
        kind: CrawlKind = CrawlKind.page,
        etag: str | None = None,
        last_modified: str | None = None,
        max_bytes: int | None = None,
        headers: Mapping[str, str] | None = None,
        origin_headers: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        total_s: float | None = None,
        spill_over: int | None = None,
        same_origin: bool = False,
    ) -> FetchResult:
        """GET ``url`` within every limit; never raises (except ``CancelledError``).

        ``same_origin``: redirects to another scheme, host or port are not followed (see above).
        ``origin_headers`` (a feed's credentials) go to ``url``'s own origin only: a redirect to
        another scheme, host or port is followed without them, as browsers drop ``Authorization``.
        ``total_s`` is this request's own total time (a feed's timeout), instead of
        ``http.total_timeout_s``; ``timeout_s`` shortens it (a caller's own deadline).
        ``spill_over``: a body over this many bytes lands in ``FetchResult.body_file`` (see above).
        """
        start = time.monotonic()
        limit = max_bytes if max_bytes is not None else max_bytes_for(kind, self.settings)
        result = FetchResult(url=str(url), status=FetchStatus.connect_error)
        req_headers = dict(headers or {})
        if etag:
            req_headers["If-None-Match"] = etag
        if last_modified:
            req_headers["If-Modified-Since"] = last_modified
        sink = BodySink(spill_over)
        try:
            total = self.settings.http.total_timeout_s if total_s is None else total_s
            async with asyncio.timeout(total if timeout_s is None else max(0.0, min(total, timeout_s))):
                await self._follow(
                    url, req_headers, limit, result, sink, same_origin=same_origin, origin_headers=origin_headers
                )
        except BlockedAddressError as exc:
            result.status, result.error = FetchStatus.blocked_address, exc.message
        except ValueError as exc:  # bad URL (yarl / our checks); aiohttp.InvalidURL is a ValueError too
            result.status, result.error = FetchStatus.bad_url, str(exc)
        except TimeoutError as exc:
            result.status, result.error = FetchStatus.timeout, str(exc) or "timed out"
        except aiohttp.ClientConnectorDNSError as exc:
            result.status, result.error = FetchStatus.dns_error, str(exc)
        except aiohttp.ClientConnectorError as exc:
            blocked = _blocked_cause(exc)
            if blocked is not None:
                result.status, result.error = FetchStatus.blocked_address, blocked.message
            else:
                result.status, result.error = FetchStatus.connect_error, str(exc)
        except (aiohttp.ClientError, OSError) as exc:
            result.status, result.error = FetchStatus.connect_error, f"{type(exc).__name__}: {exc}"
        finally:
            if result.body_file is None:  # no body kept on disk (failed, or small): no file left behind
                await sink.discard()
        result.elapsed_s = time.monotonic() - start
        return result

    async def _follow(
        self,
        url: str | URL,
        headers: dict[str, str],
        limit: int,
        result: FetchResult,
        sink: BodySink,
        *,
        same_origin: bool = False,
        origin_headers: Mapping[str, str] | None = None,
    ) -> None:
        session = self._open()
        current = self.guard.check_url(url)
        origin = try_origin(str(current))
        seen = {str(current)}
        while True:
            result.final_url = str(current)
            # a feed's credentials go to its own origin only, never across a redirect to another
            at_home = origin_headers is not None and origin is not None and try_origin(str(current)) == origin
            sent = {**headers, **origin_headers} if origin_headers is not None and at_home else headers
            async with session.get(current, headers=sent, allow_redirects=False) as resp:
                code = resp.status
                location = resp.headers.get("Location")
                if code in _REDIRECTS and location:
                    try:
                        target = current.join(URL(location))
                    except ValueError as exc:
                        raise ValueError(f"bad redirect Location {location!r}: {exc}") from None
                    result.http_status = code
                    if same_origin and try_origin(str(target)) != origin:
                        result.status, result.left_origin = FetchStatus.bad_url, str(target)
                        result.error = f"redirected to {target}, another origin than {origin}: not followed"
                        return
                    result.redirects.append(str(target))
                    if str(target) in seen:
                        result.status, result.error = FetchStatus.redirect_loop, f"redirect loop at {target}"
                        return
                    if len(result.redirects) > self.settings.http.max_redirects:
                        result.status = FetchStatus.too_many_redirects
                        result.error = f"more than {self.settings.http.max_redirects} redirects"
                        return
                    seen.add(str(target))
                    current = self.guard.check_url(target)
                    continue
                await self._read(resp, limit, result, sink)
                return

    async def _read(self, resp: aiohttp.ClientResponse, limit: int, result: FetchResult, sink: BodySink) -> None:
        result.http_status = resp.status
        result.headers = {k: resp.headers[k] for k in KEPT_HEADERS if k in resp.headers}
        result.retry_after_s = parse_retry_after(resp.headers.get("Retry-After"), self.clock.time())
        result.status = _status_for(resp.status, result.retry_after_s)
        if result.status is FetchStatus.not_modified:
            return
        if result.status is not FetchStatus.ok:
            # keep a little of an error body: it often says why (4xx pages, 5xx messages)
            result.body = await resp.content.read(4096)
            result.size = len(result.body)
            result.error = f"HTTP {resp.status} {resp.reason or ''}".strip()
            return
        declared = resp.content_length
        encoded = resp.headers.get("Content-Encoding", "identity").lower() not in ("", "identity")
        if declared is not None and declared > limit and not encoded:
            result.status = FetchStatus.too_large
            result.error = f"Content-Length {declared} over the limit of {limit} bytes"
            return
        async for chunk in resp.content.iter_chunked(_CHUNK):
            if sink.size + len(chunk) > limit:
                result.status, result.size = FetchStatus.too_large, sink.size + len(chunk)
                result.error = f"body over the limit of {limit} bytes (after decompression)"
                resp.close()  # drop the connection instead of draining an endless body
                return
            await sink.add(chunk)
        result.body = await sink.finish()
        result.size = sink.size
        if result.body is None:
            result.body_file, result.body_sha256 = sink.path, sink.sha256


def _blocked_cause(exc: BaseException) -> BlockedAddressError | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, BlockedAddressError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
