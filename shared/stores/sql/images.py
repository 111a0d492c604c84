"""The image registry, written once for both engines (docs/architecture.md section 3: media -> cdn -> delay).

Every method is a single statement, so each is atomic on both engines:
``mark_ordered`` is one guarded upsert whose ``RETURNING`` row exists only
for the caller that won the order, however many documents (and processes)
ask for the same image at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from shared.stores.codec import from_us, now_us, to_us
from shared.stores.images import DEFAULT_RECHECK_S, ImageRecord, ImageStatus
from shared.stores.sql.runner import CHUNK, SqlRunner, chunks

__all__ = ["IMAGE_COLUMNS", "SqlImageRegistry", "image_from_row", "recheck_us", "variants_text"]

IMAGE_COLUMNS = (
    "url, status, cdn_url, reason, mime, size, width, height, sha256, updated_at, retry_after, ordered_at, variants,"
    " etag, last_modified, checked_at, recheck_at"
)


def variants_text(widths: tuple[int, ...]) -> str:
    """The ``variants`` column: widths as ``480,960`` ("" for none)."""
    return ",".join(str(w) for w in widths)


def recheck_us(stamp: int, recheck_at: datetime | None) -> int:
    """The ``recheck_at`` column of a check at ``stamp`` (microseconds): as given, or the default period on."""
    given = to_us(recheck_at)
    return given if given is not None else stamp + int(DEFAULT_RECHECK_S * 1_000_000)


def _variants(text: str | None) -> tuple[int, ...]:
    return tuple(int(w) for w in (text or "").split(",") if w.isdigit())


def image_from_row(row: Sequence[Any]) -> ImageRecord:
    return ImageRecord(
        url=row[0],
        status=ImageStatus(row[1]),
        cdn_url=row[2],
        reason=row[3],
        mime=row[4],
        size=row[5] or 0,
        width=row[6],
        height=row[7],
        sha256=row[8],
        updated_at=from_us(row[9]),
        retry_after=from_us(row[10]),
        ordered_at=from_us(row[11]),
        variants=_variants(row[12]),
        etag=row[13],
        last_modified=row[14],
        checked_at=from_us(row[15]),
        recheck_at=from_us(row[16]),
    )


class SqlImageRegistry:
    def __init__(self, runner: SqlRunner) -> None:
        self._sql = runner

    async def get(self, url: str) -> ImageRecord | None:
        row = await self._sql.fetchone(f"SELECT {IMAGE_COLUMNS} FROM images WHERE url = ?", url)
        return None if row is None else image_from_row(row)

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        found: dict[str, ImageRecord] = {}
        for chunk in chunks(list(dict.fromkeys(urls))):
            marks = ", ".join("?" * len(chunk))
            rows = await self._sql.fetch(f"SELECT {IMAGE_COLUMNS} FROM images WHERE url IN ({marks})", *chunk)
            for row in rows:
                found[row[0]] = image_from_row(row)
        return found

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
        stamp = now_us(now)
        await self._sql.execute(
            "INSERT INTO images (url, status, cdn_url, reason, mime, size, width, height, sha256, updated_at,"
            " variants, etag, last_modified, checked_at, recheck_at)"
            " VALUES (?, 'ok', ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (url) DO UPDATE SET status = 'ok', cdn_url = excluded.cdn_url, reason = NULL,"
            " mime = excluded.mime, size = excluded.size, width = excluded.width, height = excluded.height,"
            " sha256 = excluded.sha256, updated_at = excluded.updated_at, retry_after = NULL,"
            " variants = excluded.variants, etag = excluded.etag, last_modified = excluded.last_modified,"
            " checked_at = excluded.checked_at, recheck_at = excluded.recheck_at",
            url,
            cdn_url,
            mime,
            size,
            width,
            height,
            sha256,
            stamp,
            variants_text(variants),
            etag,
            last_modified,
            stamp,
            recheck_us(stamp, recheck_at),
        )

    async def record_checked(
        self,
        url: str,
        now: datetime,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        recheck_at: datetime | None = None,
    ) -> None:
        stamp = now_us(now)
        await self._sql.execute(
            "UPDATE images SET checked_at = ?, recheck_at = ?, etag = COALESCE(?, etag),"
            " last_modified = COALESCE(?, last_modified) WHERE url = ? AND status = 'ok'",
            stamp,
            recheck_us(stamp, recheck_at),
            etag,
            last_modified,
            url,
        )

    async def claim_rechecks(self, now: datetime, limit: int, *, hold_until: datetime) -> list[ImageRecord]:
        # one statement: the rows it returns are this caller's (images_recheck_due finds them in order)
        stamp = now_us(now)
        rows = await self._sql.execute_returning(
            "UPDATE images SET checked_at = ?, recheck_at = ? WHERE url IN (SELECT url FROM images"
            " WHERE status = 'ok' AND recheck_at <= ? ORDER BY recheck_at LIMIT ?)"
            f" AND status = 'ok' AND recheck_at <= ? RETURNING {IMAGE_COLUMNS}",
            stamp,
            to_us(hold_until),
            stamp,
            limit,
            stamp,
        )
        return [image_from_row(row) for row in rows]

    async def link_pages(self, links: Iterable[tuple[str, str]]) -> None:
        pairs = list(dict.fromkeys(links))
        for chunk in chunks(pairs, CHUNK // 2):
            marks = ", ".join("(?, ?)" for _ in chunk)
            await self._sql.execute(
                f"INSERT INTO image_pages (cdn_url, page_url) VALUES {marks} ON CONFLICT DO NOTHING",
                *(value for pair in chunk for value in pair),
            )

    async def pages_using(self, cdn_url: str) -> list[str]:
        rows = await self._sql.fetch("SELECT page_url FROM image_pages WHERE cdn_url = ? ORDER BY page_url", cdn_url)
        return [row[0] for row in rows]

    async def record_failed(
        self, url: str, reason: str, retry_at: datetime | None = None, *, now: datetime | None = None
    ) -> None:
        # A failure never downgrades an image already in the CDN: its copy there stays valid.
        await self._sql.execute(
            "INSERT INTO images (url, status, reason, updated_at, retry_after) VALUES (?, 'failed', ?, ?, ?)"
            " ON CONFLICT (url) DO UPDATE SET status = 'failed', reason = excluded.reason,"
            " updated_at = excluded.updated_at, retry_after = excluded.retry_after"
            " WHERE images.status <> 'ok'",
            url,
            reason,
            now_us(now),
            to_us(retry_at),
        )

    async def drop_copy(
        self, url: str, reason: str, retry_at: datetime | None = None, *, now: datetime | None = None
    ) -> None:
        await self._sql.execute(
            "UPDATE images SET status = 'failed', reason = ?, updated_at = ?, retry_after = ?, cdn_url = NULL,"
            " sha256 = NULL, variants = '', etag = NULL, last_modified = NULL, recheck_at = NULL WHERE url = ?",
            reason,
            now_us(now),
            to_us(retry_at),
            url,
        )

    async def mark_ordered(
        self, url: str, now: datetime, *, window_s: float = 3600.0, failed_before: datetime | None = None
    ) -> bool:
        stamp = now_us(now)
        window_start = stamp - int(window_s * 1_000_000)
        rows = await self._sql.execute_returning(
            "INSERT INTO images (url, status, ordered_at, updated_at) VALUES (?, 'pending', ?, ?)"
            " ON CONFLICT (url) DO UPDATE SET status = 'pending', ordered_at = excluded.ordered_at,"
            " updated_at = excluded.updated_at"
            " WHERE (images.status = 'pending' AND (images.ordered_at IS NULL OR images.ordered_at <= ?))"
            " OR (images.status = 'failed' AND images.retry_after IS NOT NULL AND images.retry_after <= ?)"
            # a failure from before the webmaster asked to see a fix (NULL: nobody asked)
            " OR (images.status = 'failed' AND images.updated_at <= ?)"
            " RETURNING url",
            url,
            stamp,
            stamp,
            window_start,
            stamp,
            to_us(failed_before),
        )
        return bool(rows)

    async def mark_ordered_many(
        self, urls: Iterable[str], now: datetime, *, window_s: float = 3600.0, failed_before: datetime | None = None
    ) -> set[str]:
        # asked all at once, in one turn of the loop: SQLite commits them together (its group
        # commit), PostgreSQL sends them as one statement (``postgres/images.py``)
        wanted = list(dict.fromkeys(urls))
        won = await asyncio.gather(
            *(self.mark_ordered(url, now, window_s=window_s, failed_before=failed_before) for url in wanted)
        )
        return {url for url, first in zip(wanted, won, strict=True) if first}
