"""The S3 data plane: object PUT / GET / HEAD / DELETE over aiohttp (docs/architecture.md section 4).

``S3BlobStore`` (``s3.py``) keeps boto3 for the control plane (bucket checks and creation,
destroying a bucket) and sends every object request through this module. Why: boto3 is blocking,
so each ``put_object`` ran on a worker thread, built a whole botocore request model, and passed the
GIL back and forth with the event loop — about 1 ms of CPU per image here even on a quiet machine
(3 ms under the pipeline's load). aiohttp on the loop with the lean signer in ``sigv4.py`` costs a
fraction of that (``bench/media.py`` prints both, same run, same server).

Errors are ours (docs/conventions.md rule 4): connection failures, timeouts, 5xx and throttling ->
``BlobUnavailable`` (retriable); 404 -> ``NotFound`` (``BucketMissing`` when the S3 error code says
the bucket, not the key, is gone); 401 / 403 and other refusals -> ``ConfigError`` naming
``cdn.url``. A request that fails in transport is tried again at once up to ``attempts`` times in
all: every object request is idempotent, and the usual cause is a pooled keep-alive connection the
server closed meanwhile.

Every request is counted in ``turbocubes_s3_requests_total{method, outcome}``, so benches and
dashboards see S3 requests per image.
"""

from __future__ import annotations

import asyncio
import io
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO
from urllib.parse import quote, urlsplit

import aiohttp
from lxml import etree
from prometheus_client import Counter

from shared.blobs.sigv4 import SigV4Signer
from shared.clock import SystemClock
from shared.errors import BlobUnavailable, ConfigError, NotFound
from shared.http.retry_after import parse_retry_after

__all__ = ["MISSING_BUCKET_CODES", "REQUESTS", "THROTTLED_CODES", "BucketMissing", "S3Objects"]

REQUESTS = Counter("turbocubes_s3_requests_total", "S3 object requests sent", ["method", "outcome"])

#: S3 error codes: the bucket is gone; the server asks us to slow down (boto3's control plane uses them too)
MISSING_BUCKET_CODES = frozenset({"NoSuchBucket"})
THROTTLED_CODES = frozenset(
    {"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests"}
)
#: an S3 error document is a few hundred bytes; never read more of one than this
_ERROR_BODY_LIMIT = 64 * 1024


class BucketMissing(NotFound):
    """The bucket (not the key) is gone: the caller may create it again."""


def _error_code(body: bytes) -> tuple[str, str]:
    """``(Code, Message)`` of an S3 XML error document ('' when there is none or it does not parse)."""
    if not body.lstrip().startswith(b"<"):
        return "", ""
    try:
        parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError:
        return "", ""
    return (root.findtext("Code") or "").strip(), (root.findtext("Message") or "").strip()


#: bytes bodies bigger than this are sent as a stream (aiohttp's own threshold for its warning: 1 MiB)
_BYTES_INLINE = 1 << 20
#: a streamed download is written in pieces this big, each on a worker thread (a disk write can stall)
_STREAM_CHUNK = 1 << 20


def _open_sized(path: Path) -> tuple[IO[bytes], int]:
    f = path.open("rb")
    return f, os.fstat(f.fileno()).st_size


async def _stream_to(resp: aiohttp.ClientResponse, opener: Callable[[], IO[bytes]]) -> None:
    loop = asyncio.get_running_loop()
    out = await loop.run_in_executor(None, opener)
    try:
        async for chunk in resp.content.iter_chunked(_STREAM_CHUNK):
            await loop.run_in_executor(None, out.write, chunk)
    finally:
        await loop.run_in_executor(None, out.close)


class S3Objects:
    """Object requests against one bucket of one endpoint, signed with SigV4, on an aiohttp pool."""

    def __init__(
        self,
        url: str,
        endpoint: str,
        bucket: str,
        signer: SigV4Signer,
        *,
        pool: int,
        connect_timeout: float,
        read_timeout: float,
        attempts: int,
    ) -> None:
        self._url = url  # for error messages: the config value, cdn.url
        parts = urlsplit(endpoint)
        self._base = f"{parts.scheme}://{parts.netloc}"
        self._host = parts.netloc
        self._prefix = parts.path.rstrip("/") + "/" + bucket + "/"
        self._signer = signer
        self._pool = pool
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout, sock_read=read_timeout)
        self._attempts = max(1, attempts)
        self._session: aiohttp.ClientSession | None = None

    def _session_now(self) -> aiohttp.ClientSession:
        if self._session is None:  # made on the running loop, at the first request
            connector = aiohttp.TCPConnector(limit=self._pool, limit_per_host=self._pool, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=self._timeout, auto_decompress=False, skip_auto_headers=("User-Agent",)
            )
        return self._session

    async def request(
        self,
        method: str,
        key: str,
        *,
        data: bytes | Path | None = None,
        headers: dict[str, str] | None = None,
        into: Callable[[], IO[bytes]] | None = None,
    ) -> tuple[int, bytes]:
        """Send one request; ``(status, body)`` of a 2xx answer, else the translated error.

        ``data`` may be a file's path: its bytes are streamed from disk (opened again for each
        attempt). ``into`` opens a file the answer's body is streamed to instead of being returned
        (then ``body`` is ``b""``); each attempt opens it afresh.
        """
        path = self._prefix + key
        what = f"{method.lower()} {key}"
        session = self._session_now()
        url = self._base + quote(path, safe="/-_.~")
        for attempt in range(1, self._attempts + 1):
            # the real time, never an injected one: the server refuses a signature far from its own clock
            sent = self._signer.headers(method, self._host, path, SystemClock().now())
            if headers:
                sent.update(headers)
            body_file: IO[bytes] | None = None
            if isinstance(data, Path):
                body_file, size = await asyncio.get_running_loop().run_in_executor(None, _open_sized, data)
                sent["Content-Length"] = str(size)
            elif data is not None and len(data) > _BYTES_INLINE:
                # aiohttp writes big raw bytes in one go (and warns that it may stall the loop); a stream
                # of them is sent in pieces. A fresh one each attempt: a retry starts from the first byte
                body_file = io.BytesIO(data)
                sent["Content-Length"] = str(len(data))
            try:
                async with session.request(
                    method, url, data=body_file or data, headers=sent, allow_redirects=False
                ) as resp:
                    status = resp.status
                    if 200 <= status < 300:
                        if into is not None:
                            await _stream_to(resp, into)
                            body = b""
                        else:
                            body = b"" if method == "HEAD" else await resp.read()
                        REQUESTS.labels(method, "ok").inc()
                        return status, body
                    err = b"" if method == "HEAD" else await resp.content.read(_ERROR_BODY_LIMIT)
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as exc:
                REQUESTS.labels(method, "unreachable").inc()
                if attempt < self._attempts:
                    continue
                raise BlobUnavailable(f"S3 {what}: {type(exc).__name__}: {exc}", retry_after=1.0) from exc
            finally:
                if body_file is not None:
                    body_file.close()
            REQUESTS.labels(method, str(status)).inc()
            raise self._translate(what, status, err, resp.headers.get("Retry-After"))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _translate(self, what: str, status: int, body: bytes, retry_after: str | None) -> Exception:
        code, message = _error_code(body)
        text = f"S3 {what}: {status} {code} {message}".strip()
        if code in MISSING_BUCKET_CODES:
            return BucketMissing(text)
        if status == 404:
            return NotFound(text)
        if status >= 500 or status == 429 or code in THROTTLED_CODES:
            wait = parse_retry_after(retry_after, time.time())
            return BlobUnavailable(text, retry_after=1.0 if wait is None else wait)
        if status in (401, 403):
            return ConfigError("cdn.url", self._url, f"credentials the S3 server accepts ({text})")
        return ConfigError("cdn.url", self._url, f"a request the S3 server accepts ({text})")

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()
            # aiohttp closes its sockets on the next loop turn; without it an "unclosed transport"
            # ResourceWarning can surface in whatever runs next
            await asyncio.sleep(0)
