"""The search index's contract (docs/architecture.md section 3, "frontend" search and "indexer"; section 4, "stores").

The index **follows** the page store instead of being written in the page's
transaction, so that writing a page costs what it cost before search existed:

* every write of a page row (a new page, an edit, a tombstone) queues the page
  in the same transaction (``search_queue``: SQLite by triggers on ``pages``,
  PostgreSQL in the page statements themselves), a few microseconds;
* the ``indexer`` cube drains the queue in batches (``IndexQueue.index_pending``):
  it reads the queued pages as they are *now*, analyzes them off the event loop,
  and writes their index rows — or drops them, for a page that is gone, empty or
  a tombstone — and the queue rows it took, in one transaction. So a page queued
  is never lost: a crash (a ``kill -9`` of the indexer) before that commit leaves
  the queue as it was, and the next drain does the work again (it is idempotent);
* a page written again while its batch was being analyzed is queued again, and
  the batch leaves it be (its version moved on): the next drain indexes the new
  version. Several indexers may drain at once (PostgreSQL: ``SKIP LOCKED``).

So search lags the pages by the indexer's period plus a batch (``indexed_at``
minus the page's ``written_at``: ``turbocubes_search_index_lag_seconds``). A
search never shows a page that is gone: its last step reads the hits from the
page store and leaves out tombstones, whatever the index still holds.

What is searched, ranked and returned is defined engine-free in
``shared.search``: the query language (``query.py``), the ranking (``ranking.py``),
filters and cursors (``request.py``), snippets (``snippets.py``). Engines:
``sqlite/search.py`` (FTS5 over stems, BM25; a common word's best pages found
through an impact-ordered index, ``sqlite/search_topk.py``; the queue,
``sqlite/search_queue.py``) and ``postgres/search.py`` (``search_docs``: the
``russian`` / ``english`` configurations, GIN; the queue, ``postgres/search_queue.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from shared.search.request import SearchRequest, SearchResults

__all__ = ["IndexQueue", "IndexRound", "SearchIndex", "drain"]


class SearchIndex(Protocol):
    async def search(self, request: SearchRequest) -> SearchResults:
        """The best ``request.limit`` pages for the request after its cursor, best first."""
        ...


@dataclass(frozen=True, slots=True)
class IndexRound:
    """What one drain of the queue did."""

    #: queue rows taken (a page written three times since the last drain is three rows, one page)
    queued: int = 0
    #: pages whose index rows were written
    indexed: int = 0
    #: pages whose index rows were dropped (tombstoned, emptied, gone)
    removed: int = 0
    #: pages left for a later drain: written again while this one analyzed them
    moved_on: int = 0
    #: seconds from each indexed page's write (``written_at``) to its index commit
    lags_s: tuple[float, ...] = field(default=(), repr=False)
    #: CPU seconds the drain spent in this process (analysis and the index writes, on any thread)
    cpu_s: float = 0.0


class IndexQueue(Protocol):
    async def index_pending(self, limit: int) -> IndexRound:
        """Index the pages of the oldest ``limit`` queue rows (one transaction); an empty round when none."""
        ...

    async def pending(self) -> int:
        """Queue rows waiting (a metric; counts the queue)."""
        ...

    async def catch_up(self, limit: int = 500) -> int:
        """Drain until the queue is empty (tests, benchmarks, an operator's rebuild); the pages indexed or
        removed."""
        ...


async def drain(queue: IndexQueue, limit: int) -> int:
    """``IndexQueue.catch_up`` for either engine: batches until one comes back empty."""
    done = 0
    while (r := await queue.index_pending(limit)).queued:
        done += r.indexed + r.removed
    return done
