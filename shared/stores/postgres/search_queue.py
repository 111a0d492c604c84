"""PostgreSQL search index: the queue of written pages and its drain (docs/architecture.md section 3, "indexer").

The page statements queue every row they write (``search_queue``, migration 24).
``index_pending`` is one transaction a batch, five or six round trips:

1. take the oldest queue rows with their pages (``FOR UPDATE SKIP LOCKED``:
   indexers draining at once take different rows, and a row stays locked, not
   gone, until the commit);
2. lock the pages' ``search_docs`` rows (``FOR UPDATE``: another indexer that
   took a newer queue row of the same page waits) and read their ids, versions
   and the postings they were given; a row already newer than the page read is
   left as it is (its own queue row indexed it); ids for new pages from
   ``search_doc_ids``;
3. analyze the pages on the indexer's own thread (``shared/search/tokens.py``,
   the analyzer of both engines and of the queries: lemmas, stems) into each
   page's ``tsvector``, written as a literal (its terms at their positions, the
   title's weighted A, the text's B, so the server analyzes nothing), its
   streams and length (what the ranking reads), and its postings in the impact
   index (``search_impacts.py``: one row a term);
4. one statement writes each live page's ``search_docs`` row, drops the rows of
   pages that are gone (a tombstone, an empty page), replaces the postings that
   changed, deletes the queue rows taken and adds what changed to each term's
   count of pages (``search_df``: the IDF of the walk, the vocabulary of "did you
   mean"; its rows in term order, so two indexers lock them in one order);
5. commit. A crash before it leaves the queue rows where they were.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from shared.search.analysis import ANALYZER_VERSION
from shared.search.tokens import SEPARATOR, Stream, stream
from shared.stores.codec import now_us
from shared.stores.postgres.db import PgDb
from shared.stores.search import IndexRound, drain
from shared.stores.sql.search_impacts import impact_rows

__all__ = ["PgIndexQueue", "requeue_if_stale", "tsvector_text"]

log = logging.getLogger(__name__)

#: an advisory lock key (any constant) that serializes the re-queue of concurrent openers
_REQUEUE_LOCK = 0x7365_6172_6368  # "search"
#: PostgreSQL keeps positions up to this (larger ones are stored as it) and 256 of one lexeme
_MAX_POS = 16383
_MAX_POSITIONS = 256
_CLAIM = (
    "SELECT q.seq, q.url, p.version, p.deleted, p.host, p.title, p.text, p.kind, p.published_at, p.written_at"
    " FROM (SELECT seq, url FROM search_queue ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) q"
    " LEFT JOIN pages p ON p.url = q.url"
)
_LOCK = "SELECT url, id, version, impacts FROM search_docs WHERE url = ANY($1::text[]) ORDER BY url FOR UPDATE"
_IDS = "SELECT nextval('search_doc_ids') FROM generate_series(1, $1)"
#: the columns of a page's search_docs row, as ``_plan`` makes them
_DOC_COLUMNS = (
    ("url", "text"), ("version", "bigint"), ("host", "text"), ("kind", "text"), ("published", "bigint"),
    ("written_at", "bigint"), ("tsv", "text"), ("id", "bigint"), ("length", "int"), ("title_terms", "text"),
    ("body_terms", "text"), ("impacts", "text"),
)  # fmt: skip
_N = len(_DOC_COLUMNS)
_APPLY = (
    "WITH put AS (INSERT INTO search_docs (" + ", ".join(c for c, _ in _DOC_COLUMNS) + ", indexed_at)"
    " SELECT " + ", ".join("tsv::tsvector" if c == "tsv" else c for c, _ in _DOC_COLUMNS) + f", ${_N + 1}"
    " FROM unnest(" + ", ".join(f"${i}::{t}[]" for i, (_, t) in enumerate(_DOC_COLUMNS, 1)) + ")"
    " AS t(" + ", ".join(c for c, _ in _DOC_COLUMNS) + ")"
    " ON CONFLICT (url) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c, _ in _DOC_COLUMNS[1:])
    + ", indexed_at = excluded.indexed_at RETURNING written_at),"
    f" gone AS (DELETE FROM search_docs d WHERE d.url = ANY(${_N + 2}::text[])),"
    f" unpost AS (DELETE FROM search_post p USING unnest(${_N + 3}::text[], ${_N + 4}::bigint[]) AS x(term, k)"
    " WHERE p.term = x.term AND p.k = x.k),"
    f" post AS (INSERT INTO search_post (term, k) SELECT * FROM unnest(${_N + 5}::text[], ${_N + 6}::bigint[])"
    " ON CONFLICT DO NOTHING),"
    f" taken AS (DELETE FROM search_queue WHERE seq = ANY(${_N + 7}::bigint[])),"
    f" df AS (INSERT INTO search_df (term, docs) SELECT * FROM unnest(${_N + 8}::text[], ${_N + 9}::bigint[])"
    " ON CONFLICT (term) DO UPDATE SET docs = search_df.docs + excluded.docs)"
    " SELECT array_agg(written_at) FROM put"
)


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_text(title: Stream, body: Stream) -> str:
    """The ``tsvector`` literal of a page: every term at its stream position (``tokens.py``), the title's
    weighted A and the text's B after a gap, so that no phrase runs from the title into the text."""
    at: dict[str, list[str]] = {}
    pos = 0
    for tokens, weight in ((title.tokens, "A"), (body.tokens, "B")):
        for token in tokens:
            pos += 1
            if token == SEPARATOR:  # a position of its own, never a lexeme: the gap is what it is for
                continue
            places = at.setdefault(token, [])
            if len(places) < _MAX_POSITIONS:
                places.append(f"{min(pos, _MAX_POS)}{weight}")
        pos += 1
    return " ".join(f"{_quote(t)}:{','.join(p)}" for t, p in at.items())


def _postings(impacts: str) -> set[tuple[str, int]]:
    """A page's postings from the ``impacts`` its row keeps (``_impacts_text``)."""
    out: set[tuple[str, int]] = set()
    for line in impacts.split("\n") if impacts else ():
        k, _, terms = line.partition(" ")
        out.update((t, int(k)) for t in terms.split(" "))
    return out


def _impacts_text(rows: Sequence[tuple[int, str]], doc_id: int) -> str:
    """A page's postings as its row keeps them: one line a key (the key with the id, then its terms)."""
    return "\n".join(f"{high | doc_id} {terms}" for high, terms in rows)


@dataclass(slots=True)
class _Batch:
    """What a batch writes (``_APPLY``'s arguments but the queue rows and the time)."""

    docs: list[tuple[Any, ...]] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    unpost: set[tuple[str, int]] = field(default_factory=set)
    post: set[tuple[str, int]] = field(default_factory=set)
    deltas: Counter[str] = field(default_factory=Counter)
    moved_on: int = 0
    cpu_s: float = 0.0


def _plan(latest: Sequence[Any], held: dict[str, Any], new_ids: Sequence[int]) -> _Batch:
    """The batch's writes from its pages (one each, as read) and their rows as locked (``held``)."""
    cpu0 = time.thread_time()
    out = _Batch()
    fresh_ids = iter(new_ids)
    for _seq, url, version, deleted, host, title, text, kind, published, written in latest:
        old = held.get(url)
        if version is None:
            continue  # no page row (none is ever deleted outright): nothing to index or drop
        if old is not None and old["version"] > version:
            out.moved_on += 1  # a newer version is indexed already (its own queue row)
            continue
        before = _postings(old["impacts"]) if old is not None else set()
        if deleted or not (title or text):
            if old is not None:
                out.gone.append(url)
                out.unpost |= before
                out.deltas.subtract({t for t, _ in before})
            continue
        doc_id = old["id"] if old is not None and old["id"] is not None else next(fresh_ids)
        t, b = stream(title), stream(text)
        tt, bt = t.tokens, b.tokens
        fresh_at = published if published is not None else written
        rows = impact_rows(tt, bt, kind, fresh_at, written or 0)
        impacts = _impacts_text(rows, doc_id)
        after = _postings(impacts)
        out.unpost |= before - after
        out.post |= after - before
        out.deltas.subtract({t for t, _ in before})
        out.deltas.update({t for t, _ in after})
        tsv = tsvector_text(t, b)
        out.docs.append(
            (url, version, host, kind, fresh_at, written, tsv, doc_id, len(tt) + len(bt), " ".join(tt),
             " ".join(bt), impacts)
        )  # fmt: skip
    out.cpu_s = time.thread_time() - cpu0
    return out


class PgIndexQueue:
    """The queue's drain (``shared/stores/search.py``, ``IndexQueue``)."""

    def __init__(self, db: PgDb) -> None:
        self._db = db
        # analysis runs here, not on the event loop (HTTP, heartbeats)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-index")

    async def index_pending(self, limit: int) -> IndexRound:
        loop = asyncio.get_running_loop()
        async with self._db.connection() as conn, conn.transaction():
            rows = await conn.fetch(_CLAIM, limit)
            if not rows:
                return IndexRound()
            latest = list({r[1]: r for r in rows}.values())  # a page's queue rows read together: one page
            held = {r["url"]: r for r in await conn.fetch(_LOCK, [r[1] for r in latest])}
            wanted = sum(1 for r in latest if r[2] is not None and (r[1] not in held or held[r[1]]["id"] is None))
            new_ids = [r[0] for r in await conn.fetch(_IDS, wanted)] if wanted else []
            batch = await loop.run_in_executor(self._pool, _plan, latest, held, new_ids)
            stamp = now_us(None)
            cols = [list(c) for c in zip(*batch.docs, strict=True)] if batch.docs else [[] for _ in range(_N)]
            unpost, post = sorted(batch.unpost), sorted(batch.post)
            deltas = sorted((t, n) for t, n in batch.deltas.items() if n)
            written = await conn.fetchval(
                _APPLY, *cols, stamp, batch.gone, [t for t, _ in unpost], [k for _, k in unpost],
                [t for t, _ in post], [k for _, k in post], [r[0] for r in rows], [t for t, _ in deltas],
                [n for _, n in deltas],
            )  # fmt: skip
        lags = tuple(max(0.0, (stamp - w) / 1e6) for w in written or () if w)
        return IndexRound(
            queued=len(rows),
            indexed=len(batch.docs),
            removed=len(batch.gone),
            moved_on=batch.moved_on,
            lags_s=lags,
            cpu_s=batch.cpu_s,
        )

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
