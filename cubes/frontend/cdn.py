"""The embedded file CDN served under ``/cdn/`` (docs/architecture.md section 4, "blobs / CDN").

Keys are content-addressed (``img/ab/abcdef….jpg``: a new file gets a new
name), so a served file never changes and may be cached for a year. A key is
checked before it reaches the file system: plain path characters only, no
empty, dot or dot-dot segment, so nothing outside the CDN directory can be
named. Files are served with a type from an explicit table and a policy that
keeps an SVG from running script on our origin.
"""

from __future__ import annotations

import re

from aiohttp import web

from shared.blobs.base import BlobStore
from shared.errors import NotFound

__all__ = ["CONTENT_TYPES", "CdnFiles", "safe_key"]

#: One year, immutable: the key changes whenever the content does.
_CACHE = "public, max-age=31536000, immutable"
#: A served file is a document of its own: it may show itself and nothing else (an SVG stays inert).
_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; media-src 'self'; sandbox"
_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,511}")

CONTENT_TYPES = {
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "png": "image/png",
    "gif": "image/gif",
    "webp": "image/webp",
    "avif": "image/avif",
    "svg": "image/svg+xml",
    "ico": "image/x-icon",
    "bmp": "image/bmp",
    "mp4": "video/mp4",
    "webm": "video/webm",
    "mov": "video/quicktime",
}


def safe_key(key: str) -> bool:
    """True for a key that names a file inside the store (no traversal, no hidden files)."""
    if not _KEY.fullmatch(key):
        return False
    return all(seg and not seg.startswith(".") for seg in key.split("/"))


class CdnFiles:
    def __init__(self, store: BlobStore) -> None:
        self.store = store

    async def serve(self, key: str) -> web.Response | None:
        """The file's response, or None when the key is refused or names no file."""
        if not safe_key(key):
            return None
        try:
            data = await self.store.get(key)
        except NotFound:
            return None
        ext = key.rsplit(".", 1)[-1].lower() if "." in key.rsplit("/", 1)[-1] else ""
        headers = {
            "Cache-Control": _CACHE,
            "Content-Security-Policy": _CSP,
            "X-Content-Type-Options": "nosniff",
            "Content-Type": CONTENT_TYPES.get(ext, "application/octet-stream"),
        }
        return web.Response(body=data, headers=headers)
