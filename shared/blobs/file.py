"""The embedded blob store: files under a directory (``file://var/cdn``)."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

from shared.errors import BlobUnavailable, NotFound

__all__ = ["FileBlobStore"]


class FileBlobStore:
    def __init__(self, url: str, root: Path, public_base_url: str = "/cdn") -> None:
        self.url = url
        self.root = root
        self.public_base_url = public_base_url.rstrip("/")
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        """The file for ``key``; a key that climbs out of the root is refused."""
        p = (self.root / key).resolve()
        if not p.is_relative_to(self.root.resolve()):
            raise NotFound(f"blob key {key!r} is outside the store")
        return p

    def _put(self, key: str, data: bytes) -> None:
        p = self.path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        # write-then-rename: a reader never sees half a file
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def put(
        self, key: str, data: bytes, *, content_type: str | None = None, cache_control: str | None = None
    ) -> str:
        try:
            await asyncio.to_thread(self._put, key, data)
        except OSError as exc:
            raise BlobUnavailable(f"cannot write {key}: {exc}") from exc
        return key

    async def get(self, key: str) -> bytes:
        p = self.path(key)
        try:
            return await asyncio.to_thread(p.read_bytes)
        except FileNotFoundError:
            raise NotFound(f"no blob {key!r}") from None

    async def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    async def delete(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)

    def public_url(self, key: str) -> str:
        return f"{self.public_base_url}/{key}"

    async def close(self) -> None:
        return None
