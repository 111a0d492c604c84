"""shared.blobs.file: keys checked lexically (never outside the root), atomic writes, its own thread pool."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared.blobs.file import IO_THREADS, FileBlobStore
from shared.errors import BlobUnavailable, NotFound


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[FileBlobStore]:
    s = FileBlobStore("file://cdn", tmp_path / "cdn", "/cdn")
    yield s
    await s.close()


async def test_put_get_exists_delete_round_trip(store: FileBlobStore) -> None:
    assert await store.put("img/ab/abc.jpg", b"\xff\xd8 bytes") == "img/ab/abc.jpg"
    assert await store.get("img/ab/abc.jpg") == b"\xff\xd8 bytes"
    assert await store.exists("img/ab/abc.jpg")
    assert store.path("img/ab/abc.jpg") == (store.root / "img/ab/abc.jpg").resolve()
    await store.put("img/ab/abc.jpg", b"new")  # overwrites
    assert await store.get("img/ab/abc.jpg") == b"new"
    await store.delete("img/ab/abc.jpg")
    assert not await store.exists("img/ab/abc.jpg")
    await store.delete("img/ab/abc.jpg")  # deleting nothing is fine
    with pytest.raises(NotFound):
        await store.get("img/ab/abc.jpg")


async def test_no_temp_file_is_left_and_the_mode_is_the_owners(store: FileBlobStore) -> None:
    for i in range(20):
        await store.put(f"img/{i % 3:02x}/{i}.jpg", b"x" * (i * 1000))
    files = sorted(p for p in store.root.rglob("*") if p.is_file())
    assert [p.name for p in files if p.name.startswith(".tmp")] == []
    assert len(files) == 20
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}
    assert (store.root / "img/01/19.jpg").read_bytes() == b"x" * 19_000


@pytest.mark.parametrize(
    "key",
    ["../outside.txt", "img/../../outside.txt", "/etc/passwd", "//etc/passwd", "..", ".", "", "a\x00b", "img/.."],
)
async def test_keys_outside_the_store_are_refused_before_any_file_access(
    store: FileBlobStore, tmp_path: Path, key: str
) -> None:
    with pytest.raises(NotFound, match="outside the store"):
        store.path(key)
    with pytest.raises(NotFound):
        await store.put(key, b"evil")
    with pytest.raises(NotFound):
        await store.get(key)
    with pytest.raises(NotFound):
        await store.exists(key)
    with pytest.raises(NotFound):
        await store.delete(key)
    assert not (tmp_path / "outside.txt").exists()


async def test_dot_segments_that_stay_inside_are_the_plain_key(store: FileBlobStore) -> None:
    await store.put("img/./x/../ab.jpg", b"inside")
    assert (store.root / "img" / "ab.jpg").read_bytes() == b"inside"
    assert await store.get("img//ab.jpg") == b"inside"


async def test_a_folder_removed_behind_the_stores_back_is_made_again(store: FileBlobStore) -> None:
    await store.put("img/ab/1.jpg", b"one")
    shutil.rmtree(store.root / "img")
    await store.put("img/ab/2.jpg", b"two")
    assert (store.root / "img/ab/2.jpg").read_bytes() == b"two"


async def test_a_failed_write_is_blob_unavailable_and_leaves_no_temp_file(store: FileBlobStore) -> None:
    (store.root / "img").mkdir()
    (store.root / "img" / "dir.jpg").mkdir()  # a directory where the object should go: rename fails
    with pytest.raises(BlobUnavailable):
        await store.put("img/dir.jpg", b"x")
    assert [p.name for p in (store.root / "img").iterdir()] == ["dir.jpg"]


async def test_writes_run_on_the_stores_own_threads(store: FileBlobStore, monkeypatch: pytest.MonkeyPatch) -> None:
    names: list[str] = []
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        names.append(threading.current_thread().name)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    for i in range(IO_THREADS * 2):
        await store.put(f"img/{i}.jpg", b"x")
    assert len(names) == IO_THREADS * 2
    assert all(n.startswith("blobs-file") for n in names)
    assert threading.current_thread().name not in names


async def test_a_store_is_usable_after_close(store: FileBlobStore) -> None:
    await store.put("a.bin", b"1")
    await store.close()
    await store.put("b.bin", b"2")
    assert await store.get("b.bin") == b"2"


async def test_big_bodies_go_in_from_a_file_and_come_out_as_one(store: FileBlobStore, tmp_path: Path) -> None:
    src = tmp_path / "catalog.xml"
    src.write_bytes(b"<yml_catalog>" + b"x" * (3 << 20) + b"</yml_catalog>")  # past one copy chunk
    assert await store.put_file("crawl/feed/abc", src, content_type="application/xml") == "crawl/feed/abc"
    assert src.exists()  # the caller's file is left alone
    async with store.local_copy("crawl/feed/abc") as path:
        assert path.read_bytes() == src.read_bytes()
    assert [p.name for p in (store.root / "crawl" / "feed").iterdir()] == ["abc"]  # no temp file left
    with pytest.raises(NotFound):
        async with store.local_copy("crawl/feed/none"):
            pass
