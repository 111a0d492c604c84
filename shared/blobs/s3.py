"""The S3 blob store (docs/architecture.md section 4, "blobs / CDN"): any S3-compatible server through boto3.

URL: ``s3://BUCKET?endpoint=http://127.0.0.1:18333&region=us-east-1``. Optional query
keys: ``access_key`` / ``secret_key`` (else ``AWS_ACCESS_KEY_ID`` /
``AWS_SECRET_ACCESS_KEY``, else ``turbocubes`` / ``turbocubes``, the identity
``ops/s3/start`` configures), ``pool`` (connections and worker threads, default 32),
``connect_timeout`` / ``read_timeout`` (seconds) and ``attempts`` (boto3's own
tries per call, default 2: the runtime retries with backoff above us, so a long
in-call retry loop would only hold a key-lane hostage).

Two planes. Object requests (put, get, exists, delete) go through ``s3_objects.py``: aiohttp on
the event loop, signed by ``sigv4.py`` — a fraction of boto3's CPU per request, and no thread hop
(``bench/media.py`` prints both). boto3 keeps the control plane: checking and creating
the bucket, and destroying one; it is blocking, so those calls run on a small thread pool.
Addressing is path-style (``endpoint/bucket/key``), which every S3-compatible server understands
and needs no wildcard DNS.

Errors are ours, never botocore's or aiohttp's (docs/conventions.md rule 4): connection failures, timeouts,
5xx and throttling -> ``BlobUnavailable`` (retriable); 404 -> ``NotFound``;
bad credentials or a refused request -> ``ConfigError`` naming ``cdn.url``.
The bucket is created when missing, at open and again whenever a put finds it
gone (a SeaweedFS restarted with an empty data dir), and an open while the
server is down does not fail: the next put tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, quote, urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, ParamValidationError

from shared.blobs.s3_objects import MISSING_BUCKET_CODES, THROTTLED_CODES, BucketMissing, S3Objects
from shared.blobs.sigv4 import SigV4Signer
from shared.errors import BlobUnavailable, ConfigError, NotFound

__all__ = ["S3BlobStore", "open_s3"]

T = TypeVar("T")

_DEFAULT_KEY = "turbocubes"
#: connections: enough for the cdn cube's key-lanes and a benchmark burst
_DEFAULT_POOL = 32
#: threads for the control plane's blocking boto3 calls (bucket checks, destroy): rare and short
_CONTROL_THREADS = 2
_EXPECTED = "s3://BUCKET?endpoint=http://HOST:PORT[&region=R&access_key=K&secret_key=S]"
_NOT_FOUND = {"404", "NoSuchKey", "NotFound"}


def _one(query: dict[str, list[str]], name: str, default: str | None = None) -> str | None:
    values = query.get(name)
    return values[-1] if values else default


def _number(url: str, query: dict[str, list[str]], name: str, default: float) -> float:
    raw = _one(query, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError("cdn.url", url, f"a number for {name}= ({_EXPECTED})") from None
    if value <= 0:
        raise ConfigError("cdn.url", url, f"a positive {name}=")
    return value


class S3BlobStore:
    """A ``BlobStore`` over one bucket. Build it with ``open_s3``."""

    def __init__(self, url: str, public_base_url: str | None = None) -> None:
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc or parts.path not in ("", "/"):
            raise ConfigError("cdn.url", url, _EXPECTED)
        query = parse_qs(parts.query)
        self.url = url
        self.bucket = parts.netloc
        self.endpoint = (_one(query, "endpoint") or "").rstrip("/") or None
        if self.endpoint is not None and urlsplit(self.endpoint).scheme not in ("http", "https"):
            raise ConfigError("cdn.url", url, f"endpoint= an http(s) URL ({_EXPECTED})")
        self.region = _one(query, "region", "us-east-1")
        self.public_base_url = (public_base_url or "").rstrip("/")
        pool = int(_number(url, query, "pool", _DEFAULT_POOL))
        access_key = _one(query, "access_key") or os.environ.get("AWS_ACCESS_KEY_ID") or _DEFAULT_KEY
        secret_key = _one(query, "secret_key") or os.environ.get("AWS_SECRET_ACCESS_KEY") or _DEFAULT_KEY
        config = Config(
            s3={"addressing_style": "path"},
            max_pool_connections=pool,
            connect_timeout=_number(url, query, "connect_timeout", 3.0),
            read_timeout=_number(url, query, "read_timeout", 15.0),
            retries={"max_attempts": int(_number(url, query, "attempts", 2)), "mode": "standard"},
            # the CRC of every body costs CPU and some S3-compatible servers reject the
            # trailer; integrity is ours anyway (keys are the sha256 of the bytes)
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        self._client: Any = boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=self.region,
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            config=config,
        )
        self._pool = ThreadPoolExecutor(max_workers=_CONTROL_THREADS, thread_name_prefix="s3")
        self._objects = S3Objects(
            url,
            self.endpoint or f"https://s3.{self.region}.amazonaws.com",
            self.bucket,
            SigV4Signer(access_key, secret_key, self.region or "us-east-1"),
            pool=pool,
            connect_timeout=_number(url, query, "connect_timeout", 3.0),
            read_timeout=_number(url, query, "read_timeout", 15.0),
            attempts=int(_number(url, query, "attempts", 2)),
        )
        self._bucket_ready = False
        self._bucket_lock = asyncio.Lock()

    # ------------------------------------------------------------------ plumbing

    async def _call(self, what: str, fn: Callable[[], T]) -> T:
        """Run a blocking boto3 call on our pool and translate its errors."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, fn)
        except ClientError as exc:
            raise self._translate(what, exc) from exc
        except (NoCredentialsError, ParamValidationError) as exc:
            raise ConfigError("cdn.url", self.url, f"usable S3 credentials and parameters ({exc})") from exc
        except BotoCoreError as exc:  # connection refused/reset, timeouts, DNS
            raise BlobUnavailable(f"S3 {what}: {exc}", retry_after=1.0) from exc

    def _translate(self, what: str, exc: ClientError) -> Exception:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        text = f"S3 {what}: {status} {code} {error.get('Message', '')}".strip()
        if code in MISSING_BUCKET_CODES:
            return BucketMissing(text)
        if status == 404 or code in _NOT_FOUND:
            return NotFound(text)
        if status >= 500 or status == 429 or code in THROTTLED_CODES:
            return BlobUnavailable(text, retry_after=1.0)
        if status in (401, 403):
            return ConfigError("cdn.url", self.url, f"credentials the S3 server accepts ({text})")
        return ConfigError("cdn.url", self.url, f"a request the S3 server accepts ({text})")

    async def ensure_bucket(self) -> None:
        """Create the bucket when it does not exist (idempotent; ``BlobUnavailable`` when S3 is down)."""
        async with self._bucket_lock:
            if self._bucket_ready:
                return
            try:
                await self._call("head_bucket", lambda: self._client.head_bucket(Bucket=self.bucket))
            except (NotFound, BucketMissing):
                try:
                    await self._call("create_bucket", lambda: self._client.create_bucket(Bucket=self.bucket))
                except ConfigError as exc:
                    # two processes raced to create it: the loser sees "already owned"
                    if "BucketAlreadyOwnedByYou" not in str(exc) and "BucketAlreadyExists" not in str(exc):
                        raise
            self._bucket_ready = True

    # ------------------------------------------------------------------ BlobStore

    async def put(
        self, key: str, data: bytes, *, content_type: str | None = None, cache_control: str | None = None
    ) -> str:
        if not self._bucket_ready:
            await self.ensure_bucket()
        headers: dict[str, str] = {}
        if content_type:
            headers["Content-Type"] = content_type
        if cache_control:
            headers["Cache-Control"] = cache_control
        try:
            await self._objects.request("PUT", key, data=data, headers=headers)
        except BucketMissing:
            # the server lost its data (a throwaway SeaweedFS restarted): make the bucket again, once
            self._bucket_ready = False
            await self.ensure_bucket()
            await self._objects.request("PUT", key, data=data, headers=headers)
        return key

    async def put_file(self, key: str, path: Path, *, content_type: str | None = None) -> str:
        # one streamed PUT: S3 takes up to 5 GB in one; our bodies are bounded far below that
        if not self._bucket_ready:
            await self.ensure_bucket()
        headers = {"Content-Type": content_type} if content_type else {}
        try:
            await self._objects.request("PUT", key, data=path, headers=headers)
        except BucketMissing:
            self._bucket_ready = False
            await self.ensure_bucket()
            await self._objects.request("PUT", key, data=path, headers=headers)
        return key

    @contextlib.asynccontextmanager
    async def local_copy(self, key: str) -> AsyncIterator[Path]:
        with tempfile.TemporaryDirectory(prefix="tc-s3-") as folder:
            path = Path(folder) / "blob"
            await self._objects.request("GET", key, into=lambda: path.open("wb"))
            yield path

    async def get(self, key: str) -> bytes:
        _, body = await self._objects.request("GET", key)
        return body

    async def exists(self, key: str) -> bool:
        try:
            await self._objects.request("HEAD", key)
        except NotFound:  # the key, or the whole bucket (BucketMissing is a NotFound)
            return False
        return True

    async def delete(self, key: str) -> None:
        with contextlib.suppress(NotFound):
            await self._objects.request("DELETE", key)

    def public_url(self, key: str) -> str:
        if self.public_base_url:
            return f"{self.public_base_url}/{key}"
        base = self.endpoint or f"https://s3.{self.region}.amazonaws.com"
        return f"{base}/{quote(self.bucket)}/{quote(key)}"

    async def destroy(self) -> None:
        """Delete every object and then the bucket (tests and throwaway environments).

        Objects go first, in batches of 1,000 (S3's limit per request): real S3 refuses
        to delete a bucket that is not empty.
        """

        def run() -> None:
            pages = self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket)
            for page in pages:
                keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                if keys:
                    self._client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
            self._client.delete_bucket(Bucket=self.bucket)

        with contextlib.suppress(NotFound):  # no bucket: nothing to destroy (BucketMissing is a NotFound)
            await self._call("destroy bucket", run)
        self._bucket_ready = False

    async def close(self) -> None:
        await self._objects.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()


async def open_s3(url: str, public_base_url: str | None = None) -> S3BlobStore:
    """An ``S3BlobStore`` for ``url``; the bucket is created now if S3 answers, else at the first put.

    ``public_base_url``: the base of public URLs (a CDN in front of the bucket, or the
    frontend's ``/cdn``); empty or None -> ``endpoint/bucket/key``.
    """
    store = S3BlobStore(url, public_base_url)
    try:
        # S3 down at start is not fatal: ``put`` ensures the bucket again
        with contextlib.suppress(BlobUnavailable):
            await store.ensure_bucket()
    except BaseException:
        await store.close()  # a refused identity fails the start; leave no pool or client behind
        raise
    return store
