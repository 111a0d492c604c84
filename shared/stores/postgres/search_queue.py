"""PostgreSQL search index: the queue of written pages and its drain (docs/architecture.md section 3, "indexer").

The page statements queue every row they write (``search_queue``, migration 24).
``index_pending`` is one transaction a batch, four round trips:

1. take the oldest queue rows with their pages (``FOR UPDATE SKIP LOCKED``:
   indexers draining at once take different rows, and a row stays locked, not
   gone, until the commit);
2. analyze the pages on the indexer's own thread (``shared/search/tokens.py``,
   the analyzer of both engines and of the queries: lemmas, stems) into each
   page's ``tsvector``, written as a literal (its terms at their positions, the
   title's weighted A, the text's B), so the server analyzes nothing;
3. one statement writes each live page's ``search_docs`` row, drops the rows of
   pages that are gone (a tombstone, an empty page), deletes the queue rows
   taken and adds the terms new to ``search_vocab`` (the vocabulary of "did you
   mean"; terms this process wrote before are not sent again); a version guard
   keeps an indexer that read an older page from overwriting a newer row another
   one wrote (a page written after the read has a queue row of its own, left for
   the next drain);
4. commit. A crash before it leaves the queue rows where they were.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from shared.search.analysis import ANALYZER_VERSION
from shared.search.tokens import SEPARATOR, Stream, stream
from shared.stores.codec import now_us
from shared.stores.postgres.db import PgDb
from shared.stores.search import IndexRound, drain

__all__ = ["PgIndexQueue", "requeue_if_stale", "tsvector_text"]

log = logging.getLogger(__name__)

#: an advisory lock key (any constant) that serializes the re-queue of concurrent openers
_REQUEUE_LOCK = 0x7365_6172_6368  # "search"
#: PostgreSQL keeps positions up to this (larger ones are stored as it) and 256 of one lexeme
_MAX_POS = 16383
_MAX_POSITIONS = 256
#: vocabulary terms a process remembers having written
_KNOWN_MAX = 1_000_000
_CLAIM = (
    "SELECT q.seq, q.url, p.version, p.deleted, p.host, p.title, p.text, p.kind, p.published_at, p.written_at"
    " FROM (SELECT seq, url FROM search_queue ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) q"
    " LEFT JOIN pages p ON p.url = q.url"
)
_APPLY = (
    "WITH put AS (INSERT INTO search_docs (url, version, host, kind, published, written_at, indexed_at, tsv)"
    " SELECT url, version, host, kind, published, written_at, $7, tsv::tsvector FROM unnest($1::text[],"
    " $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $8::text[])"
    " AS t(url, version, host, kind, published, written_at, tsv)"
    " ON CONFLICT (url) DO UPDATE SET version = excluded.version, host = excluded.host, kind = excluded.kind,"
    " published = excluded.published, written_at = excluded.written_at, indexed_at = excluded.indexed_at,"
    " tsv = excluded.tsv WHERE excluded.version >= search_docs.version RETURNING written_at),"
    " gone AS (DELETE FROM search_docs d USING unnest($9::text[], $10::bigint[]) AS g(url, version)"
    " WHERE d.url = g.url AND d.version <= g.version),"
    " taken AS (DELETE FROM search_queue WHERE seq = ANY($11::bigint[])),"
    " vocab AS (INSERT INTO search_vocab (term) SELECT unnest($12::text[]) ON CONFLICT DO NOTHING)"
    " SELECT array_agg(written_at) FROM put"
)


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_text(title: Stream, body: Stream, seen: set[str] | None = None) -> str:
    """The ``tsvector`` literal of a page: every term at its stream position (``tokens.py``), the title's
    weighted A and the text's B after a gap, so that no phrase runs from the title into the text."""
    at: dict[str, list[str]] = {}
    pos = 0
    for tokens, weight in ((title.tokens, "A"), (body.tokens, "B")):
        for token in tokens:
            pos += 1
            if token == SEPARATOR:  # a position of its own, never a lexeme: the gap is what it is for
                continue
            places = at.get(token)
            if places is None:
                places = at[token] = []
                if seen is not None:
                    seen.add(token)
            if len(places) < _MAX_POSITIONS:
                places.append(f"{min(pos, _MAX_POS)}{weight}")
        pos += 1
    return " ".join(f"{_quote(t)}:{','.join(p)}" for t, p in at.items())


def _plan(rows: Sequence[Any], known: set[str]) -> tuple[list[Any], list[Any], list[str], float]:
    """The batch's index rows and removals (one per page, its newest queue row's read), its terms not in
    ``known``, and the CPU it took."""
    cpu0 = time.thread_time()
    seen: set[str] = set()
    latest = {r[1]: r for r in rows}
    put: list[tuple[Any, ...]] = []
    gone: list[tuple[str, int]] = []
    for _seq, url, version, deleted, host, title, text, kind, published, written in latest.values():
        if version is None:
            continue  # no page row (none is ever deleted outright): nothing to index or drop
        if deleted or not (title or text):
            gone.append((url, version))
            continue
        tsv = tsvector_text(stream(title), stream(text), seen)
        put.append((url, version, host, kind, published if published is not None else written, written, tsv))
    return put, gone, sorted(seen - known), time.thread_time() - cpu0


class PgIndexQueue:
    """The queue's drain (``shared/stores/search.py``, ``IndexQueue``)."""

    def __init__(self, db: PgDb) -> None:
        self._db = db
        # analysis runs here, not on the event loop (HTTP, heartbeats)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-index")
        #: terms this process has written to the vocabulary (so a batch sends only the new ones)
        self._known: set[str] = set()

    async def index_pending(self, limit: int) -> IndexRound:
        async with self._db.connection() as conn, conn.transaction():
            rows = await conn.fetch(_CLAIM, limit)
            if not rows:
                return IndexRound()
            put, gone, new, cpu = await asyncio.get_running_loop().run_in_executor(self._pool, _plan, rows, self._known)
            stamp = now_us(None)
            cols = list(zip(*put, strict=True)) if put else [()] * 7
            gcols = list(zip(*gone, strict=True)) if gone else [(), ()]
            written = await conn.fetchval(
                _APPLY, *(list(c) for c in cols[:6]), stamp, list(cols[6]), *(list(c) for c in gcols),
                [r[0] for r in rows], new,
            )  # fmt: skip
        if len(self._known) + len(new) > _KNOWN_MAX:
            self._known.clear()  # a few terms sent again (ON CONFLICT DO NOTHING) beats unbounded memory
        self._known.update(new)
        lags = tuple(max(0.0, (stamp - w) / 1e6) for w in written or () if w)
        return IndexRound(queued=len(rows), indexed=len(written or ()), removed=len(gone), lags_s=lags, cpu_s=cpu)

    async def pending(self) -> int:
        row = await self._db.fetchone("SELECT count(*) FROM search_queue")
        return int(row[0]) if row else 0

    async def catch_up(self, limit: int = 500) -> int:
        return await drain(self, limit)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


async def requeue_if_stale(db: PgDb) -> int:
    """Queue every live page when the index was made by another analyzer version (or none); pages queued.

    One transaction under an advisory lock: of several processes opening the store at once, one queues."""
    async with db.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", _REQUEUE_LOCK)
        if await conn.fetchval("SELECT value FROM search_meta WHERE key = 'analyzer'") == str(ANALYZER_VERSION):
            return 0
        status = await conn.execute("INSERT INTO search_queue (url) SELECT url FROM pages WHERE NOT deleted")
        await conn.execute(
            "INSERT INTO search_meta (key, value) VALUES ('analyzer', $1)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            str(ANALYZER_VERSION),
        )
    queued = int(status.rsplit(" ", 1)[-1])
    if queued:
        log.info("search index: %d pages queued for analyzer version %d", queued, ANALYZER_VERSION)
    return queued
