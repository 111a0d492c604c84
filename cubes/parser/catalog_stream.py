"""A big body on disk, read as a stream (docs/architecture.md section 4: bodies too large for a message travel as
blob references: huge catalogs in bounded memory).

The crawler streams a body over ``crawler.inline_body_max`` to the blob store; the parser gets it back
as a local file (``BlobStore.local_copy``). A YML catalog of a million offers is hundreds of megabytes:
it is never read into memory. ``catalog_opener`` sniffs the file's head and, when it is a catalog that
lxml can read as it is, returns how to open it as a stream (inflating a gzip file on the way, bounded).
``UrlIndex`` is the duplicate-link check across a whole catalog in a fixed few bytes per offer.

Why some catalogs still go the whole-body way: ``detect.prepare_xml`` decides a charset by looking
at the whole body (a UTF-8 declaration over bytes that are not UTF-8, UTF-16 without a BOM, a charset
only in the HTTP header) and re-encodes it for lxml. A stream can only trust what its head says: a BOM,
an XML declaration naming a charset lxml knows, or no declaration over a head that is plain UTF-8
(XML's default). Anything else is read whole, within ``Limits.max_body_bytes``, exactly as before.
"""

from __future__ import annotations

import gzip
import io
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import IO

import xxhash

from cubes.parser.compressed import GZIP_MAGIC, InflateError
from cubes.parser.detect import detect_format, stream_encoding
from cubes.parser.model import DetectedFormat

__all__ = ["HEAD_BYTES", "STREAM_LIMIT", "UrlIndex", "catalog_opener"]

#: what is sniffed: the format and the charset are both decided within the first few KB
HEAD_BYTES = 64 * 1024
#: the most bytes a streamed catalog may inflate to (a gzip bomb stops here): memory is not the limit
#: on a stream, time is -- 4 GiB of XML is several million offers, minutes of parsing
STREAM_LIMIT = 4 << 30


class UrlIndex:
    """URL -> index of the first offer that had it, for a whole catalog: the duplicate-link check.

    A dict of the URLs costs ~180 bytes an offer (~180 MB for a million), a dict of their hashes still
    ~100 (every int is an object). This is an open-addressing table of 64-bit xxh3 hashes in flat
    arrays, linear probing at most half full: 24 bytes a slot, ~25 MB for a million offers. A
    collision among a million URLs is ~3e-8 likely and would only report a duplicate that is not one.
    Same interface as the dict ``prepare_items`` takes (``FirstSeen``).
    """

    __slots__ = ("_keys", "_mask", "_size", "_vals")

    def __init__(self, capacity: int = 1 << 12) -> None:
        self._keys = array("Q", bytes(8 * capacity))  # 0 = an empty slot (a zero hash is stored as 1)
        self._vals = array("q", bytes(8 * capacity))
        self._mask = capacity - 1
        self._size = 0

    @staticmethod
    def _hash(url: str) -> int:
        return xxhash.xxh3_64_intdigest(url.encode("utf-8", "surrogatepass")) or 1

    def _slot(self, h: int) -> int:
        keys, mask = self._keys, self._mask
        i = h & mask
        while (k := keys[i]) != h and k != 0:
            i = (i + 1) & mask
        return i

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self._keys[self._slot(self._hash(url))] != 0

    def __getitem__(self, url: str) -> int:
        i = self._slot(self._hash(url))
        if self._keys[i] == 0:
            raise KeyError(url)
        return self._vals[i]

    def __setitem__(self, url: str, index: int) -> None:
        h = self._hash(url)
        i = self._slot(h)
        if self._keys[i] == 0:
            self._insert(h, i, index)
        else:
            self._vals[i] = index

    def setdefault(self, url: str, index: int) -> int:
        """The index stored for ``url``; ``index``, stored, when there is none (``dict.setdefault``).

        One hash and one probe for the duplicate check's "seen before? else remember it" (``in`` then
        ``[]=`` was two of each, ~1 us an offer).
        """
        h = self._hash(url)
        i = self._slot(h)
        if self._keys[i] != 0:
            return self._vals[i]
        self._insert(h, i, index)
        return index

    def _insert(self, h: int, i: int, index: int) -> None:
        """``h`` -> ``index`` into ``i``, the empty slot ``_slot(h)`` found (the table grown first when half full)."""
        if 2 * (self._size + 1) > len(self._keys):
            self._grow()
            i = self._slot(h)
        self._size += 1
        self._keys[i] = h
        self._vals[i] = index

    def _grow(self) -> None:
        # slot by slot from the old arrays: a list of the entries would be ~100 bytes each for a moment,
        # and the allocator keeps such a peak as the process's size for good
        old_keys, old_vals = self._keys, self._vals
        capacity = 2 * len(old_keys)
        self._keys = array("Q", bytes(8 * capacity))
        self._vals = array("q", bytes(8 * capacity))
        self._mask = capacity - 1
        keys, vals = self._keys, self._vals
        for j, k in enumerate(old_keys):
            if k:
                i = self._slot(k)
                keys[i] = k
                vals[i] = old_vals[j]

    def __len__(self) -> int:
        return self._size


class _Bounded(io.RawIOBase):
    """A stream that raises ``InflateError`` once more than ``limit`` bytes were read from it."""

    def __init__(self, inner: IO[bytes], limit: int) -> None:
        self._inner = inner
        self._limit = limit
        self._read = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._inner.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        pos = self._inner.seek(offset, whence)
        self._read = pos
        return pos

    def tell(self) -> int:
        return self._inner.tell()

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(len(buffer))
        self._read += len(data)
        if self._read > self._limit:
            raise InflateError(
                f"the catalog inflates past {self._limit} bytes (catalog_stream.STREAM_LIMIT)", "feed.too_large"
            )
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


def _head(path: Path) -> tuple[bytes, bool]:
    with path.open("rb") as f:
        raw = f.read(HEAD_BYTES)
    if raw[:2] != GZIP_MAGIC:
        return raw, False
    try:
        with gzip.open(path, "rb") as g:
            return g.read(HEAD_BYTES), True
    except (OSError, EOFError):
        return b"", True  # a broken gzip file: the whole-body path says why


def catalog_opener(path: Path, declared_format: str | None, limit: int) -> Callable[[], IO[bytes]] | None:
    """How to open ``path`` as a stream of a YML catalog lxml reads as it is; None when it is not one.

    ``limit``: the most bytes the stream may yield (a gzip file inflating past it fails with
    ``InflateError``, as a bomb). Blocking (reads the head): call it on a worker thread.
    """
    head, gz = _head(path)
    if not head.strip() or detect_format(head, declared_format) is not DetectedFormat.yml:
        return None
    if stream_encoding(head) is None:
        return None
    if gz:
        return lambda: io.BufferedReader(_Bounded(gzip.open(path, "rb"), limit), 1 << 16)  # type: ignore[arg-type]
    return lambda: path.open("rb")
