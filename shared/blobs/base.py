"""Blob stores (docs/architecture.md section 4): the CDN for media, and large message bodies.

Engines by URL scheme: ``file://var/cdn`` (embedded; the frontend serves it
under ``/cdn/``) and ``s3://bucket?endpoint=http://127.0.0.1:8333`` (boto3).
Keys are relative paths such as ``img/ab/abcdef….jpg``.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

__all__ = ["BlobStore"]


class BlobStore(Protocol):
    url: str

    async def put(
        self,
        key: str,
        data: bytes,
        *,
        content_type: str | None = None,
        cache_control: str | None = None,
    ) -> str:
        """Store ``data`` under ``key`` (overwriting); returns ``key``. ``BlobUnavailable`` when down."""
        ...

    async def get(self, key: str) -> bytes:
        """The bytes under ``key``; ``NotFound`` when there are none."""
        ...

    async def put_file(self, key: str, path: Path, *, content_type: str | None = None) -> str:
        """Store the bytes of the file at ``path`` under ``key`` (overwriting) without holding them in
        memory: big bodies (a shop's whole catalog) arrive on disk. ``path`` is left as it was."""
        ...

    def local_copy(self, key: str) -> AbstractAsyncContextManager[Path]:
        """``async with store.local_copy(key) as path``: a local file with the bytes under ``key`` for
        as long as the block runs, to be read as a stream (the embedded store hands its own file, S3
        streams the object into a temporary one). ``NotFound`` when there are none."""
        ...

    async def exists(self, key: str) -> bool: ...

    async def delete(self, key: str) -> None: ...

    def public_url(self, key: str) -> str:
        """The URL under which a browser fetches ``key``."""
        ...

    async def close(self) -> None: ...
