"""PostgreSQL search index: the queue of written pages and its drain (docs/architecture.md section 3, "indexer").

The page statements queue every row they write (``search_queue``, migration 24).
``index_pending`` is one statement, so one round trip and one transaction a
batch: it takes the oldest queue rows (``FOR UPDATE SKIP LOCKED``: indexers
draining at once take different rows), reads their pages as the statement's
snapshot sees them, writes each live page's ``search_docs`` row (its ``tsv``
made by the server with the page's configuration, ``analysis.pg_config``) or
drops it (a tombstone, an empty page), and deletes the queue rows taken. A
version guard keeps an indexer that read an older snapshot from overwriting a
newer row another one wrote; a page written after the snapshot has a queue row
of its own, left for the next drain.
"""

from __future__ import annotations

from shared.stores.codec import now_us
from shared.stores.migrations import PG_TS_CONFIG
from shared.stores.postgres.db import PgDb
from shared.stores.search import IndexRound

__all__ = ["PgIndexQueue"]

#: what the index leaves out: a tombstone, a page with nothing to search
_GONE = "deleted OR (title = '' AND text = '')"
_TSV = (
    f"setweight(to_tsvector({PG_TS_CONFIG}, translate(title, 'ёЁ', 'еЕ')), 'A')"
    f" || setweight(to_tsvector({PG_TS_CONFIG}, translate(text, 'ёЁ', 'еЕ')), 'B')"
)
_DRAIN = (
    "WITH taken AS (DELETE FROM search_queue WHERE seq IN"
    " (SELECT seq FROM search_queue ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING url),"
    " src AS (SELECT url, version, deleted, host, title, text, kind, published_at, written_at, lang FROM pages"
    " WHERE url IN (SELECT url FROM taken)),"
    " gone AS (DELETE FROM search_docs d USING src WHERE d.url = src.url"
    " AND (src.deleted OR (src.title = '' AND src.text = '')) AND d.version <= src.version),"
    " put AS (INSERT INTO search_docs (url, version, host, kind, published, written_at, indexed_at, tsv)"
    f" SELECT url, version, host, kind, coalesce(published_at, written_at), written_at, $2, {_TSV}"
    f" FROM src WHERE NOT ({_GONE})"
    " ON CONFLICT (url) DO UPDATE SET version = excluded.version, host = excluded.host, kind = excluded.kind,"
    " published = excluded.published, written_at = excluded.written_at, indexed_at = excluded.indexed_at,"
    " tsv = excluded.tsv WHERE excluded.version >= search_docs.version RETURNING written_at)"
    f" SELECT (SELECT count(*) FROM taken), (SELECT count(*) FROM src WHERE {_GONE}),"
    " (SELECT count(*) FROM put), (SELECT array_agg(written_at) FROM put)"
)


class PgIndexQueue:
    """The queue's drain (``shared/stores/search.py``, ``IndexQueue``)."""

    def __init__(self, db: PgDb) -> None:
        self._db = db

    async def index_pending(self, limit: int) -> IndexRound:
        stamp = now_us(None)
        async with self._db.connection() as conn:
            queued, removed, indexed, written = await conn.fetchrow(_DRAIN, limit, stamp)
        if not queued:
            return IndexRound()
        lags = tuple(max(0.0, (stamp - w) / 1e6) for w in written or () if w)
        return IndexRound(
            queued=int(queued),
            indexed=int(indexed),
            removed=int(removed),
            moved_on=0,
            lags_s=lags,
            # the analysis is the server's (its CPU is the engine's); this process only sends the statement
            cpu_s=0.0,
        )

    async def pending(self) -> int:
        row = await self._db.fetchone("SELECT count(*) FROM search_queue")
        return int(row[0]) if row else 0

    async def catch_up(self, limit: int = 500) -> int:
        done = 0
        while (r := await self.index_pending(limit)).queued:
            done += r.indexed + r.removed
        return done

    def close(self) -> None:
        """Nothing of its own to close (the pool is the store's)."""
