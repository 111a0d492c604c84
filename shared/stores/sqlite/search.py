"""SQLite search: FTS5 over Snowball stems, BM25 with the title weighted (docs/architecture.md s.3 and s.4).

The index is a regular FTS5 table, ``search_fts``, one row per live page under
the page's rowid: the stems of its title and text (``shared.search.analysis``,
stemmed in Python: SQLite's own tokenizers know no Russian); beside it
``search_docs``, a narrow table of the type, date and host that filters and
freshness read for every match. (They were unindexed FTS5 columns first: FTS5
keeps them in the row of the stems, so reading them loaded every match's text,
ten times the cost of its BM25 — 23 ms against 1.7 ms at the median query.)
The page store writes both in the page's transaction (``index_page``); triggers
drop a page's rows when it is tombstoned or deleted by any path, so the index
follows every removal.

A search of plain words on many pages walks the impact index ``search_imp``
(``search_topk.py``: each word's pages from the best bound down, scored exactly,
stopped once no unseen page can enter the results); any other search ranks every
match in SQL (``bm25 × freshness``) and takes the ``limit`` best after the
cursor. Either way only those pages' text is then read, for snippets. The
analyzer's version is kept in ``search_meta``; a store opened with rows indexed
by another version re-indexes them (``reindex_if_stale``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from shared.search.analysis import ANALYZER_VERSION, page_lang, stems, words
from shared.search.kinds import page_kind
from shared.search.query import SearchQuery, Term
from shared.search.request import Cursor, SearchRequest, SearchResults
from shared.stores.codec import to_us
from shared.stores.pages import Page
from shared.stores.sql.search import freshness_params, freshness_sql, hit_from_row
from shared.stores.sqlite.db import SqliteDb
from shared.stores.sqlite.search_topk import MAX_PAGE_ID, TopK, impact_rows

__all__ = ["IndexTerms", "SqliteSearchIndex", "fts_match", "index_page", "index_terms", "reindex_if_stale"]

log = logging.getLogger(__name__)

#: pages re-indexed per transaction (a few ms of write lock each)
_REINDEX_CHUNK = 500
_INSERT = "INSERT INTO search_fts (rowid, title, body) VALUES (?, ?, ?)"
_INSERT_DOC = "INSERT INTO search_docs (id, kind, published, host, length, ref_at) VALUES (?, ?, ?, ?, ?, ?)"
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
    #: the page's rows of the impact index, less its rowid (``search_topk.impact_rows``)
    impacts: tuple[tuple[int, str], ...] = ()


def _terms(title: str, body: str, kind: str, published: int | None, written: int) -> IndexTerms:
    t, b = stems(words(title)), stems(words(body))
    return IndexTerms(" ".join(t), " ".join(b), len(t) + len(b), tuple(impact_rows(t, b, kind, published, written)))


def index_terms(page: Page) -> IndexTerms | None:
    """What the index stores for ``page``, or None when it is not searchable (a tombstone, an empty preview)."""
    if page.deleted or not (page.title or page.text):
        return None
    written = to_us(page.written_at) or 0
    return _terms(page.title, page.text, page.kind, to_us(page.published_at) or written, written)


def index_page(conn: sqlite3.Connection, rowid: int, page: Page, terms: IndexTerms | None) -> None:
    """Replace the index row of the page at ``rowid`` (inside the page's write)."""
    _drop(conn, rowid)
    if terms is not None:
        published = to_us(page.published_at or page.written_at)
        _write(conn, rowid, terms, page.kind, published, page.host, to_us(page.written_at) or 0)


def _write(
    conn: sqlite3.Connection, rowid: int, terms: IndexTerms, kind: str, published: int | None, host: str, ref: int
) -> None:
    conn.execute(_INSERT, (rowid, terms.title, terms.body))
    conn.execute(_INSERT_DOC, (rowid, kind, published, host, terms.length, ref))
    if rowid <= MAX_PAGE_ID:  # past it the fast path declines (search_topk.TopK.best)
        rows = [(high | rowid, rowid, text) for high, text in terms.impacts]
        conn.executemany(_INSERT_IMP_ROW, rows)
        conn.executemany(_INSERT_IMP, [(k, text) for k, _, text in rows])


def _drop(conn: sqlite3.Connection, rowid: int) -> None:
    conn.execute("DELETE FROM search_fts WHERE rowid = ?", (rowid,))
    conn.execute("DELETE FROM search_docs WHERE id = ?", (rowid,))
    conn.execute(_DELETE_IMP, (rowid,))
    conn.execute("DELETE FROM search_imp_rows WHERE id = ?", (rowid,))


def _phrase(terms: tuple[Term, ...]) -> str:
    # stems are runs of letters and digits: quoting makes every one a literal token, never syntax
    text = '"' + " ".join(t.stem for t in terms) + '"'
    return text + "*" if len(terms) == 1 and terms[0].prefix else text


def fts_match(query: SearchQuery) -> str:
    """The FTS5 MATCH expression of a (non-empty) query."""
    expr = " AND ".join(_phrase(g) for g in query.groups)
    if query.excluded:
        expr = f"({expr})" + "".join(f" NOT {_phrase((t,))}" for t in query.excluded)
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
            f"SELECT rowid, url, host, title, text, written_at, kind, published_at FROM pages WHERE rowid IN ({marks})",
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


class SqliteSearchIndex:
    def __init__(self, db: SqliteDb) -> None:
        self._db = db
        self._topk = TopK()

    async def search(self, request: SearchRequest) -> SearchResults:
        if request.query.empty or request.limit <= 0:
            return SearchResults()
        rows, scores = await self._db.read(lambda conn: _search(conn, request, self._topk))
        # snippets on the loop, not the reader thread: they stem words, and stemmers belong to a thread
        hits = tuple(hit_from_row(row, score, request.query) for row, score in zip(rows, scores, strict=True))
        more = len(hits) > request.limit
        hits = hits[: request.limit]
        next_cursor = Cursor(request.now_us, hits[-1].score, hits[-1].url) if more and hits else None
        return SearchResults(hits=hits, next_cursor=next_cursor)


def _legacy_fields(doc_json: bytes | None, title: str, text: str) -> tuple[str, int | None, str]:
    """Type, publication time and language of a page written before pages had them, from its JSON form."""
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
    kind = page_kind(str(doc.get("kind", "article")), published).value
    return kind, to_us(published), page_lang(None, f"{title} {text[:2000]}")


def _reindex_chunk(conn: sqlite3.Connection, after: int) -> tuple[int, int]:
    """Index the live pages after rowid ``after`` (one chunk): (the last rowid done or 0, pages indexed)."""
    rows = conn.execute(
        "SELECT rowid, host, title, text, kind, published_at, written_at, doc_json FROM pages"
        " WHERE rowid > ? AND NOT deleted ORDER BY rowid LIMIT ?",
        (after, _REINDEX_CHUNK),
    ).fetchall()
    for rowid, host, title, text, kind, published, written, doc_json in rows:
        if not kind:
            # written before pages had a type: the index takes it from the page's JSON form; the page
            # itself is left as it was written (another process may be writing it right now)
            kind, published, _lang = _legacy_fields(doc_json, title, text)
        _drop(conn, rowid)
        if title or text:
            _write(conn, rowid, _terms(title, text, kind, published or written, written), kind, published or written,
                   host, written)  # fmt: skip
    return (rows[-1][0] if rows else 0), len(rows)


async def reindex_if_stale(db: SqliteDb) -> int:
    """Index every live page again when the index was made by another analyzer version; pages indexed."""
    row = await db.read(lambda conn: conn.execute("SELECT value FROM search_meta WHERE key = 'analyzer'").fetchone())
    if row is not None and row[0] == str(ANALYZER_VERSION):
        return 0
    done, after = 0, 0
    while True:
        after, n = await db.write(functools.partial(_reindex_chunk, after=after), long=True)
        done += n
        if not after:
            break
    await db.write(
        lambda conn: conn.execute(
            "INSERT INTO search_meta (key, value) VALUES ('analyzer', ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(ANALYZER_VERSION),),
        )
    )
    if done:
        log.info("search index rebuilt for analyzer version %d: %d pages", ANALYZER_VERSION, done)
    return done
