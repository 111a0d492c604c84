"""SQLite search's fast path: the best pages of a query of words and prefixes, without scoring every match
(docs/architecture.md s.3).

FTS5's ``bm25()`` costs about a microsecond a matching row, and a word on half
of 100,000 pages is 60 ms of it for 20 results. So beside ``search_fts`` the
indexer keeps an **impact index**, ``search_imp``: for each indexed page one
FTS5 row per distinct impact key among its terms, holding those terms, under
the key itself as its rowid (``shared/stores/sql/search_impacts.py``: the key
bounds the page's score for each term), so ``ORDER BY rowid DESC`` walks a
term's pages from the best bound down; the rows hold prefix tokens too
(``search_groups.py``). ``TopK.best`` decides whether a query is worth a walk
and runs it (``shared/stores/sql/search_walk.py``, the same on PostgreSQL) on
the reader thread; the answer is the one the SQL ranking gives
(``tests/contract/test_search_topk_sqlite.py`` compares them).

The walk declines — and the caller ranks in SQL — for phrases of three words or more, cursor pages,
rankings other than the index's, queries on few pages (scoring every match is
cheaper there), prefixes of one or two letters, long prefixes that match under
a quarter of the list they walk, and walks that grow past its bounds.

A phrase of two words is its pair's list (``sql/search_impacts.py``): its pages
counted in ``search_df`` (FTS5's IDF of the phrase: the pages that match it), its
counts in the rows' bits. Why longer phrases decline: a phrase's IDF is the
count of pages that have it, which FTS5 finds only by matching the phrase —
most of what the SQL ranking costs — and a phrase of three common words is on a
small share of its rarest pair's pages, so a walk would score many pages for
each one that matches.

Document frequencies cost a count each; they are cached for a minute, as in
the PostgreSQL engine (a few new pages barely move an IDF).
"""

from __future__ import annotations

import sqlite3
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from shared.search.request import SearchRequest
from shared.stores.sql.search_impacts import INDEX_RANKING, MAX_PAGE_ID, impact_rows
from shared.stores.sql.search_impacts import idf as bm25_idf
from shared.stores.sql.search_walk import (
    Doc,
    Docs,
    KeyRows,
    Late,
    Phrase,
    Read,
    Rows,
    Texts,
    drive,
    walk,
    worth_a_walk,
)
from shared.stores.sqlite.search_groups import MARK, PREFIX_LENGTHS, phrases_of

__all__ = ["TopK", "page_impacts", "read_averages"]

_DF_TTL_S = 60.0
_DF_MAX = 20_000
#: a prefix list's document frequency: each page has the prefix token in exactly one of its impact rows (a
#: term's is in ``search_df``, counted by the indexer as the index changes)
_COUNT = "SELECT count(*) FROM search_imp WHERE search_imp MATCH ?"
#: a long prefix's: the pages FTS5's bm25 counts as its hits (a page may hold it in several impact rows)
_COUNT_FTS = "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?"
#: the least share of its walked list's pages a long prefix must match (``best``)
_MIN_SHARE = 0.25


def page_impacts(
    title: Sequence[str], body: Sequence[str], kind: str, published: int | None, written: int
) -> list[tuple[int, str]]:
    """A page's rows of ``search_imp`` less its rowid: its terms and prefix tokens grouped by key."""
    return impact_rows(title, body, kind, published, written, PREFIX_LENGTHS, MARK)


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """An SQLite varint at ``data[i]``: its value and the index after it."""
    value = 0
    for n in range(9):
        byte = data[i + n]
        if n == 8:
            return (value << 8) | byte, i + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, i + n + 1
    raise AssertionError("unreachable")


def read_averages(conn: sqlite3.Connection) -> tuple[int, int]:
    """FTS5's row count and total tokens of ``search_fts`` (its averages record, what bm25 reads)."""
    row = conn.execute("SELECT block FROM search_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    data: bytes = row[0]
    rows, i = _varint(data, 0)
    tokens = 0
    while i < len(data):
        n, i = _varint(data, i)
        tokens += n
    return rows, tokens


class _Frequencies:
    """Document frequencies (by MATCH text and the count that gives them), cached for ``_DF_TTL_S``
    (used on the reader thread only)."""

    def __init__(self) -> None:
        self._cache: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def get(self, conn: sqlite3.Connection, count: str, match: str) -> int:
        now = time.monotonic()
        key = f"{count is _COUNT}{match}"
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] <= _DF_TTL_S:
            self._cache.move_to_end(key)
            return hit[1]
        n = int(conn.execute(count, (match,)).fetchone()[0])
        self._cache[key] = (now, n)
        self._cache.move_to_end(key)
        while len(self._cache) > _DF_MAX:
            self._cache.popitem(last=False)
        return n


_ROWS = "SELECT rowid FROM search_imp WHERE search_imp MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?"
_KEY_ROWS = "SELECT rowid FROM search_imp WHERE search_imp MATCH ? AND rowid >= ? AND rowid < ?"
_LATE = "SELECT id FROM search_docs WHERE kind = 'news' AND ref_at > ? LIMIT ?"


def _quoted(token: str) -> str:
    # terms are runs of letters and digits: quoted, a term is one literal token, never FTS5 syntax
    return '"' + token + '"'


def _chunks(ids: Sequence[int], size: int = 500) -> Iterable[Sequence[int]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


class _Reads:
    """What the walk asks, answered from the impact index and ``search_docs`` (reader thread)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __call__(self, ask: Read) -> Any:
        conn = self.conn
        if isinstance(ask, Rows):
            return {
                name: [r[0] for r in conn.execute(_ROWS, (_quoted(name), below, limit))]
                for name, below, limit in ask.lists
            }
        if isinstance(ask, KeyRows):
            return {
                name: [r[0] for r in conn.execute(_KEY_ROWS, (_quoted(name), lo, hi))] for name, lo, hi in ask.lists
            }
        if isinstance(ask, Docs):
            docs: dict[int, Doc] = {}
            for part in _chunks(ask.ids):
                marks = ", ".join("?" * len(part))
                for i, kind, published, host, length in conn.execute(
                    f"SELECT id, kind, published, host, length FROM search_docs WHERE id IN ({marks})", part
                ):
                    docs[i] = Doc(kind, published, host, length)
            return docs, (self._texts(ask.ids) if ask.texts else {})
        if isinstance(ask, Texts):
            return self._texts(ask.ids)
        assert isinstance(ask, Late)
        return [r[0] for r in conn.execute(_LATE, (ask.now, ask.limit))]

    def _texts(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        texts: dict[int, tuple[str, str]] = {}
        for part in _chunks(ids):
            marks = ", ".join("?" * len(part))
            # the FTS5 table's own content (search_fts_content: c0 = title, c1 = body terms)
            for i, title, body in self.conn.execute(
                f"SELECT id, c0, c1 FROM search_fts_content WHERE id IN ({marks})", part
            ):
                texts[i] = (f" {title or ''} ", f" {body or ''} ")
        return texts


class TopK:
    """The walk over ``search_imp`` (one per search index; reader thread only)."""

    def __init__(self) -> None:
        self._df = _Frequencies()

    def best(self, conn: sqlite3.Connection, request: SearchRequest) -> list[tuple[int, float]] | None:
        """``(page rowid, score)`` of the best ``limit + 1`` matches, best first; None: rank in SQL."""
        q = request.query
        if request.cursor is not None or request.ranking != INDEX_RANKING or q.empty:
            return None
        n_rows, n_tokens = read_averages(conn)
        if n_rows <= 0:
            return None
        top_id = conn.execute("SELECT max(id) FROM search_docs").fetchone()[0]
        if top_id is None or top_id > MAX_PAGE_ID:
            return None
        groups: list[list[Phrase]] = []
        df: dict[str, int] = {}
        group_docs: list[int] = []
        for terms in q.groups:
            alternatives = phrases_of(terms)
            if alternatives is None:
                return None
            for p in alternatives:
                if p.exact and not p.prefix:  # a term or a pair: its pages are counted as the index changes
                    row = conn.execute("SELECT docs FROM search_df WHERE term = ?", (p.lists[0],)).fetchone()
                    df[p.match] = int(row[0]) if row else 0
                elif p.exact:
                    df[p.match] = self._df.get(conn, _COUNT, _quoted(p.lists[0]))
                else:
                    # a long prefix walks a list of more pages than it matches; worth it only when most of
                    # them match (each one read is scored on its terms)
                    df[p.match] = self._df.get(conn, _COUNT_FTS, p.match)
                    if df[p.match] < _MIN_SHARE * self._df.get(conn, _COUNT, _quoted(p.lists[0])):
                        return None
            groups.append(alternatives)
            group_docs.append(min(n_rows, sum(df[p.match] for p in alternatives)))
        if not worth_a_walk(group_docs, n_rows):
            return None
        avgdl = n_tokens / n_rows
        idf = {m: bm25_idf(n_rows, n) for m, n in df.items()}
        excluded = {x for t in q.excluded for x in t.lemmas or (t.stem,)}
        best: list[tuple[int, float]] | None = drive(walk(request, groups, excluded, idf, avgdl), _Reads(conn))
        return best
