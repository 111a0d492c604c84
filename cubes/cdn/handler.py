"""The cdn cube's handler: fetched image -> checked -> S3 under its content hash -> registry (docs/architecture.md s.2).

For each ``crawl.images`` result:

1. A failed fetch: 404 / robots / blocked / too large are *permanent*: recorded
   failed with the long re-try period (``media.failure_retry_s``) and announced
   in ``media.cached`` so parked documents go on without the image. A *transient*
   failure (5xx, timeout, connection, throttled) is ordered again, up to
   ``media.fetch_retries`` times; the count rides in the request's requesters
   (``cdn:retry:N``), which the crawler echoes back in its result. Raising
   ``TransientError`` would be useless here: the runtime would re-run this
   handler on the same failed result, and nothing would be fetched again.
   After the last try it counts as failed with the short ``media.transient_retry_s``.
2. A fetched body is checked by its bytes (``checks.py``) and refused with a reason.
3. Good bytes go to the CDN under ``img/<sha[:2]>/<sha>.<ext>`` (videos ``vid/…``):
   the same bytes from two URLs are one object. The put is skipped when the object
   is known to exist: this process stored it already (a bounded set of recent keys),
   or, for bodies of ``HEAD_FIRST_BYTES`` and more, a HEAD finds it. Small bodies are
   put without asking: boto3 spends about as much on a HEAD as on a small PUT, so
   asking first would double the cost of every new image to save a cheap overwrite
   of identical bytes. Objects are immutable, so they carry a one-year Cache-Control.
   S3 being down raises ``BlobUnavailable``, which the runtime retries with backoff.
4. An image wider than a copy (``shared.images.variants``) gets smaller WebP copies beside it
   (``copies.py``), for the pages' ``srcset``; the registry records their widths.
5. Registry first, then ``media.cached``: whoever reacts to the message finds the record.
6. The answer to a re-check (``recheck.py``), or to a webmaster's refresh of the image
   (``shared/webmaster/refresh.py``): a 304, or the same bytes again, only notes the check; new
   bytes are a new copy announced with ``replaces`` (the old copy's URL), so the pages
   showing it are rendered again; a failure keeps the copy -- unless the webmaster
   purged the image: then a failure (or bytes that are no image) drops the copy, announced
   failed with ``replaces``, and its pages are rendered again without it.
   Every answer that keeps or makes a copy says when to ask again (``recheck_after``):
   the image's own lifetime (``Cache-Control`` max-age, ``Expires``) within
   ``media.recheck_min_s`` .. ``recheck_max_s``, else ``media.recheck_s``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime, timedelta

from cubes.cdn.checks import Checked, check_media
from cubes.cdn.copies import resized
from cubes.cdn.recheck import RECHECK_REQUESTER
from shared.blobs.base import BlobStore
from shared.clock import Clock
from shared.config import MediaConfig, Settings
from shared.errors import NotFound
from shared.http.freshness import freshness
from shared.images.variants import variant_key, widths_for
from shared.messages import (
    CrawlKind,
    CrawlRequest,
    CrawlResult,
    FetchStatus,
    MediaCached,
    MediaKind,
    MediaStatus,
)
from shared.runtime.cube import Context, Output
from shared.stores import ImageRegistry
from shared.urls import host_of
from shared.webmaster.branding import BRANDING_PREFIX
from shared.webmaster.feeds import PURGE_PREFIX, REFRESH_PREFIX

__all__ = ["CACHE_CONTROL", "HEAD_FIRST_BYTES", "CdnHandler", "failure_reason", "media_key"]

#: content-addressed objects never change: browsers and CDNs may keep them for a year
CACHE_CONTROL = "public, max-age=31536000, immutable"
RETRY_REQUESTER = "cdn:retry:"
#: fetch outcomes worth another try: the host or the network may heal within minutes
_TRANSIENT = {
    FetchStatus.http_5xx,
    FetchStatus.timeout,
    FetchStatus.connect_error,
    FetchStatus.dns_error,
    FetchStatus.throttled,
}
#: requesters of a webmaster's refresh or purge (``shared/webmaster/refresh.py``): answered as a re-check
_ASKED_AGAIN = (REFRESH_PREFIX, PURGE_PREFIX)
#: bodies above this are hashed and checked off the event loop (a 20 MB image is ~50 ms of CPU)
_OFFLOAD_BYTES = 512 * 1024
#: from this size up, a HEAD (one small round trip) is cheaper than uploading the body again
HEAD_FIRST_BYTES = 256 * 1024
#: keys this process has stored (or seen stored): ~100 bytes each, so 100,000 is ~10 MB
_KNOWN_KEYS = 100_000


def media_key(sha256: str, ext: str, kind: MediaKind) -> str:
    """The CDN key of content ``sha256``: same bytes, same key, whatever URL they came from."""
    folder = "vid" if kind == MediaKind.video else "img"
    return f"{folder}/{sha256[:2]}/{sha256}.{ext}"


def failure_reason(status: FetchStatus, http_status: int | None) -> str:
    """The failure reason in ``media.cached``: ``http_404`` rather than the bare ``http_4xx``."""
    if status in (FetchStatus.http_4xx, FetchStatus.http_5xx) and http_status:
        return f"http_{http_status}"
    return status.value


def _reason(result: CrawlResult) -> str:
    return failure_reason(result.status, result.http_status)


def _validators(msg: CrawlResult) -> dict[str, str | None]:
    """The ``ETag`` / ``Last-Modified`` an answer carried: what the next re-check sends back."""
    return {"etag": msg.headers.get("etag"), "last_modified": msg.headers.get("last-modified")}


def recheck_after(msg: CrawlResult, media: MediaConfig) -> float:
    """Seconds from an answer to the next re-check of its image: the image's own lifetime when its
    response gives one (``Cache-Control`` max-age, ``Expires``), held between ``media.recheck_min_s``
    and ``recheck_max_s`` ("ask every time" is the floor), else ``media.recheck_s``."""
    fresh = freshness(msg.headers, msg.fetched_at.timestamp())
    if fresh.seconds is not None:
        return min(media.recheck_max_s, max(media.recheck_min_s, fresh.seconds))
    if fresh.revalidate:
        return media.recheck_min_s
    return media.recheck_s


def _retries_done(requesters: Sequence[str]) -> int:
    done = 0
    for r in requesters:
        if r.startswith(RETRY_REQUESTER) and r[len(RETRY_REQUESTER) :].isdigit():
            done = max(done, int(r[len(RETRY_REQUESTER) :]))
    return done


class CdnHandler:
    def __init__(
        self, settings: Settings, images: ImageRegistry, cdn: BlobStore, blobs: BlobStore, clock: Clock
    ) -> None:
        self.media = settings.media
        self.max_image_bytes = settings.crawler.max_image_bytes
        self.max_video_bytes = settings.crawler.max_video_bytes
        self.images = images
        self.cdn = cdn
        self.blobs = blobs
        self.clock = clock
        self._known: OrderedDict[str, None] = OrderedDict()

    def _remember(self, key: str) -> None:
        self._known[key] = None
        if len(self._known) > _KNOWN_KEYS:
            self._known.popitem(last=False)

    def _recheck_at(self, msg: CrawlResult, now: datetime) -> datetime:
        return now + timedelta(seconds=recheck_after(msg, self.media))

    async def handle(self, msg: CrawlResult, ctx: Context) -> list[Output]:
        url = msg.url  # canonical: the media cube ordered it so (URLs are trusted past their boundary)
        kind = MediaKind.video if msg.kind == CrawlKind.video else MediaKind.image
        now = self.clock.now()
        recheck = RECHECK_REQUESTER in msg.requesters or any(r.startswith(_ASKED_AGAIN) for r in msg.requesters)
        purge = any(r.startswith(PURGE_PREFIX) for r in msg.requesters)
        if msg.status == FetchStatus.not_modified:
            await self.images.record_checked(url, now, **_validators(msg), recheck_at=self._recheck_at(msg, now))
            return []
        if msg.status != FetchStatus.ok:
            if purge:
                return await self._purged(url, kind, _reason(msg), now)
            if recheck:  # the copy stays (see step 6); the next re-check asks again
                return []
            if msg.status in _TRANSIENT:
                return await self._fetch_failed_for_now(msg, url, kind, now)
            return await self._failed(url, kind, _reason(msg), now, self.media.failure_retry_s)
        body = msg.body
        if body is None and msg.body_ref:
            try:
                body = await self.blobs.get(msg.body_ref)
            except NotFound:
                # the crawler's blob expired before we ran: fetching again is the only way
                return await self._fetch_failed_for_now(msg, url, kind, now)
        max_bytes = self.max_video_bytes if kind == MediaKind.video else self.max_image_bytes
        data = body or b""
        if len(data) > _OFFLOAD_BYTES:
            verdict, sha = await asyncio.to_thread(self._check, data, max_bytes, kind)
        else:
            verdict, sha = self._check(data, max_bytes, kind)
        if not verdict.ok:
            assert verdict.refusal is not None
            if purge:
                return await self._purged(url, kind, verdict.refusal.value, now)
            return await self._failed(url, kind, verdict.refusal.value, now, self.media.failure_retry_s)
        key = media_key(sha, verdict.ext, kind)
        replaces = None
        if recheck:
            prev = await self.images.get(url)
            if prev is not None and prev.sha256 == sha:  # the same bytes: nothing changed
                await self.images.record_checked(url, now, **_validators(msg), recheck_at=self._recheck_at(msg, now))
                return []
            replaces = prev.cdn_url if prev is not None else None
        widths = widths_for(verdict.width, verdict.mime) if kind == MediaKind.image else ()
        if key not in self._known:  # see step 3 of the module docstring
            if len(data) < HEAD_FIRST_BYTES or not await self.cdn.exists(key):
                await self.cdn.put(key, data, content_type=verdict.mime, cache_control=CACHE_CONTROL)
                await self._copies(key, data, widths)
            elif widths and not await self.cdn.exists(variant_key(key, widths[-1])):
                await self._copies(key, data, widths)  # stored before copies were made
            self._remember(key)
        cdn_url = self.cdn.public_url(key)
        await self.images.record_ok(
            url,
            cdn_url=cdn_url,
            mime=verdict.mime,
            size=len(data),
            width=verdict.width,
            height=verdict.height,
            sha256=sha,
            now=now,
            variants=widths,
            **_validators(msg),
            recheck_at=self._recheck_at(msg, now),
        )
        cached = MediaCached(
            url=url,
            kind=kind,
            status=MediaStatus.ok,
            cdn_url=cdn_url,
            mime=verdict.mime,
            size=len(data),
            width=verdict.width,
            height=verdict.height,
            sha256=sha,
            variants=list(widths),
            replaces=replaces if replaces != cdn_url else None,
            cached_at=now,
            trace_id=msg.trace_id,
            # a host's logo: the kvwriter renders the host's pages again once it is here
            requesters=[r for r in msg.requesters if r.startswith(BRANDING_PREFIX)][:16],
        )
        return [Output("media.cached", cached, key=url)]

    async def _copies(self, key: str, data: bytes, widths: tuple[int, ...]) -> None:
        """The smaller WebP copies of an image (``shared.images.variants``), beside it in the CDN."""
        if not widths:
            return
        for width, copy in await asyncio.to_thread(resized, data, widths):
            await self.cdn.put(variant_key(key, width), copy, content_type="image/webp", cache_control=CACHE_CONTROL)

    def _check(self, data: bytes, max_bytes: int, kind: MediaKind) -> tuple[Checked, str]:
        verdict = check_media(
            data, max_bytes=max_bytes, max_pixels=self.media.max_pixels, allow_video=kind == MediaKind.video
        )
        return verdict, hashlib.sha256(data).hexdigest() if verdict.ok else ""

    async def _failed(self, url: str, kind: MediaKind, reason: str, now: datetime, retry_s: float) -> list[Output]:
        await self.images.record_failed(url, reason, retry_at=now + timedelta(seconds=retry_s), now=now)
        cached = MediaCached(url=url, kind=kind, status=MediaStatus.failed, reason=reason, cached_at=now)
        return [Output("media.cached", cached, key=url)]

    async def _purged(self, url: str, kind: MediaKind, reason: str, now: datetime) -> list[Output]:
        """A purged image whose source gave no good copy: the copy is dropped and its pages go without it."""
        prev = await self.images.get(url)
        if prev is None or not prev.cdn_url:
            return await self._failed(url, kind, reason, now, self.media.failure_retry_s)
        await self.images.drop_copy(url, reason, retry_at=now + timedelta(seconds=self.media.failure_retry_s), now=now)
        dropped = MediaCached(
            url=url, kind=kind, status=MediaStatus.failed, reason=reason, replaces=prev.cdn_url, cached_at=now
        )
        return [Output("media.cached", dropped, key=url)]

    async def _fetch_failed_for_now(self, msg: CrawlResult, url: str, kind: MediaKind, now: datetime) -> list[Output]:
        done = _retries_done(msg.requesters)
        if done >= self.media.fetch_retries:
            return await self._failed(url, kind, _reason(msg), now, self.media.transient_retry_s)
        requesters = [r for r in msg.requesters if not r.startswith(RETRY_REQUESTER)]
        requesters.append(f"{RETRY_REQUESTER}{done + 1}")
        try:
            host = host_of(url)
        except ValueError:
            return await self._failed(url, kind, "bad_url", now, self.media.failure_retry_s)
        order = CrawlRequest(
            kind=msg.kind,
            url=url,
            host=host,
            requesters=requesters,
            requested_at=now,
            priority=self.media.order_priority,
            trace_id=msg.trace_id,
        )
        return [Output("crawl.requests", order, key=host)]
