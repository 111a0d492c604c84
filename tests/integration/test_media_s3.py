"""The cdn cube's handler into the real SeaweedFS: dedupe, and S3 going away mid-run (docs/architecture.md section 9).

"S3 stopped" is played by a TCP proxy in front of the shared SeaweedFS (stopping the
shared server would break other people's tests): closing the proxy drops every
connection and refuses new ones, exactly what the client sees of a dead server;
opening it again on the same port is the server coming back.
"""

from __future__ import annotations

import asyncio
import io
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from botocore.config import Config
from PIL import Image

from cubes.cdn.handler import CdnHandler
from shared.blobs.file import FileBlobStore
from shared.blobs.s3 import open_s3
from shared.clock import ManualClock
from shared.config import Settings
from shared.errors import BlobUnavailable, is_retriable
from shared.messages import CrawlKind, CrawlResult, FetchStatus, MediaCached, MediaStatus
from shared.runtime.cube import Context
from shared.stores import ImageStatus, Stores, open_stores

pytestmark = pytest.mark.s3

CTX = Context(topic="crawl.images", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


class TcpProxy:
    """127.0.0.1:<port> -> target, which can be stopped (connections cut) and started again."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for w in self._writers:
                w.transport.abort()
            self._writers.clear()
            await self._server.wait_closed()
            self._server = None


def png(seed: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (16, 9), (seed % 256, 40, 90)).save(buf, "PNG")
    return buf.getvalue()


def crawl_result(url: str, body: bytes) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.image,
        url=url,
        host=url.split("/")[2],
        status=FetchStatus.ok,
        http_status=200,
        content_type="image/png",
        body=body,
        size=len(body),
        fetched_at=datetime.now(UTC),
    )


def boto(endpoint: str):  # type: ignore[no-untyped-def]
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="turbocubes",
        aws_secret_access_key="turbocubes",
        config=Config(s3={"addressing_style": "path"}),
    )


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[Stores]:
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield stores
    finally:
        await stores.close()


async def test_same_bytes_from_two_urls_are_one_s3_object(
    s3_url: str, uid: str, registry: Stores, tmp_path: Path
) -> None:
    endpoint = parse_qs(urlsplit(s3_url).query)["endpoint"][0]
    bucket = f"tc-{uid}"
    cdn = await open_s3(f"s3://{bucket}?endpoint={endpoint}")
    try:
        handler = CdnHandler(Settings(), registry.images, cdn, FileBlobStore("file://b", tmp_path / "b"), ManualClock())
        body = png(1)
        a = (await handler.handle(crawl_result("https://a.test/1.png", body), CTX))[0].message
        b = (await handler.handle(crawl_result("https://b.test/copy.png", body), CTX))[0].message
        assert isinstance(a, MediaCached)
        assert isinstance(b, MediaCached)
        assert a.cdn_url == b.cdn_url
        listing = boto(endpoint).list_objects_v2(Bucket=bucket)
        keys = [o["Key"] for o in listing.get("Contents", [])]
        assert keys == [f"img/{a.sha256[:2]}/{a.sha256}.png"]  # type: ignore[index]
        head = boto(endpoint).head_object(Bucket=bucket, Key=keys[0])
        assert head["ContentType"] == "image/png"
        assert head["CacheControl"] == "public, max-age=31536000, immutable"
    finally:
        await cdn.destroy()  # every bucket is a SeaweedFS collection with volumes: leave none behind
        await cdn.close()


async def test_s3_down_mid_run_is_retried_and_the_image_arrives(
    s3_url: str, uid: str, registry: Stores, tmp_path: Path
) -> None:
    endpoint = parse_qs(urlsplit(s3_url).query)["endpoint"][0]
    target = urlsplit(endpoint)
    proxy = TcpProxy(target.hostname or "127.0.0.1", target.port or 80)
    await proxy.start()
    bucket = f"tc-{uid}"
    cdn = await open_s3(f"s3://{bucket}?endpoint=http://127.0.0.1:{proxy.port}&connect_timeout=1&attempts=1")
    try:
        handler = CdnHandler(Settings(), registry.images, cdn, FileBlobStore("file://b", tmp_path / "b"), ManualClock())
        first = await handler.handle(crawl_result("https://a.test/before.png", png(2)), CTX)
        assert first[0].message.status == MediaStatus.ok  # type: ignore[attr-defined]

        await proxy.stop()  # S3 goes away, pooled connections die with it
        msg = crawl_result("https://a.test/during.png", png(3))
        with pytest.raises(BlobUnavailable) as err:
            await handler.handle(msg, CTX)
        assert is_retriable(err.value)  # the runtime retries it with backoff
        assert await registry.images.get("https://a.test/during.png") is None  # nothing half-recorded

        await proxy.start()  # S3 is back: the runtime's retry of the same message succeeds
        out = await handler.handle(msg, CTX)
        cached = out[0].message
        assert isinstance(cached, MediaCached)
        assert cached.status == MediaStatus.ok
        rec = await registry.images.get("https://a.test/during.png")
        assert rec is not None
        assert rec.status == ImageStatus.ok
        key = cached.cdn_url.split(f"/{bucket}/", 1)[1]  # type: ignore[union-attr]
        assert boto(endpoint).get_object(Bucket=bucket, Key=key)["Body"].read() == png(3)
    finally:
        await cdn.close()
        await proxy.stop()
        # every bucket is a SeaweedFS collection with volumes: leave none behind (directly: the
        # proxy may be down if the test failed half-way)
        direct = await open_s3(f"s3://{bucket}?endpoint={endpoint}")
        await direct.destroy()
        await direct.close()
