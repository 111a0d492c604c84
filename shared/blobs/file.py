"""The embedded blob store: files under a directory (``file://var/cdn``).

Cheap per object, because the cdn cube puts one per image:

* a key is checked *lexically* (``posixpath.normpath``): no syscall, where
  ``Path.resolve()`` costs an ``lstat`` per path component. Absolute keys,
  keys that climb out of the root (``..``), NUL bytes and the root itself are
  refused; a key never reaches the file system before that check;
* a write is a few bare syscalls (``open(O_EXCL)``, ``write``, ``close``,
  ``rename``): no ``mkstemp`` name generation, no buffered file object, and a
  directory is created once per process, not tried again on every put;
* reads and writes run on a small pool of this store's own, not on the
  event loop's default executor that other stores share: a burst of file
  creations (slow on some disks) never queues database calls behind it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import posixpath
import secrets
import shutil
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from shared.errors import BlobUnavailable, NotFound

__all__ = ["IO_THREADS", "FileBlobStore"]

T = TypeVar("T")

#: threads for one store's reads and writes: file creation is kernel work, a few suffice on 2 cores
IO_THREADS = 4
#: directories known to exist; past this many the memory is dropped (and rebuilt by the next puts)
_KNOWN_DIRS = 65_536
#: what a new object's file may be read by: its owner (mkstemp's mode, which the store has always used)
_FILE_MODE = 0o600
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
#: copying a big body in: large reads, few syscalls, bounded memory
_COPY_CHUNK = 1 << 20


class FileBlobStore:
    def __init__(self, url: str, root: Path, public_base_url: str = "/cdn") -> None:
        self.url = url
        self.root = root
        self.public_base_url = public_base_url.rstrip("/")
        self.root.mkdir(parents=True, exist_ok=True)
        # resolved once: keys are then joined to it lexically, whatever the working directory becomes
        self._base = str(root.resolve())
        self._dirs: set[str] = set()
        # temp names unique across threads (the counter) and processes (the token)
        self._tmp_prefix = f".tmp-{secrets.token_hex(6)}-"
        self._tmp_seq = itertools.count()
        self._pool: ThreadPoolExecutor | None = None

    def _file(self, key: str) -> str:
        """The absolute file name of ``key``; ``NotFound`` for a key outside the store."""
        rel = posixpath.normpath(key) if key else "."
        if "\x00" in key or rel.startswith("/") or rel in (".", "..") or rel.startswith("../"):
            raise NotFound(f"blob key {key!r} is outside the store")
        return f"{self._base}/{rel}"

    def path(self, key: str) -> Path:
        """The file for ``key``; a key that climbs out of the root is refused."""
        return Path(self._file(key))

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=IO_THREADS, thread_name_prefix="blobs-file")
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def _put(self, name: str, data: bytes | Path) -> None:
        """Write ``data`` (bytes, or the file at that path, copied) to ``name`` through a temp file."""
        folder = posixpath.dirname(name)
        if folder not in self._dirs:
            os.makedirs(folder, exist_ok=True)
            if len(self._dirs) >= _KNOWN_DIRS:
                self._dirs.clear()
            self._dirs.add(folder)
        while True:
            tmp = f"{folder}/{self._tmp_prefix}{next(self._tmp_seq)}"
            try:
                fd = os.open(tmp, _CREATE, _FILE_MODE)
            except FileExistsError:  # left by a crashed process that drew the same token: next name
                continue
            except FileNotFoundError:  # the folder was removed behind our back: make it again
                self._dirs.discard(folder)
                os.makedirs(folder, exist_ok=True)
                self._dirs.add(folder)
                continue
            break
        # write-then-rename: a reader never sees half a file
        try:
            try:
                if isinstance(data, Path):
                    with data.open("rb") as src, os.fdopen(fd, "wb", closefd=False) as dst:
                        shutil.copyfileobj(src, dst, _COPY_CHUNK)
                else:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, name)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    async def put(
        self, key: str, data: bytes, *, content_type: str | None = None, cache_control: str | None = None
    ) -> str:
        name = self._file(key)
        try:
            await self._run(self._put, name, data)
        except OSError as exc:
            raise BlobUnavailable(f"cannot write {key}: {exc}") from exc
        return key

    async def put_file(self, key: str, path: Path, *, content_type: str | None = None) -> str:
        name = self._file(key)
        try:
            await self._run(self._put, name, path)
        except OSError as exc:
            raise BlobUnavailable(f"cannot write {key}: {exc}") from exc
        return key

    @contextlib.asynccontextmanager
    async def local_copy(self, key: str) -> AsyncIterator[Path]:
        # the store's own file: objects are replaced by rename, never rewritten in place, so a reader
        # that opened it keeps the bytes it opened even if a put of the same key lands meanwhile
        p = self.path(key)
        if not p.is_file():
            raise NotFound(f"no blob {key!r}")
        yield p

    async def get(self, key: str) -> bytes:
        p = self.path(key)
        try:
            return await self._run(p.read_bytes)
        except FileNotFoundError:
            raise NotFound(f"no blob {key!r}") from None

    async def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    async def delete(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    def public_url(self, key: str) -> str:
        return f"{self.public_base_url}/{key}"

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)
