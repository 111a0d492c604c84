"""PostgreSQL image registry (docs/architecture.md section 3: media -> cdn -> delay).

Engine specific for its speed only: the statements are those of
``sql/images.py``, but the calls of one loop turn go as one statement over
arrays (``batch.TurnBatch``). The media cube asks ``mark_ordered`` for every
missing image of its 64 documents in flight, the cdn cube ``record_ok`` for
every image it stored, the media and delay cubes ``get_many``: one round trip
per turn each, instead of one per image. Each statement is as atomic as the
one-row statement it replaces: ``mark_ordered``'s guarded upsert returns a row
only for the URLs whose order this statement won, so of many callers (and
processes) exactly one orders an image.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import asyncpg

from shared.stores.codec import now_us, to_us
from shared.stores.images import ImageRecord
from shared.stores.postgres.batch import TurnBatch
from shared.stores.postgres.db import PgDb, unnest_columns
from shared.stores.sql.images import IMAGE_COLUMNS, SqlImageRegistry, image_from_row, recheck_us, variants_text

__all__ = ["PgImageRegistry"]

_GET = f"SELECT {IMAGE_COLUMNS} FROM images WHERE url = ANY($1::text[])"
_MARK_ORDERED = (
    "INSERT INTO images (url, status, ordered_at, updated_at)"
    " SELECT u, 'pending', s, s FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS t(u, s, fb)"
    " ON CONFLICT (url) DO UPDATE SET status = 'pending', ordered_at = excluded.ordered_at,"
    " updated_at = excluded.updated_at"
    # $4: the window in microseconds; a pending order older than the window was lost: re-send it
    " WHERE (images.status = 'pending'"
    " AND (images.ordered_at IS NULL OR images.ordered_at <= excluded.ordered_at - $4))"
    " OR (images.status = 'failed' AND images.retry_after IS NOT NULL AND images.retry_after <= excluded.ordered_at)"
    # fb: a failure from before the webmaster asked to see a fix (NULL: nobody asked); the row's own
    # value, read through the unnest by its url (excluded has only the table's columns)
    " OR (images.status = 'failed' AND images.updated_at <= (SELECT max(fb) FROM unnest($1::text[], $3::bigint[])"
    " AS f(u, fb) WHERE f.u = images.url))"
    " RETURNING url"
)
_RECORD_OK = (
    "INSERT INTO images (url, status, cdn_url, reason, mime, size, width, height, sha256, updated_at, variants,"
    " etag, last_modified, checked_at, recheck_at)"
    " SELECT u, 'ok', c, NULL, m, sz, w, h, sha, s, v, e, lm, s, ra FROM unnest($1::text[], $2::text[], $3::text[],"
    " $4::bigint[], $5::bigint[], $6::bigint[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::text[],"
    " $12::bigint[]) AS t(u, c, m, sz, w, h, sha, s, v, e, lm, ra)"
    " ON CONFLICT (url) DO UPDATE SET status = 'ok', cdn_url = excluded.cdn_url, reason = NULL,"
    " mime = excluded.mime, size = excluded.size, width = excluded.width, height = excluded.height,"
    " sha256 = excluded.sha256, updated_at = excluded.updated_at, retry_after = NULL, variants = excluded.variants,"
    " etag = excluded.etag, last_modified = excluded.last_modified, checked_at = excluded.checked_at,"
    " recheck_at = excluded.recheck_at"
)
# A failure never downgrades an image already in the CDN: its copy there stays valid.
_RECORD_FAILED = (
    "INSERT INTO images (url, status, reason, updated_at, retry_after)"
    " SELECT u, 'failed', r, s, ra FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS t(u, r, s, ra)"
    " ON CONFLICT (url) DO UPDATE SET status = 'failed', reason = excluded.reason,"
    " updated_at = excluded.updated_at, retry_after = excluded.retry_after"
    " WHERE images.status <> 'ok'"
)

_Mark = tuple[str, int, int | None]  # url, ordered_at, failed_before
_Ok = tuple[str, str, str | None, int, int | None, int | None, str | None, int, str, str | None, str | None, int]
_Failed = tuple[str, str, int, int | None]  # url, reason, updated_at, retry_after


def _url(item: tuple[Any, ...]) -> str:
    return str(item[0])


class PgImageRegistry(SqlImageRegistry):
    def __init__(self, db: PgDb) -> None:
        super().__init__(db)
        self._db = db
        self._get = TurnBatch(db.connection, _get_many, db.inflight)
        #: one batch per ordering window (the media cube uses one): the window is the statement's $4
        self._marks: dict[int, TurnBatch[_Mark, bool]] = {}
        self._ok = TurnBatch(db.connection, _write_ok, db.inflight, key=_url)
        self._failed = TurnBatch(db.connection, _write_failed, db.inflight, key=_url)

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        wanted = list(dict.fromkeys(urls))
        if not wanted:
            return {}
        return await self._get(wanted)

    async def mark_ordered(
        self, url: str, now: datetime, *, window_s: float = 3600.0, failed_before: datetime | None = None
    ) -> bool:
        window_us = int(window_s * 1_000_000)
        batch = self._marks.get(window_us)
        if batch is None:

            async def run(conn: asyncpg.Connection, items: Sequence[_Mark]) -> list[bool]:
                won = {r[0] for r in await conn.fetch(_MARK_ORDERED, *unnest_columns(items, 3), window_us)}
                return [url in won for url, _, _ in items]

            batch = self._marks[window_us] = TurnBatch(self._db.connection, run, self._db.inflight, key=_url)
        return await batch((url, now_us(now), to_us(failed_before)))

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
        await self._ok(
            (
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
                recheck_us(stamp, recheck_at),
            )
        )

    async def record_failed(
        self, url: str, reason: str, retry_at: datetime | None = None, *, now: datetime | None = None
    ) -> None:
        await self._failed((url, reason, now_us(now), to_us(retry_at)))


async def _get_many(conn: asyncpg.Connection, wanted: Sequence[list[str]]) -> list[dict[str, ImageRecord]]:
    """One query for the URLs of every caller; each gets the records of its own URLs."""
    urls = list(dict.fromkeys(url for urls in wanted for url in urls))
    found = {row[0]: image_from_row(row) for row in await conn.fetch(_GET, urls)}
    return [{url: found[url] for url in mine if url in found} for mine in wanted]


async def _write_ok(conn: asyncpg.Connection, items: Sequence[_Ok]) -> list[None]:
    await conn.execute(_RECORD_OK, *unnest_columns(items, 12))
    return [None] * len(items)


async def _write_failed(conn: asyncpg.Connection, items: Sequence[_Failed]) -> list[None]:
    await conn.execute(_RECORD_FAILED, *unnest_columns(items, 4))
    return [None] * len(items)
