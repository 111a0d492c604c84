"""shared.blobs.s3 against the real SeaweedFS started by ops/s3/start (docs/architecture.md section 9)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

from shared.blobs.s3 import S3BlobStore, open_s3
from shared.errors import ConfigError, NotFound

pytestmark = pytest.mark.s3


def with_bucket(s3_url: str, bucket: str, endpoint: str | None = None) -> str:
    """``s3_url`` pointed at another bucket (and endpoint): each test gets a fresh bucket."""
    parts = urlsplit(s3_url)
    query = parse_qs(parts.query)
    endpoint = endpoint or query["endpoint"][0]
    return f"s3://{bucket}?endpoint={endpoint}"


def endpoint_of(s3_url: str) -> str:
    return parse_qs(urlsplit(s3_url).query)["endpoint"][0]


@pytest.fixture
async def store(s3_url: str, uid: str) -> AsyncIterator[S3BlobStore]:
    s = await open_s3(with_bucket(s3_url, f"tc-{uid}"))  # a new bucket: created by open_s3
    try:
        yield s
    finally:
        await s.destroy()  # every bucket is a SeaweedFS collection with volumes: leave none behind
        await s.close()


async def test_put_get_exists_delete(store: S3BlobStore) -> None:
    key = "img/ab/abcdef.png"
    assert not await store.exists(key)
    assert await store.put(key, b"\x89PNG-bytes", content_type="image/png", cache_control="public, max-age=60") == key
    assert await store.exists(key)
    assert await store.get(key) == b"\x89PNG-bytes"
    await store.put(key, b"second")  # overwrite
    assert await store.get(key) == b"second"
    await store.delete(key)
    assert not await store.exists(key)
    with pytest.raises(NotFound):
        await store.get(key)
    await store.delete(key)  # deleting nothing is fine


async def test_public_url_serves_the_object_with_its_headers(store: S3BlobStore, s3_url: str) -> None:
    key = "img/cd/cdef.jpg"
    await store.put(key, b"jpeg-bytes", content_type="image/jpeg", cache_control="public, max-age=31536000, immutable")
    url = store.public_url(key)
    assert url == f"{endpoint_of(s3_url)}/{store.bucket}/{key}"
    async with aiohttp.ClientSession() as http, http.get(url) as resp:  # anonymous, like a browser
        assert resp.status == 200
        assert await resp.read() == b"jpeg-bytes"
        assert resp.headers["Content-Type"] == "image/jpeg"
        assert resp.headers["Cache-Control"] == "public, max-age=31536000, immutable"


async def test_public_base_url_when_configured(s3_url: str, uid: str) -> None:
    s = await open_s3(with_bucket(s3_url, f"tc-{uid}"), public_base_url="https://cdn.example.test/")
    try:
        assert s.public_url("img/a.jpg") == "https://cdn.example.test/img/a.jpg"
    finally:
        await s.destroy()
        await s.close()


async def test_missing_bucket_is_created_again_on_put(store: S3BlobStore) -> None:
    await store.put("a", b"1")
    await store.delete("a")
    # the server lost the bucket (a throwaway SeaweedFS restarted with an empty data dir)
    client = store._client
    client.delete_bucket(Bucket=store.bucket)
    await store.put("b", b"2")
    assert await store.get("b") == b"2"


async def test_destroy_removes_objects_and_bucket(s3_url: str, uid: str) -> None:
    s = await open_s3(with_bucket(s3_url, f"tc-{uid}"))
    try:
        for i in range(3):
            await s.put(f"k/{i}", b"x")
        await s.destroy()
        assert not await s.exists("k/0")
        await s.destroy()  # twice is fine
        await s.put("again", b"y")  # and the store is usable again: the bucket comes back
        assert await s.get("again") == b"y"
    finally:
        await s.destroy()
        await s.close()


async def test_keys_that_need_encoding_round_trip(store: S3BlobStore) -> None:
    # the data plane signs and sends the path itself: a key with spaces, "+" and non-ASCII must work
    key = "blobs/feeds/a b+c/ümlaut~x.xml"
    await store.put(key, b"<rss/>", content_type="application/xml")
    assert await store.exists(key)
    assert await store.get(key) == b"<rss/>"
    await store.delete(key)
    assert not await store.exists(key)


async def test_a_wrong_secret_is_a_config_error_naming_the_key(store: S3BlobStore, s3_url: str) -> None:
    await store.put("img/x.jpg", b"x")
    wrong = with_bucket(s3_url, store.bucket) + "&access_key=turbocubes&secret_key=wrong"
    with pytest.raises(ConfigError, match=r"cdn\.url"):  # at start: the control plane's bucket check
        await open_s3(wrong)
    bad = S3BlobStore(wrong)  # and on the data plane, for a store that opened before the change
    try:
        with pytest.raises(ConfigError, match=r"cdn\.url.*403"):
            await bad.get("img/x.jpg")
    finally:
        await bad.close()


async def test_big_bodies_stream_in_from_a_file_and_out_to_one(store: S3BlobStore, tmp_path: Path) -> None:
    src = tmp_path / "catalog.xml"
    src.write_bytes(b"<yml_catalog>" + bytes(range(256)) * (12 << 12) + b"</yml_catalog>")  # ~12 MB
    await store.put_file("crawl/feed/big", src, content_type="application/xml")
    async with store.local_copy("crawl/feed/big") as path:
        assert path.stat().st_size == src.stat().st_size
        assert path.read_bytes() == src.read_bytes()
        kept = path
    assert not kept.exists()  # the temporary copy is gone with the block
    with pytest.raises(NotFound):
        async with store.local_copy("crawl/feed/none"):
            pass


async def test_a_big_bytes_body_goes_out_as_a_stream(store: S3BlobStore) -> None:
    # aiohttp warns (an error under our pytest settings) when raw bytes over 1 MiB are sent in one go
    data = bytes(range(256)) * 12_288  # 3 MiB
    await store.put("blobs/big.bin", data)
    assert await store.get("blobs/big.bin") == data
