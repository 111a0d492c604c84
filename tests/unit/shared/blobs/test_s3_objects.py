"""shared.blobs.s3_objects against a real aiohttp server on 127.0.0.1 playing a misbehaving S3.

Each route is one way an S3-compatible server answers badly; the real SeaweedFS is in
``tests/integration/test_s3_blobs.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from shared.blobs.s3_objects import BucketMissing, S3Objects
from shared.blobs.sigv4 import SigV4Signer
from shared.errors import BlobUnavailable, ConfigError, NotFound

ERROR = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>{msg}</Message></Error>'


class FakeS3:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []  # method, path, authorization
        self.dropped = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append((request.method, request.path, request.headers.get("Authorization", "")))
        key = request.match_info["key"]
        if key == "drop-once" and self.dropped == 0:
            self.dropped += 1
            assert request.transport is not None
            request.transport.close()  # a pooled keep-alive connection the server closed
            return web.Response(status=200)
        if key == "slow":
            await asyncio.sleep(3.5)  # longer than the client's read timeout: the client gives up first
        if key == "busy":
            return web.Response(
                status=503, text=ERROR.format(code="SlowDown", msg="reduce"), headers={"Retry-After": "7"}
            )
        if key == "denied":
            return web.Response(status=403, text=ERROR.format(code="AccessDenied", msg="bad signature"))
        if key == "nobucket":
            return web.Response(status=404, text=ERROR.format(code="NoSuchBucket", msg="gone"))
        if key == "nokey":
            return web.Response(status=404, text=ERROR.format(code="NoSuchKey", msg="none"))
        body = await request.read()
        return web.Response(status=200, body=body or b"stored")


@pytest.fixture
async def s3() -> AsyncIterator[tuple[FakeS3, S3Objects]]:
    fake = FakeS3()
    app = web.Application()
    app.router.add_route("*", "/bucket/{key:.+}", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    objects = S3Objects(
        "s3://bucket?endpoint=...",
        f"http://127.0.0.1:{port}",
        "bucket",
        SigV4Signer("k", "s", "us-east-1"),
        pool=4,
        connect_timeout=1.0,
        read_timeout=1.5,
        attempts=2,
    )
    try:
        yield fake, objects
    finally:
        await objects.close()
        await runner.cleanup()


async def test_put_and_get_are_signed_and_keys_are_encoded(s3: tuple[FakeS3, S3Objects]) -> None:
    fake, objects = s3
    status, body = await objects.request("PUT", "img/a b/ü.jpg", data=b"bytes", headers={"Content-Type": "image/jpeg"})
    assert (status, body) == (200, b"bytes")
    method, path, auth = fake.seen[-1]
    assert (method, path) == ("PUT", "/bucket/img/a b/ü.jpg")  # aiohttp's decoded view of %20 and %C3%BC
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=k/")


async def test_a_dropped_keep_alive_connection_is_tried_again(s3: tuple[FakeS3, S3Objects]) -> None:
    fake, objects = s3
    status, _ = await objects.request("PUT", "drop-once", data=b"x")
    assert status == 200
    assert [m for m, p, _ in fake.seen if p == "/bucket/drop-once"] == ["PUT", "PUT"]


async def test_errors_are_ours(s3: tuple[FakeS3, S3Objects]) -> None:
    _, objects = s3
    with pytest.raises(BlobUnavailable) as busy:
        await objects.request("PUT", "busy", data=b"x")
    assert busy.value.retry_after == 7.0
    with pytest.raises(ConfigError, match=r"cdn\.url.*AccessDenied"):
        await objects.request("GET", "denied")
    with pytest.raises(BucketMissing):
        await objects.request("PUT", "nobucket", data=b"x")
    with pytest.raises(NotFound) as nokey:
        await objects.request("GET", "nokey")
    assert not isinstance(nokey.value, BucketMissing)
    with pytest.raises(BlobUnavailable, match="slow"):
        await objects.request("GET", "slow")
