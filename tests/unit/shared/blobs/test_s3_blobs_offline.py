"""shared.blobs.s3 with no server: URL parsing, public URLs, "S3 down" -> BlobUnavailable (retriable)."""

from __future__ import annotations

import socket

import pytest

from shared.blobs import open_blobs
from shared.blobs.s3 import S3BlobStore, open_s3
from shared.errors import BlobUnavailable, ConfigError, is_retriable


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_public_url_uses_the_configured_base_or_the_endpoint() -> None:
    direct = S3BlobStore("s3://media?endpoint=http://127.0.0.1:18333/")
    assert direct.public_url("img/ab/abc.jpg") == "http://127.0.0.1:18333/media/img/ab/abc.jpg"
    fronted = S3BlobStore("s3://media?endpoint=http://127.0.0.1:18333", "https://cdn.example/")
    assert fronted.public_url("img/ab/abc.jpg") == "https://cdn.example/img/ab/abc.jpg"


@pytest.mark.parametrize(
    "url",
    [
        "s3://?endpoint=http://127.0.0.1:1",  # no bucket
        "s3://bucket/extra/path?endpoint=http://127.0.0.1:1",
        "s3://bucket?endpoint=ftp://127.0.0.1:1",
        "s3://bucket?endpoint=http://127.0.0.1:1&pool=many",
        "s3://bucket?endpoint=http://127.0.0.1:1&connect_timeout=0",
    ],
)
def test_bad_urls_fail_naming_the_key(url: str) -> None:
    with pytest.raises(ConfigError, match=r"cdn\.url"):
        S3BlobStore(url)


async def test_s3_down_is_retriable_and_open_does_not_fail() -> None:
    url = f"s3://media?endpoint=http://127.0.0.1:{closed_port()}&connect_timeout=0.5&attempts=1"
    store = await open_s3(url)  # S3 down at start is not fatal
    try:
        with pytest.raises(BlobUnavailable) as err:
            await store.put("img/a.jpg", b"x", content_type="image/jpeg")
        assert is_retriable(err.value)
        with pytest.raises(BlobUnavailable):
            await store.exists("img/a.jpg")
        with pytest.raises(BlobUnavailable):
            await store.get("img/a.jpg")
    finally:
        await store.close()


async def test_open_blobs_picks_s3_by_scheme() -> None:
    store = await open_blobs(f"s3://media?endpoint=http://127.0.0.1:{closed_port()}&connect_timeout=0.2&attempts=1")
    try:
        assert isinstance(store, S3BlobStore)
    finally:
        await store.close()
