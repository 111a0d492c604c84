"""A response body that moves to disk once it is big (docs/architecture.md section 4: "bodies too large for a
message travel as blob references": huge catalogs in bounded memory).

The fetcher reads a body in chunks into a ``BodySink``. Up to ``spill_over`` bytes stay in memory
(an ordinary feed, page or image: one join at the end, as before). Past that, what was read and
everything after it go to a temporary file, and the sha256 of the whole body is computed on the way
(the crawler keys blobs by it), so a shop's catalog of several hundred megabytes costs one chunk of
memory, not its size. Disk writes are gathered into pieces of ``_FLUSH`` bytes and each piece is
written on a worker thread: a write that waits for the disk never stalls the event loop.

Whoever gets ``path`` owns the file and deletes it (the crawler does, once the blob store has it);
``discard`` removes it when the fetch fails half-way.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["BodySink"]

#: bytes gathered before one write to the file (few syscalls and thread hops, bounded memory)
_FLUSH = 1 << 20


class BodySink:
    """Collects one body: in memory up to ``spill_over`` bytes, then in a temporary file."""

    def __init__(self, spill_over: int | None) -> None:
        self.spill_over = spill_over
        self.size = 0
        self._parts: list[bytes] = []
        self._pending = 0
        self._fd: int | None = None
        self.path: Path | None = None
        self._sha: hashlib._Hash | None = None

    async def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        self._parts.append(chunk)
        self._pending += len(chunk)
        if self._fd is None and self.spill_over is not None and self.size > self.spill_over:
            await self._open()
        if self._fd is not None and self._pending >= _FLUSH:
            await self._flush()

    async def _open(self) -> None:
        fd, name = await asyncio.to_thread(tempfile.mkstemp, prefix="tc-body-")
        self._fd, self.path = fd, Path(name)
        self._sha = hashlib.sha256()

    async def _flush(self) -> None:
        assert self._fd is not None
        assert self._sha is not None
        data = b"".join(self._parts)
        self._parts.clear()
        self._pending = 0
        self._sha.update(data)
        await asyncio.to_thread(_write_all, self._fd, data)

    async def finish(self) -> bytes | None:
        """The body in memory, or None when it went to ``path`` (then ``sha256`` is set)."""
        if self._fd is None:
            body = b"".join(self._parts)
            self._parts.clear()
            return body
        await self._flush()
        fd, self._fd = self._fd, None
        await asyncio.to_thread(os.close, fd)
        return None

    @property
    def sha256(self) -> str | None:
        return self._sha.hexdigest() if self._sha is not None and self._fd is None else None

    async def discard(self) -> None:
        """Drop what was collected, and the file if there is one."""
        self._parts.clear()
        fd, self._fd = self._fd, None
        path, self.path = self.path, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        if path is not None:
            await asyncio.to_thread(path.unlink, True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
