"""PostgreSQL delay store (docs/architecture.md section 3: media -> delay -> kvwriter).

Engine specific because its locking is: row locks where SQLite has one writer.
Every method is ONE statement, so parking a document (with any number of
missing media) is one round trip, and so is resolving a media URL; and the
calls of one loop turn share that statement (``batch.TurnBatch``): the media
cube's 64 documents in flight park in one round trip, the delay cube's
``media.cached`` messages resolve in one.

Releasing never deletes: ``resolve`` and ``due`` mark the documents they hand
out ``released_at = now`` (a lease) and only ``confirm``, called once their
publish is durable, removes them; a release not confirmed within the lease is
handed out again by ``due``. A crash in between costs a duplicate, never a document.

Why one statement is race-free:

* A document counts its missing media (``pending_n``, migration 8) beside its
  ``delay_pending`` rows. ``resolve`` deletes the pending rows of its media URL
  and *decrements* the count of each waiting document it touched; the document
  whose count reaches 0 is released by that statement. Two resolvers of one
  document's last two media serialize on the document's row (an ``UPDATE``
  re-reads the latest row version when it waits), so the second sees the
  first's decrement and exactly one of them releases it, and a document whose
  last two media arrive at once is never left parked. (A check of the pending
  rows themselves could not do this in one statement: the statement's snapshot
  would not see the other resolver's delete.) The count matters only while a
  document waits: a released one is never released by ``resolve`` again, and a
  newer version parked over it sets the count anew.
* Locks are taken document row first, then its pending rows, and documents in
  URL order (``resolve`` and ``confirm`` lock them ``ORDER BY url FOR UPDATE``
  before touching anything; ``park`` upserts the batch's documents sorted by URL
  and writes a document's pending rows only through its upserted row), so two
  of these statements never deadlock on each other.
* ``park`` is a guarded upsert, like the page store's: ``ON CONFLICT ... WHERE
  excluded.version > delay_docs.version`` is re-checked against the latest
  committed row when two parks of one URL collide, so the highest version wins
  without an advisory lock.
* ``due`` takes ``FOR UPDATE SKIP LOCKED`` so several delay instances split the
  due documents instead of queueing on each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from shared.stores.codec import now_us, to_us
from shared.stores.delay import ParkedDoc, ParkOutcome, check_pending
from shared.stores.postgres.batch import TurnBatch
from shared.stores.postgres.db import PgDb, unnest_columns
from shared.stores.sql.delay import ROW_COLUMNS, SqlDelayStore, parked_from_row

__all__ = ["PgDelayStore"]

_PARK = (
    "WITH d AS (SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bytea[], $5::bigint[],"
    " $6::bigint[], $7::bigint[]) AS d(url, host, version, doc_json, deadline, parked_at, pending_n)),"
    " m AS (SELECT * FROM unnest($8::text[], $9::text[]) AS m(doc_url, media_url)),"
    # the stored versions as this statement's snapshot saw them, to classify the outcome
    " prev AS (SELECT p.url, p.version FROM delay_docs p JOIN d USING (url)),"
    " up AS (INSERT INTO delay_docs (url, host, version, doc_json, deadline, parked_at, pending_n)"
    " SELECT url, host, version, doc_json, deadline, parked_at, pending_n FROM d ORDER BY url"
    " ON CONFLICT (url) DO UPDATE SET host = excluded.host, version = excluded.version,"
    " doc_json = excluded.doc_json, deadline = excluded.deadline, parked_at = excluded.parked_at,"
    # a newer version waits again, even if the older one was released and is in flight
    " pending_n = excluded.pending_n, released_at = NULL"
    " WHERE excluded.version > delay_docs.version RETURNING url),"
    # only for the documents written: the old version's media that the new one does not wait for ...
    " gone AS (DELETE FROM delay_pending p USING up WHERE p.doc_url = up.url"
    " AND NOT EXISTS (SELECT 1 FROM m WHERE m.doc_url = p.doc_url AND m.media_url = p.media_url)),"
    # ... and the new version's (disjoint rows: one statement never deletes and inserts one row)
    " added AS (INSERT INTO delay_pending (media_url, doc_url) SELECT m.media_url, m.doc_url FROM m"
    " JOIN up ON up.url = m.doc_url ON CONFLICT DO NOTHING)"
    " SELECT d.url, prev.version, up.url IS NOT NULL FROM d LEFT JOIN prev USING (url) LEFT JOIN up USING (url)"
)
_RESOLVE = (
    "WITH t AS (SELECT * FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS t(media_url, stamp, ord)),"
    # the documents first, in URL order: see the module docstring
    " locked AS (SELECT url FROM delay_docs WHERE url IN"
    " (SELECT p.doc_url FROM delay_pending p JOIN t USING (media_url)) ORDER BY url FOR UPDATE),"
    " gone AS (DELETE FROM delay_pending p USING locked, t WHERE p.doc_url = locked.url"
    " AND p.media_url = t.media_url RETURNING p.doc_url, t.ord, t.stamp),"
    # per document: how many of its media this statement resolved, and the last caller that did (one
    # by one, that caller's call would have struck the document's last missing media)
    " n AS (SELECT doc_url, count(*) AS n, max(ord) AS ord, (array_agg(stamp ORDER BY ord DESC))[1] AS stamp"
    " FROM gone GROUP BY doc_url),"
    " upd AS (UPDATE delay_docs d SET pending_n = d.pending_n - n.n,"
    " released_at = CASE WHEN d.pending_n - n.n <= 0 THEN n.stamp END"
    " FROM n WHERE d.url = n.doc_url AND d.released_at IS NULL"
    f" RETURNING d.{ROW_COLUMNS.replace(', ', ', d.')}, d.pending_n, n.ord)"
    " SELECT * FROM upd WHERE pending_n <= 0 ORDER BY url"
)
_DUE = (
    "UPDATE delay_docs d SET released_at = $1 WHERE url IN (SELECT url FROM delay_docs"
    " WHERE (released_at IS NULL AND deadline <= $1) OR released_at <= $2"
    " ORDER BY deadline, url LIMIT $3 FOR UPDATE SKIP LOCKED)"
    # what is still missing travels with the released doc (the kvwriter renders without it); the
    # pending rows stay until ``confirm``, so a re-release reports the same missing media
    f" RETURNING {ROW_COLUMNS}, ARRAY(SELECT media_url FROM delay_pending p WHERE p.doc_url = d.url)"
)
_CONFIRM = (
    "WITH c AS (SELECT * FROM unnest($1::text[], $2::bigint[]) AS c(url, version)),"
    " locked AS (SELECT d.url FROM delay_docs d JOIN c ON c.url = d.url AND c.version = d.version"
    " WHERE d.released_at IS NOT NULL ORDER BY d.url FOR UPDATE OF d),"
    " gone AS (DELETE FROM delay_docs d USING locked WHERE d.url = locked.url RETURNING d.url, d.version),"
    " p AS (DELETE FROM delay_pending WHERE doc_url IN (SELECT url FROM gone))"
    " SELECT url, version FROM gone"
)
_DISCARD = (
    "WITH gone AS (DELETE FROM delay_docs WHERE url = $1 RETURNING url),"
    " p AS (DELETE FROM delay_pending WHERE doc_url IN (SELECT url FROM gone))"
    " SELECT count(*) FROM gone"
)
_GET = (
    f"SELECT {ROW_COLUMNS}, ARRAY(SELECT media_url FROM delay_pending p WHERE p.doc_url = d.url)"
    " FROM delay_docs d WHERE url = $1"
)

#: url, host, version, doc_json, deadline, parked_at, sorted pending media
_Park = tuple[str, str, int, bytes, int, int, list[str]]
_Resolve = tuple[str, int]  # media_url, released_at


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


class PgDelayStore(SqlDelayStore):
    def __init__(self, db: PgDb) -> None:
        super().__init__(db)
        self._db = db
        self._park = TurnBatch(db.connection, _park, db.inflight, key=_first)
        self._resolve = TurnBatch(db.connection, _resolve, db.inflight, key=_first)
        self._confirm = TurnBatch(db.connection, _confirm, db.inflight)

    async def park(
        self,
        url: str,
        version: int,
        doc_json: bytes,
        pending: Iterable[str],
        deadline: datetime,
        *,
        host: str = "",
        now: datetime | None = None,
    ) -> ParkOutcome:
        media = sorted(check_pending(pending))
        deadline_us = to_us(deadline)
        assert deadline_us is not None
        return await self._park((url, host, version, doc_json, deadline_us, now_us(now), media))

    async def resolve(self, media_url: str, *, now: datetime | None = None) -> list[ParkedDoc]:
        return await self._resolve((media_url, now_us(now)))

    async def due(self, now: datetime, limit: int = 100, *, lease_s: float = 60.0) -> list[ParkedDoc]:
        if lease_s <= 0:
            raise ValueError(f"lease_s must be > 0, not {lease_s}")
        now_stamp = now_us(now)
        expired = now_us(now - timedelta(seconds=lease_s))
        async with self._db.connection() as conn:
            rows = await conn.fetch(_DUE, now_stamp, expired, limit)
        released = [parked_from_row(r, frozenset(r[7])) for r in rows]
        return sorted(released, key=lambda d: (d.deadline, d.url))

    async def confirm(self, released: Iterable[tuple[str, int]]) -> int:
        pairs = sorted(set(released))
        if not pairs:
            return 0
        return await self._confirm(pairs)

    async def get(self, url: str) -> ParkedDoc | None:
        async with self._db.connection() as conn:
            row = await conn.fetchrow(_GET, url)
        return None if row is None else parked_from_row(row, frozenset(row[7]))

    async def discard(self, url: str) -> bool:
        async with self._db.connection() as conn:
            gone: int = await conn.fetchval(_DISCARD, url)
        return gone > 0


async def _park(conn: asyncpg.Connection, items: Sequence[_Park]) -> list[ParkOutcome]:
    docs = [
        (url, host, version, doc, deadline, parked_at, len(media))
        for url, host, version, doc, deadline, parked_at, media in items
    ]
    pairs = [(item[0], m) for item in items for m in item[6]]
    rows = await conn.fetch(_PARK, *unnest_columns(docs, 7), *unnest_columns(pairs, 2))
    seen = {r[0]: (r[1], bool(r[2])) for r in rows}
    return [_park_outcome(*seen[item[0]], item[2]) for item in items]


def _park_outcome(stored: int | None, written: bool, version: int) -> ParkOutcome:
    if stored is None:
        outcome = ParkOutcome.parked
    elif version > stored:
        outcome = ParkOutcome.replaced
    else:
        return ParkOutcome.unchanged if version == stored else ParkOutcome.stale
    # not written although the snapshot said it would be: a concurrent park stored a version at least
    # as high first (the page store answers the same way)
    return outcome if written else ParkOutcome.stale


async def _resolve(conn: asyncpg.Connection, items: Sequence[_Resolve]) -> list[list[ParkedDoc]]:
    rows = await conn.fetch(_RESOLVE, *unnest_columns(items, 2))
    out: list[list[ParkedDoc]] = [[] for _ in items]
    for row in rows:  # in URL order; each to the caller whose media completed it
        out[row[8] - 1].append(parked_from_row(row, frozenset()))
    return out


async def _confirm(conn: asyncpg.Connection, calls: Sequence[list[tuple[str, int]]]) -> list[int]:
    owner: dict[tuple[str, int], int] = {}
    for i, pairs in enumerate(calls):
        for pair in pairs:
            owner.setdefault(pair, i)  # a pair two callers confirm counts for the first
    rows = await conn.fetch(_CONFIRM, *unnest_columns(sorted(owner), 2))
    counts = [0] * len(calls)
    for url, version in rows:
        counts[owner[(url, version)]] += 1
    return counts
