"""PostgreSQL search's fast path: the walk over the impact-ordered table (docs/architecture.md s.3).

``search_post`` holds one row per term and page under the impact key of
``sql/search_impacts.py`` (``PRIMARY KEY (term, k)``: a term's pages read from
the best bound down are an index range read backwards); ``search_docs`` what
the scoring reads of a page (its kind, date, host, length and streams). The
walk is ``sql/search_walk.py``, the one SQLite runs, driven here on the pool:
each thing it asks is one statement.

Unlike SQLite's, the table has no prefix lists: a prefix is walked as the OR
of its terms' lists (the vocabulary's terms that start with it, at most
``search.MAX_PREFIX_TERMS``; the bound is the sum of theirs), and counted in the
pages' streams; a phrase of two words walks its pair's list
(``sql/search_impacts.py``), as a word walks its own, and a longer one its rarest
pair's (every page with the phrase is on it, with a count at least the phrase's:
the bound holds), counted in the streams. The walk declines — and the caller ranks in full —
for cursor pages, rankings other than the index's, queries on few pages
(``MIN_DF`` here: scoring a match costs more on PostgreSQL, where its streams
travel to this process, than FTS5's bm25 on SQLite), prefixes of very many
terms and walks past their bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shared.search.request import SearchRequest
from shared.stores.postgres.db import PgDb
from shared.stores.sql.search_impacts import INDEX_RANKING, MAX_PAGE_ID
from shared.stores.sql.search_walk import (
    Doc,
    Docs,
    KeyRows,
    Late,
    Phrase,
    Read,
    Rows,
    Texts,
    drive_async,
    walk,
    worth_a_walk,
)

__all__ = ["MIN_DF", "PgTopK"]

#: queries expected to match fewer pages than this are ranked in full (``search_walk.worth_a_walk``)
MIN_DF = 200

#: a round's lists read together, each an index range read backwards
_ROWS = (
    "SELECT t.term, x.k FROM unnest($1::text[], $2::bigint[], $3::int[]) AS t(term, below, lim)"
    " CROSS JOIN LATERAL (SELECT k FROM search_post p WHERE p.term = t.term AND p.k < t.below"
    " ORDER BY p.k DESC LIMIT t.lim) x ORDER BY t.term, x.k DESC"
)
_KEY_ROWS = (
    "SELECT t.term, x.k FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS t(term, lo, hi)"
    " CROSS JOIN LATERAL (SELECT k FROM search_post p WHERE p.term = t.term AND p.k >= t.lo AND p.k < t.hi) x"
)
_DOCS = "SELECT id, kind, published, host, length FROM search_docs WHERE id = ANY($1::bigint[])"
_DOCS_TEXTS = (
    "SELECT id, kind, published, host, length, title_terms, body_terms FROM search_docs WHERE id = ANY($1::bigint[])"
)
_TEXTS = "SELECT id, title_terms, body_terms FROM search_docs WHERE id = ANY($1::bigint[])"
_LATE = "SELECT id FROM search_docs WHERE kind = 'news' AND written_at > $1 LIMIT $2"


class PgTopK:
    """The walk over ``search_post`` on PostgreSQL."""

    def __init__(self, db: PgDb) -> None:
        self._db = db

    async def best(
        self,
        request: SearchRequest,
        groups: Sequence[Sequence[Phrase]],
        df: dict[str, int],
        idf: dict[str, float],
        n_rows: int,
        avgdl: float,
    ) -> list[tuple[int, float]] | None:
        """``(page id, score)`` of the best ``limit + 1`` matches, best first; None: rank in full."""
        q = request.query
        if request.cursor is not None or request.ranking != INDEX_RANKING or q.empty or n_rows <= 0:
            return None
        if any(not p.lists for g in groups for p in g):
            return None  # a phrase, or a prefix of too many terms
        group_docs = [min(n_rows, sum(df[p.match] for p in g)) for g in groups]
        if not worth_a_walk(group_docs, n_rows, MIN_DF):
            return None
        excluded = {x for t in q.excluded for x in t.lemmas or (t.stem,)}
        async with self._db.connection() as conn:
            top_id = await conn.fetchval("SELECT max(id) FROM search_docs")
            if top_id is None or top_id > MAX_PAGE_ID:
                return None

            async def read(ask: Read) -> Any:
                if isinstance(ask, Rows | KeyRows):
                    sql = _ROWS if isinstance(ask, Rows) else _KEY_ROWS
                    out: dict[str, list[int]] = {}
                    for term, k in await conn.fetch(sql, *(list(c) for c in zip(*ask.lists, strict=True))):
                        out.setdefault(term, []).append(k)
                    return out
                if isinstance(ask, Docs):
                    rows = await conn.fetch(_DOCS_TEXTS if ask.texts else _DOCS, list(ask.ids))
                    docs = {r[0]: Doc(r[1], r[2], r[3], r[4]) for r in rows}
                    return docs, ({r[0]: (f" {r[5]} ", f" {r[6]} ") for r in rows} if ask.texts else {})
                if isinstance(ask, Texts):
                    return {r[0]: (f" {r[1]} ", f" {r[2]} ") for r in await conn.fetch(_TEXTS, list(ask.ids))}
                assert isinstance(ask, Late)
                return [r[0] for r in await conn.fetch(_LATE, ask.now, ask.limit)]

            best: list[tuple[int, float]] | None = await drive_async(walk(request, groups, excluded, idf, avgdl), read)
        return best
