"""The image registry's contract: source image URL -> its state in the CDN (docs/architecture.md section 3).

Media asks it which images are cached and orders the missing ones
(``mark_ordered`` lets exactly one caller order an image); cdn records the
outcome; delay reads it. One implementation for both engines: ``sql/images.py``.

A cached image is re-checked at its source (a changed source image
refreshes its CDN copy): every check writes when the next one is due
(``recheck_at``: ``media.recheck_s`` after it, or the image's own lifetime as
its response gave it, ``cubes/cdn/handler.py``), the cdn cube's sweep claims
the images due (``claim_rechecks``) and orders a conditional fetch with the
validators of the last one; ``record_checked`` notes a 304 (or the same bytes
again). The kvwriter records which pages show
each CDN copy (``link_pages``), so that a changed image's pages are found
(``pages_using``) and rendered again with the new copy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

__all__ = ["DEFAULT_RECHECK_S", "ImageRecord", "ImageRegistry", "ImageStatus"]

#: when a check names no next one (``recheck_at`` None), it is due this long after it: the default of
#: ``media.recheck_s``, which the cdn cube passes itself
DEFAULT_RECHECK_S = 7 * 86_400.0


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
    #: widths of the smaller copies the cdn cube made beside it (``shared.images.variants``); () for none
    variants: tuple[int, ...] = ()
    #: the validators of the fetch the copy came from (a re-check sends them: a 304 keeps the copy)
    etag: str | None = None
    last_modified: str | None = None
    #: when the source was last asked about it (stored or re-checked)
    checked_at: datetime | None = None
    #: when it is asked about again (the re-check sweep's clock); None for an image not cached
    recheck_at: datetime | None = None


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
        etag: str | None = None,
        last_modified: str | None = None,
        recheck_at: datetime | None = None,
    ) -> None:
        """The image is in the CDN at ``cdn_url`` (checked at its source ``now``), asked about again at
        ``recheck_at`` (None: ``DEFAULT_RECHECK_S`` after ``now``)."""
        ...

    async def record_checked(
        self,
        url: str,
        now: datetime,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        recheck_at: datetime | None = None,
    ) -> None:
        """A re-check found the source unchanged (a 304, or the same bytes): checked ``now``, asked
        about again at ``recheck_at`` (None: ``DEFAULT_RECHECK_S`` after ``now``).

        ``etag`` / ``last_modified``: the validators the answer carried, kept when None.
        """
        ...

    async def claim_rechecks(self, now: datetime, limit: int, *, hold_until: datetime) -> list[ImageRecord]:
        """Up to ``limit`` cached images due a re-check at ``now`` (``recheck_at``), the longest due first,
        marked checked ``now`` and due again at ``hold_until``.

        Marking them is the claim: a second sweep (another replica) does not order them again
        until ``hold_until``; an order whose answer is lost waits until then. A round whose orders
        did not go out makes them due again with ``record_checked(url, now, recheck_at=now)``.
        """
        ...

    async def link_pages(self, links: Iterable[tuple[str, str]]) -> None:
        """Record (CDN URL, page URL) pairs: the page shows that copy. Idempotent."""
        ...

    async def pages_using(self, cdn_url: str) -> list[str]:
        """The pages recorded as showing ``cdn_url`` (some may have changed since: check them)."""
        ...

    async def record_failed(
        self, url: str, reason: str, retry_at: datetime | None = None, *, now: datetime | None = None
    ) -> None:
        """Mark failed; ``retry_at`` (None: never) is when it may be ordered again."""
        ...

    async def drop_copy(
        self, url: str, reason: str, retry_at: datetime | None = None, *, now: datetime | None = None
    ) -> None:
        """Mark failed even when cached, forgetting its copy (a purge whose source gave no good image: the
        one way an ``ok`` record turns into another; the copy's bytes stay in the CDN)."""
        ...

    async def mark_ordered(
        self, url: str, now: datetime, *, window_s: float = 3600.0, failed_before: datetime | None = None
    ) -> bool:
        """True only for the first caller that should order ``url`` (then it is ``pending``).

        False when it is ``ok``, ``failed`` with ``retry_after`` not yet passed (or None) -- unless it
        failed at or before ``failed_before`` (the webmaster asked to see a fix then: "fetch now", a
        check) -- or ``pending`` and ordered less than ``window_s`` ago (a lost order is re-sent after
        the window).
        """
        ...

    async def mark_ordered_many(
        self, urls: Iterable[str], now: datetime, *, window_s: float = 3600.0, failed_before: datetime | None = None
    ) -> set[str]:
        """``mark_ordered`` of each URL (a document's missing images): the URLs this caller should order."""
        ...
