"""``open_blobs(url)``: the blob store engine named by the URL's scheme."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from shared.blobs.base import BlobStore
from shared.errors import ConfigError

__all__ = ["BlobStore", "open_blobs"]


async def open_blobs(url: str, *, public_base_url: str = "/cdn") -> BlobStore:
    scheme = urlsplit(url).scheme
    if scheme == "file":
        from shared.blobs.file import FileBlobStore

        # file://var/cdn is relative to the working directory, file:///srv/cdn absolute
        rest = url[len("file://") :]
        return FileBlobStore(url, Path(rest), public_base_url)
    if scheme == "s3":
        from shared.blobs.s3 import open_s3

        return await open_s3(url, public_base_url=public_base_url)
    raise ConfigError("cdn.url", url, "file://PATH or s3://BUCKET?endpoint=URL", ["file", "s3"])
