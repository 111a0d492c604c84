"""SQLite search: FTS5 over Snowball stems, BM25 with the title weighted (docs/architecture.md s.3 and s.4).

The index is a regular FTS5 table, ``search_fts``, one row per live page under
the page's rowid: the stems of its title and text (``shared.search.analysis``,
stemmed in Python: SQLite's own tokenizers know no Russian); beside it
``search_docs``, a narrow table of the type, date and host that filters and
freshness read for every match. (They were unindexed FTS5 columns first: FTS5
keeps them in the row of the stems, so reading them loaded every match's text,
ten times the cost of its BM25 — 23 ms against 1.7 ms at the median query.)
The indexer writes both, and the impact rows, from the queue of written pages
(``search_queue.py``; ``shared/stores/search.py`` says why the index follows the
pages instead of being written with them), removals included.

A search of plain words on many pages walks the impact index ``search_imp``
(``search_topk.py``: each word's pages from the best bound down, scored exactly,
stopped once no unseen page can enter the results); any other search ranks every
match in SQL (``bm25 × freshness``) and takes the ``limit`` best after the
cursor. Either way only those pages' text is then read, for snippets. The
analyzer's version is kept in ``search_meta``; a store opened with rows indexed
by another version queues them all again (``search_queue.requeue_if_stale``).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Any

from shared.search.query import SearchQuery, Term
from shared.search.request import Cursor, SearchRequest, SearchResults
from shared.search.tokens import SEPARATOR, stream
from shared.stores.codec import to_us
from shared.stores.sql.search import TOP_CHAR, freshness_params, freshness_sql, hit_from_row, with_suggestion
from shared.stores.sql.search_impacts import MAX_PAGE_ID, pairs_of
from shared.stores.sqlite.db import SqliteDb
from shared.stores.sqlite.search_topk import TopK, page_impacts

__all__ = [
    "DocFields",
    "IndexTerms",
    "SqliteSearchIndex",
    "SqliteVocabulary",
    "drop_page",
    "fts_match",
    "index_terms",
    "write_page",
]

_INSERT = "INSERT INTO search_fts (rowid, title, body) VALUES (?, ?, ?)"
_INSERT_DOC = (
    "INSERT INTO search_docs (id, kind, published, host, length, ref_at, version, indexed_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_IMP_ROW = "INSERT INTO search_imp_rows (k, id, terms) VALUES (?, ?, ?)"
_INSERT_IMP = "INSERT INTO search_imp (rowid, terms) VALUES (?, ?)"
#: an external-content FTS5 table forgets a row when told its old values (the FTS5 'delete' command)
_DELETE_IMP = (
    "INSERT INTO search_imp (search_imp, rowid, terms) SELECT 'delete', k, terms FROM search_imp_rows WHERE id = ?"
)


@dataclass(frozen=True, slots=True)
class IndexTerms:
    title: str
    body: str
    #: the page's tokens, title and text (FTS5's document length)
    length: int = 0
    #: the page's rows of the impact index, less its rowid (``search_topk.page_impacts``)
    impacts: tuple[tuple[int, str], ...] = ()


def index_terms(title: str, body: str, kind: str, published: int | None, written: int) -> IndexTerms:
    """What the index stores for a page's title and text (``published``: its freshness instant, µs)."""
    t, b = stream(title).tokens, stream(body).tokens
    return IndexTerms(" ".join(t), " ".join(b), len(t) + len(b), tuple(page_impacts(t, b, kind, published, written)))


@dataclass(frozen=True, slots=True)
class DocFields:
    """What filters and freshness read of an indexed page (``search_docs``)."""

    kind: str
    #: the publication instant (µs), or the write's for an undated page
    published: int | None
    host: str
    #: the write instant (µs): when the impact rows took the page's freshness
    written: int
    version: int


def write_page(conn: sqlite3.Connection, rowid: int, terms: IndexTerms, doc: DocFields, indexed_at: int) -> None:
    """The index rows of the page at ``rowid`` (after ``drop_page``)."""
    conn.execute(_INSERT, (rowid, terms.title, terms.body))
    conn.execute(
        _INSERT_DOC, (rowid, doc.kind, doc.published, doc.host, terms.length, doc.written, doc.version, indexed_at)
    )
    if rowid <= MAX_PAGE_ID:  # past it the fast path declines (search_topk.TopK.best)
        rows = [(high | rowid, rowid, text) for high, text in terms.impacts]
        conn.executemany(_INSERT_IMP_ROW, rows)
        conn.executemany(_INSERT_IMP, [(k, text) for k, _, text in rows])


def drop_page(conn: sqlite3.Connection, rowid: int) -> set[str]:
    """Forget the index rows of the page at ``rowid`` (none is fine); the terms they held."""
    old = conn.execute("SELECT c0, c1 FROM search_fts_content WHERE id = ?", (rowid,)).fetchone()
    conn.execute("DELETE FROM search_fts WHERE rowid = ?", (rowid,))
    conn.execute("DELETE FROM search_docs WHERE id = ?", (rowid,))
    conn.execute(_DELETE_IMP, (rowid,))
    conn.execute("DELETE FROM search_imp_rows WHERE id = ?", (rowid,))
    return terms_of(old[0] or "", old[1] or "") if old is not None else set()


def terms_of(title: str, body: str) -> set[str]:
    """The distinct terms and pairs of a page's two streams (what ``search_df`` counts it under)."""
    t, b = title.split(" "), body.split(" ")
    out = set(t) | set(b) | pairs_of(t).keys() | pairs_of(b).keys()
    out.discard(SEPARATOR)
    out.discard("")
    return out


def count_terms(conn: sqlite3.Connection, deltas: Counter[str]) -> None:
    """Add ``deltas`` to the terms' page counts (``search_df``, what the walk's IDF and "did you mean" read)."""
    rows = [(t, n) for t, n in deltas.items() if n]
    conn.executemany(
        "INSERT INTO search_df (term, docs) VALUES (?, ?) ON CONFLICT (term) DO UPDATE SET docs = docs + excluded.docs",
        rows,
    )
    conn.executemany("DELETE FROM search_df WHERE term = ? AND docs <= 0", [(t,) for t, n in rows if n < 0])


def _quoted(token: str) -> str:
    # terms are runs of letters and digits: quoted, each is a literal token, never FTS5 syntax
    return '"' + token + '"'


def _word(t: Term) -> str:
    """One word: any of its terms (FTS5's bm25 then scores each term that is there), or a prefix."""
    if t.prefix:
        return _quoted(t.stem) + "*"
    alts = [_quoted(x) for x in t.lemmas or (t.stem,)]
    return alts[0] if len(alts) == 1 else "(" + " OR ".join(alts) + ")"


def _group(terms: tuple[Term, ...]) -> str:
    """A query group: one word, or a phrase of the words' first terms (``shared/search/tokens.py``)."""
    if len(terms) == 1:
        return _word(terms[0])
    return _quoted(" ".join(t.first for t in terms))


def fts_match(query: SearchQuery) -> str:
    """The FTS5 MATCH expression of a (non-empty) query."""
    expr = " AND ".join(_group(g) for g in query.groups)
    if query.excluded:
        expr = f"({expr})" + "".join(f" NOT {_word(t)}" for t in query.excluded)
    return expr


def _matches_sql(request: SearchRequest, extra: str = "") -> tuple[str, list[Any]]:
    """Every match's rowid and score (filters applied), and the parameters."""
    r, f = request.ranking, request.filters
    score = f"-bm25(search_fts, ?, 1.0) * {freshness_sql('d.kind', 'd.published')}"
    params: list[Any] = [r.title_weight, *freshness_params(r, request.now_us), fts_match(request.query)]
    where = "search_fts MATCH ?"
    if f.host:
        where += " AND d.host = ?"
        params.append(f.host)
    if f.kind:
        where += " AND d.kind = ?"
        params.append(f.kind.value)
    if f.since:
        where += " AND d.published >= ?"
        params.append(to_us(f.since))
    if f.until:
        where += " AND d.published <= ?"
        params.append(to_us(f.until))
    return (
        f"SELECT search_fts.rowid AS id, {score} AS score FROM search_fts"
        f" JOIN search_docs d ON d.id = search_fts.rowid WHERE {where}{extra}",
        params,
    )


def _search(
    conn: sqlite3.Connection, request: SearchRequest, topk: TopK | None = None
) -> tuple[list[tuple[Any, ...]], list[float]]:
    best = topk.best(conn, request) if topk is not None else None
    top = best if best is not None else _ranked(conn, request)
    if not top:
        return [], []
    ids = [t[0] for t in top]
    marks = ", ".join("?" * len(ids))
    rows = {
        r[0]: r[1:]
        for r in conn.execute(
            # a page gone since it was indexed is left out (its removal may still be in the queue)
            f"SELECT rowid, url, host, title, text, written_at, kind, published_at FROM pages"
            f" WHERE rowid IN ({marks}) AND NOT deleted",
            ids,
        )
    }
    kept = [(rows[i], s) for i, s in top if i in rows]
    return [k[0] for k in kept], [k[1] for k in kept]


def _ranked(conn: sqlite3.Connection, request: SearchRequest) -> list[tuple[int, float]]:
    """Every match ranked in SQL (bm25 × freshness): the best ``limit + 1`` after the cursor."""
    matches, params = _matches_sql(request)
    after = ""
    after_params: list[Any] = []
    cursor = request.cursor
    if cursor is not None:
        row = conn.execute("SELECT rowid FROM pages WHERE url = ?", (cursor.url,)).fetchone()
        score = cursor.score
        if row is not None:
            # the cursor page's score now (BM25 moves with every page written), so the walk continues after it
            one, one_params = _matches_sql(request, " AND search_fts.rowid = ?")
            now = conn.execute(f"SELECT score FROM ({one})", (*one_params, row[0])).fetchone()
            score = now[0] if now is not None else score
            after = " WHERE score < ? OR (score = ? AND id > ?)"
            after_params = [score, score, row[0]]
        else:
            after = " WHERE score < ?"
            after_params = [score]
    return [
        (int(r[0]), float(r[1]))
        for r in conn.execute(
            f"SELECT id, score FROM ({matches}){after} ORDER BY score DESC, id LIMIT ?",
            (*params, *after_params, request.limit + 1),
        )
    ]


class SqliteVocabulary:
    """The index's terms for "did you mean" (``shared/search/suggest.py``): ``search_df``, each with its pages."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def candidates(self, prefix: str, min_len: int, max_len: int, limit: int) -> list[str]:
        sql = (
            "SELECT term FROM search_df WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ? AND docs > 0"
            " LIMIT ?"
        )
        args = (prefix, prefix + TOP_CHAR, min_len, max_len, limit)
        return [r[0] for r in await self._db.read(lambda conn: conn.execute(sql, args).fetchall())]

    async def docs(self, term: str) -> int:
        row = await self._db.read_inline(
            lambda conn: conn.execute("SELECT docs FROM search_df WHERE term = ?", (term,)).fetchone()
        )
        return int(row[0]) if row else 0


class SqliteSearchIndex:
    def __init__(self, db: SqliteDb) -> None:
        self._db = db
        self._topk = TopK()
        self._vocab = SqliteVocabulary(db)

    async def search(self, request: SearchRequest) -> SearchResults:
        if request.query.empty or request.limit <= 0:
            return SearchResults()
        rows, scores = await self._db.read(lambda conn: _search(conn, request, self._topk))
        # snippets on the loop, not the reader thread: they stem words, and stemmers belong to a thread
        # the row past the page only says there is more: no snippet made for it
        more = len(rows) > request.limit
        shown = zip(rows[: request.limit], scores[: request.limit], strict=True)
        hits = tuple(hit_from_row(row, score, request.query) for row, score in shown)
        next_cursor = Cursor(request.now_us, hits[-1].score, hits[-1].url) if more and hits else None
        return await with_suggestion(self, self._vocab, request, SearchResults(hits=hits, next_cursor=next_cursor))
