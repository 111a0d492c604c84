"""The image registry's contract: source image URL -> its state in the CDN (DESIGN.md section 3).

Media asks it which images are cached and orders the missing ones
(``mark_ordered`` lets exactly one caller order an image); cdn records the
outcome; delay reads it. One implementation for both engines: ``sql/images.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

__all__ = ["ImageRecord", "ImageRegistry", "ImageStatus"]


class ImageStatus(StrEnum):
    pending = "pending"  # ordered, not cached yet
    ok = "ok"
    failed = "failed"


@dataclass(frozen=True, slots=True)
class ImageRecord:
    url: str  # the source URL of the image
    status: ImageStatus
    cdn_url: str | None = None
    reason: str | None = None  # why it failed: 404, not_an_image, too_large, ...
    mime: str | None = None
    size: int = 0
    width: int | None = None
    height: int | None = None
    sha256: str | None = None
    updated_at: datetime | None = None
    retry_after: datetime | None = None  # a failed image may be ordered again after this
    ordered_at: datetime | None = None
    #: widths of the smaller copies the cdn cube made beside it (``shared.variants``); () for none
    variants: tuple[int, ...] = ()


class ImageRegistry(Protocol):
    """Source image URL -> its state in the CDN."""

    async def get(self, url: str) -> ImageRecord | None: ...

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        """Records of those ``urls`` that have one (missing URLs are absent from the dict)."""
        ...

    async def record_ok(
        self,
        url: str,
        *,
        cdn_url: str,
        mime: str | None = None,
        size: int = 0,
        width: int | None = None,
        height: int | None = None,
        sha256: str | None = None,
        now: datetime | None = None,
        variants: tuple[int, ...] = (),
    ) -> None: ...

    async def record_failed(
        self, url: str, reason: str, retry_at: datetime | None = None, *, now: datetime | None = None
    ) -> None:
        """Mark failed; ``retry_at`` (None: never) is when it may be ordered again."""
        ...

    async def mark_ordered(self, url: str, now: datetime, *, window_s: float = 3600.0) -> bool:
        """True only for the first caller that should order ``url`` (then it is ``pending``).

        False when it is ``ok``, ``failed`` with ``retry_after`` not yet passed (or None), or
        ``pending`` and ordered less than ``window_s`` ago (a lost order is re-sent after the window).
        """
        ...

    async def mark_ordered_many(self, urls: Iterable[str], now: datetime, *, window_s: float = 3600.0) -> set[str]:
        """``mark_ordered`` of each URL (a document's missing images): the URLs this caller should order."""
        ...
