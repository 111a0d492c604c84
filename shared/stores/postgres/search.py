"""PostgreSQL search: the ``russian`` / ``english`` configurations, GIN, a BM25-shaped rank (docs/architecture.md s.3).

The index is ``search_docs``, one row per live page, written by the indexer
from the queue of written pages (``search_queue.py``): the page's ``tsv``, the
terms of its title (weight A) and text (weight B) as ``shared/search/tokens.py``
makes them (lemmas, stems: the analyzer of the SQLite engine and of the
queries), beside what the filters and freshness read. A query is given as a
``tsquery`` of the same terms (``tsquery_text``: a word is any of its terms, a
prefix ``:*``, a phrase its words' first terms with ``<->``, ``!`` an
exclusion), so the server analyzes nothing and both engines match alike.

PostgreSQL has no BM25. The rank is its three ingredients: for each query word
(or phrase) its IDF, ``ln(1 + (N - df + 0.5) / (df + 0.5))``, times ``ts_rank``
of that word alone — a term frequency that saturates, a title position weighing
``title_weight`` times a text one — with ``ts_rank``'s length normalization
(÷ (1 + log length)); times the freshness factor. Document frequencies cost a
count each, so they are cached for a minute (a few new pages barely move an IDF).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from typing import Any

from shared.search.query import SearchQuery, Term
from shared.search.request import Cursor, SearchRequest, SearchResults
from shared.stores.codec import to_us
from shared.stores.postgres.db import PgDb
from shared.stores.sql.search import TOP_CHAR, freshness_params, freshness_sql, hit_from_row, with_suggestion

__all__ = ["PgSearchIndex", "PgVocabulary", "tsquery_text"]

#: how long a document frequency is trusted (s) and how many are kept
_DF_TTL_S = 60.0
_DF_MAX = 10_000
_TSQ = "CAST(? AS tsquery)"


def _quoted(term: str) -> str:
    # terms are runs of letters and digits: quoted, nothing in them is tsquery syntax
    return f"'{term}'"


def _word(t: Term) -> str:
    if t.prefix:
        return _quoted(t.stem) + ":*"
    alts = [_quoted(x) for x in t.lemmas or (t.stem,)]
    return alts[0] if len(alts) == 1 else "(" + " | ".join(alts) + ")"


def _group(g: tuple[Term, ...]) -> str:
    return _word(g[0]) if len(g) == 1 else "(" + " <-> ".join(_quoted(t.first) for t in g) + ")"


def tsquery_text(query: SearchQuery) -> str:
    """The ``tsquery`` of a (non-empty) query."""
    return " & ".join([*(_group(g) for g in query.groups), *(f"!{_word(t)}" for t in query.excluded)])


class _DocFrequencies:
    def __init__(self) -> None:
        self._cache: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def get(self, key: str) -> int | None:
        hit = self._cache.get(key)
        if hit is None or time.monotonic() - hit[0] > _DF_TTL_S:
            return None
        self._cache.move_to_end(key)
        return hit[1]

    def put(self, key: str, value: int) -> None:
        self._cache[key] = (time.monotonic(), value)
        self._cache.move_to_end(key)
        while len(self._cache) > _DF_MAX:
            self._cache.popitem(last=False)


class PgVocabulary:
    """The index's terms for "did you mean" (``shared/search/suggest.py``): ``search_vocab``, which the indexer
    fills, in code-point order (a prefix is a range); a term's pages counted on the GIN index, cached."""

    def __init__(self, db: PgDb, df: _DocFrequencies) -> None:
        self._db = db
        self._df = df

    async def candidates(self, prefix: str, min_len: int, max_len: int, limit: int) -> list[str]:
        rows = await self._db.fetch(
            "SELECT term FROM search_vocab WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ? LIMIT ?",
            prefix,
            prefix + TOP_CHAR,
            min_len,
            max_len,
            limit,
        )
        return [r[0] for r in rows]

    async def docs(self, term: str) -> int:
        key = _quoted(term)
        cached = self._df.get(key)
        if cached is None:
            row = await self._db.fetchone(f"SELECT count(*) FROM search_docs WHERE tsv @@ {_TSQ}", key)
            cached = int(row[0]) if row else 0
            self._df.put(key, cached)
        return cached


class PgSearchIndex:
    def __init__(self, db: PgDb) -> None:
        self._db = db
        self._df = _DocFrequencies()
        self._vocab = PgVocabulary(db, self._df)

    async def _count(self, key: str, sql: str, *args: Any) -> int:
        cached = self._df.get(key)
        if cached is None:
            row = await self._db.fetchone(sql, *args)
            cached = int(row[0]) if row else 0
            self._df.put(key, cached)
        return cached

    async def _idf(self, group: str) -> float:
        # N from the planner's row estimate (an IDF moves little with the pages written since), a
        # count only before the table was ever analyzed; either way no scan of the pages per search
        n = await self._count(
            "\0N",
            "SELECT CASE WHEN c.reltuples > 0 THEN c.reltuples::bigint"
            " ELSE (SELECT count(*) FROM search_docs) END FROM pg_class c WHERE c.oid = 'search_docs'::regclass",
        )
        df = await self._count(group, f"SELECT count(*) FROM search_docs WHERE tsv @@ {_TSQ}", group)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    async def _matches(self, request: SearchRequest, extra: str = "") -> tuple[str, list[Any]]:
        q, r, f = request.query, request.ranking, request.filters
        groups = [_group(g) for g in q.groups]
        weights = [0.1, 0.1, 1.0 / r.title_weight, 1.0]  # {D, C, B = text, A = title}
        rank_parts: list[str] = []
        params: list[Any] = []
        for g in groups:
            rank_parts.append(f"ts_rank(?::float4[], tsv, {_TSQ}, 1) * CAST(? AS DOUBLE PRECISION)")
            params.extend([weights, g, await self._idf(g)])
        published = "published"  # the publication instant, or the write's for an undated page
        score = f"({' + '.join(rank_parts)}) * {freshness_sql('kind', published)}"
        params.extend(freshness_params(r, request.now_us))
        text = tsquery_text(q)
        where = f"tsv @@ {_TSQ}"
        params.append(text)
        if f.host:
            where += " AND host = ?"
            params.append(f.host)
        if f.kind:
            where += " AND kind = ?"
            params.append(f.kind.value)
        if f.since:
            where += f" AND {published} >= ?"
            params.append(to_us(f.since))
        if f.until:
            where += f" AND {published} <= ?"
            params.append(to_us(f.until))
        return f"SELECT url, {score} AS score FROM search_docs WHERE {where}{extra}", params

    async def search(self, request: SearchRequest) -> SearchResults:
        if request.query.empty or request.limit <= 0:
            return SearchResults()
        matches, params = await self._matches(request)
        after, after_params = "", []
        cursor = request.cursor
        if cursor is not None:
            one, one_params = await self._matches(request, " AND url = ?")
            row = await self._db.fetchone(f"SELECT score FROM ({one}) m", *one_params, cursor.url)
            score = float(row[0]) if row is not None else cursor.score
            after = " WHERE score < CAST(? AS DOUBLE PRECISION) OR (score = CAST(? AS DOUBLE PRECISION) AND url > ?)"
            after_params = [score, score, cursor.url]
        top = await self._db.fetch(
            f"SELECT url, score FROM ({matches}) m{after} ORDER BY score DESC, url LIMIT ?",
            *params,
            *after_params,
            request.limit + 1,
        )
        if not top:
            return await with_suggestion(self, self._vocab, request, SearchResults())
        pages = {
            r[0]: r
            for r in await self._db.fetch(
                # a page gone since it was indexed is left out (its removal may still be in the queue)
                "SELECT url, host, title, text, written_at, kind, published_at FROM pages"
                " WHERE url = ANY(?::text[]) AND NOT deleted",
                [t[0] for t in top],
            )
        }
        hits = tuple(hit_from_row(pages[u], s, request.query) for u, s in top if u in pages)
        more = len(hits) > request.limit
        hits = hits[: request.limit]
        next_cursor = Cursor(request.now_us, hits[-1].score, hits[-1].url) if more and hits else None
        return await with_suggestion(self, self._vocab, request, SearchResults(hits=hits, next_cursor=next_cursor))
