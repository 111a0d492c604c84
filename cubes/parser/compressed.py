"""Feeds delivered gzipped as files (``feed.xml.gz``, ``yml.gz``), inflated within a limit (docs/architecture.md
s.3, s.6).

HTTP ``Content-Encoding: gzip`` is undone by the fetcher; this is the other way
feeds come compressed: the body itself is a gzip file (a YML catalog served as
``application/x-gzip``, a file given to ``turbocubes parse``). Such a body is
recognized by its magic bytes (``1f 8b``) and inflated at most to
``limit`` bytes -- the most of a body read whole (``parser.max_body_bytes``) --
so a gzip bomb costs at most that much memory.
"""

from __future__ import annotations

import zlib

__all__ = ["GZIP_MAGIC", "InflateError", "gunzip", "gunzip_head", "is_gzip"]

GZIP_MAGIC = b"\x1f\x8b"
#: zlib's window bits for the gzip container (header and trailer checked)
_GZIP_WBITS = 16 + zlib.MAX_WBITS


class InflateError(ValueError):
    """The gzip body is corrupt, or inflates past the limit; ``code`` is its problem code."""

    def __init__(self, reason: str, code: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


def is_gzip(body: bytes) -> bool:
    return body[:2] == GZIP_MAGIC


def gunzip(body: bytes, limit: int) -> bytes:
    """The inflated body (every gzip member, as ``gzip -d`` does); ``InflateError`` past ``limit``."""
    out: list[bytes] = []
    size = 0
    data = body
    while data:
        inflater = zlib.decompressobj(_GZIP_WBITS)
        try:
            chunk = inflater.decompress(data, limit - size + 1)
        except zlib.error as exc:
            raise InflateError(f"the body is gzip but cannot be inflated: {exc}", "feed.not_readable") from None
        size += len(chunk)
        if size > limit or inflater.unconsumed_tail:
            raise InflateError(
                f"the gzip body inflates to more than {limit} bytes (parser.max_body_bytes)", "fetch.too_large"
            )
        if not inflater.eof:
            raise InflateError("the gzip body is truncated", "feed.not_readable")
        out.append(chunk)
        data = inflater.unused_data if is_gzip(inflater.unused_data) else b""  # concatenated members
    return b"".join(out)


def gunzip_head(body: bytes, size: int) -> bytes:
    """The first ``size`` inflated bytes (for sniffing the format), or b"" when they cannot be read."""
    try:
        return zlib.decompressobj(_GZIP_WBITS).decompress(body, size)
    except zlib.error:
        return b""
