"""SQLite search index: the queue of written pages and its drain (docs/architecture.md section 3, "indexer").

Triggers on ``pages`` queue every write of a page row (``search_queue``: its
rowid, migration 24) in the page's own transaction. ``index_pending`` takes the
oldest queue rows, in three steps so that the write lock is held only for the
index's own statements:

1. read the queue rows with the pages as they are now (an inline read: WAL
   readers never wait);
2. analyze them on the indexer's own thread (stems and the impact rows, a few
   hundred microseconds a page: the event loop serving HTTP and heartbeats goes
   on meanwhile);
3. in one transaction: for each page whose ``(version, deleted)`` is still the
   one read, replace its index rows (or drop them: a tombstone, an empty page, a
   row gone); a page written again meanwhile is left to the newer queue row its
   write added; then delete the queue rows read.

``requeue_if_stale``: a store whose index was made by another analyzer version
queues every live page once (at open); the indexer rebuilds the index while
search answers from the old one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from shared.search.analysis import ANALYZER_VERSION
from shared.search.kinds import page_kind
from shared.stores.codec import now_us, to_us
from shared.stores.search import IndexRound, drain
from shared.stores.sqlite.db import SqliteDb
from shared.stores.sqlite.search import DocFields, IndexTerms, count_terms, drop_page, index_terms, terms_of, write_page

__all__ = ["SqliteIndexQueue", "requeue_if_stale"]

log = logging.getLogger(__name__)

#: the oldest queue rows with their pages as they are now (the JSON form only for a page of no type)
_READ = (
    "SELECT q.seq, q.id, p.version, p.deleted, p.host, p.title, p.text, p.kind, p.published_at, p.written_at,"
    " CASE WHEN p.kind = '' THEN p.doc_json END"
    " FROM (SELECT seq, id FROM search_queue ORDER BY seq LIMIT ?) q LEFT JOIN pages p ON p.rowid = q.id"
)
_STATE = "SELECT version, deleted FROM pages WHERE rowid = ?"


@dataclass(frozen=True, slots=True)
class _Plan:
    """One queued page: the state it was read in and what its index rows become (None: none)."""

    id: int
    state: tuple[int, bool] | None
    terms: IndexTerms | None
    doc: DocFields | None
    written_us: int


def _legacy_kind(doc_json: bytes | None) -> tuple[str, int | None]:
    """Type and publication time of a page written before pages had them, from its JSON form."""
    try:
        doc = orjson.loads(doc_json) if doc_json else {}
    except orjson.JSONDecodeError:
        doc = {}
    if not isinstance(doc, dict):
        doc = {}
    published: datetime | None = None
    if isinstance(raw := doc.get("published_at"), str):
        with contextlib.suppress(ValueError):
            published = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    return page_kind(str(doc.get("kind", "article")), published).value, to_us(published)


def _plan(rows: Sequence[tuple[Any, ...]]) -> tuple[list[_Plan], float]:
    """Analyze the queued pages (one plan per page, whatever its number of queue rows); the CPU it took."""
    cpu0 = time.thread_time()
    latest = {row[1]: row for row in rows}  # rows of one page read together show the same page: one analysis
    plans = []
    for _seq, rowid, version, deleted, host, title, text, kind, published, written, doc_json in latest.values():
        if version is None:  # the row is gone (deleted outright)
            plans.append(_Plan(rowid, None, None, None, 0))
            continue
        state, written_us = (int(version), bool(deleted)), int(written or 0)
        if deleted or not (title or text):
            plans.append(_Plan(rowid, state, None, None, written_us))
            continue
        if not kind:  # written before pages had a type: the index takes it from the JSON form
            kind, published = _legacy_kind(doc_json)
        fresh_at = int(published or written_us)
        terms = index_terms(title, text, kind, fresh_at, written_us)
        plans.append(_Plan(rowid, state, terms, DocFields(kind, fresh_at, host, written_us, int(version)), written_us))
    return plans, time.thread_time() - cpu0


@dataclass(frozen=True, slots=True)
class _Applied:
    indexed: int
    removed: int
    moved_on: int
    lags_s: tuple[float, ...]
    cpu_s: float


def _apply(conn: sqlite3.Connection, seqs: Sequence[int], plans: Sequence[_Plan]) -> _Applied:
    """Step 3 of the module docstring (in the caller's transaction)."""
    cpu0 = time.thread_time()
    stamp = now_us(None)
    indexed = removed = moved_on = 0
    lags: list[float] = []
    deltas: Counter[str] = Counter()
    for plan in plans:
        row = conn.execute(_STATE, (plan.id,)).fetchone()
        if (None if row is None else (int(row[0]), bool(row[1]))) != plan.state:
            moved_on += 1  # written again since it was read: its newer queue row indexes it
            continue
        deltas.subtract(drop_page(conn, plan.id))
        if plan.terms is None or plan.doc is None:
            removed += 1
            continue
        write_page(conn, plan.id, plan.terms, plan.doc, stamp)
        deltas.update(terms_of(plan.terms.title, plan.terms.body))
        indexed += 1
        if plan.written_us:
            lags.append(max(0.0, (stamp - plan.written_us) / 1e6))
    count_terms(conn, deltas)
    conn.executemany("DELETE FROM search_queue WHERE seq = ?", [(s,) for s in seqs])
    return _Applied(indexed, removed, moved_on, tuple(lags), time.thread_time() - cpu0)


class SqliteIndexQueue:
    """The queue's drain (``shared/stores/search.py``, ``IndexQueue``)."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db
        # analysis runs here: not the loop (HTTP, heartbeats), not the reader thread (searches)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search-index")

    async def index_pending(self, limit: int) -> IndexRound:
        rows = await self._db.read_inline(lambda conn: conn.execute(_READ, (limit,)).fetchall())
        if not rows:
            return IndexRound()
        plans, plan_cpu = await asyncio.get_running_loop().run_in_executor(self._pool, _plan, rows)
        seqs = [int(r[0]) for r in rows]
        done = await self._db.write(lambda conn: _apply(conn, seqs, plans), long=True)
        return IndexRound(
            queued=len(rows),
            indexed=done.indexed,
            removed=done.removed,
            moved_on=done.moved_on,
            lags_s=done.lags_s,
            cpu_s=plan_cpu + done.cpu_s,
        )

    async def pending(self) -> int:
        row = await self._db.read_inline(lambda conn: conn.execute("SELECT count(*) FROM search_queue").fetchone())
        return int(row[0])

    async def catch_up(self, limit: int = 500) -> int:
        return await drain(self, limit)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _requeue(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM search_meta WHERE key = 'analyzer'").fetchone()
    if row is not None and row[0] == str(ANALYZER_VERSION):
        return 0
    queued = conn.execute("INSERT INTO search_queue (id) SELECT rowid FROM pages WHERE NOT deleted").rowcount
    conn.execute(
        "INSERT INTO search_meta (key, value) VALUES ('analyzer', ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (str(ANALYZER_VERSION),),
    )
    return int(queued)


async def requeue_if_stale(db: SqliteDb) -> int:
    """Queue every live page when the index was made by another analyzer version (or none); pages queued.

    One transaction: of several processes opening the store at once, one queues."""
    queued = await db.write(_requeue, long=True)
    if queued:
        log.info("search index: %d pages queued for analyzer version %d", queued, ANALYZER_VERSION)
    return queued
