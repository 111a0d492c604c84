"""PostgreSQL search: GIN to match, an impact-ordered table to find the best pages, BM25 as on SQLite
(docs/architecture.md s.3).

The index is ``search_docs``, one row per live page, written by the indexer
from the queue of written pages (``search_queue.py``): its ``tsv`` (the terms of
its title, weight A, and text, weight B, as ``shared/search/tokens.py`` makes
them: lemmas and stems, the analyzer of the SQLite engine and of the queries),
its streams and length, what the filters and freshness read; and
``search_post``, the impact index (``sql/search_impacts.py``: a term's pages
from the best bound of their score down, one row a term and page).

Both engines rank by one formula: FTS5's bm25 (its IDF, ``k1``, ``b``, the
title weighted) times the freshness (``shared/search/ranking.py``). A query of
words, prefixes and phrases on many pages is answered by the walk
(``search_topk.py``, the algorithm SQLite runs): a few hundred rows of the
impact index and the pages it scores, instead of every match. Any other (a
cursor page, few matches, a walk that gives up) is ranked in full: the GIN index
finds the matches, and each is scored here from its streams, by the same code
the walk scores with; exact either way.

Why this and not a search engine beside PostgreSQL (OpenSearch, Solr): the
index stays in the store, transactional with the queue that feeds it (nothing
lost, nothing indexed twice, nothing more to run, back up and keep in step),
and the ranking, the lemmas and the answers stay those of the embedded engine,
which the judged set and the walk's exactness tests hold both to. Measured on
100,000 pages (``bench/search.py``, 2 shared cores at load 3-5): 122 queries/s,
p50 6.1 ms, p99 45 ms, exact top 20; before pairs of terms (a phrase walked
its rarest word's list, and most phrases of common words gave up to the full
ranking, over a second each) 28 queries/s, p99 626 ms. The price is the
index: 21 million postings against 5 (2.5 GB against 0.7 GB on the bench's
corpus of few distinct words), and the indexer's CPU a page 0.42 -> 1.13 ms.

Document frequencies, the page count and the average length cost a count each:
cached for a minute (a few new pages barely move an IDF), as on SQLite.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from itertools import pairwise
from typing import Any

from shared.search.query import SearchQuery, Term
from shared.search.request import Cursor, SearchRequest, SearchResults
from shared.stores.codec import to_us
from shared.stores.postgres.db import PgDb
from shared.stores.postgres.search_topk import PgTopK
from shared.stores.sql.search import TOP_CHAR, hit_from_row, with_suggestion
from shared.stores.sql.search_impacts import freshness, pair_token, w
from shared.stores.sql.search_impacts import idf as bm25_idf
from shared.stores.sql.search_walk import Phrase

__all__ = ["Frequencies", "PgSearchIndex", "PgVocabulary", "phrases", "tsquery_text"]

#: how long a document frequency is trusted (s) and how many are kept
_DF_TTL_S = 60.0
_DF_MAX = 20_000
#: a prefix matching more terms than this is ranked in full (the walk reads a list for each, all of a round's
#: in one statement)
MAX_PREFIX_TERMS = 200


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


class Frequencies:
    """Counts by key, each trusted for ``_DF_TTL_S``: document frequencies, the page count and length."""

    def __init__(self) -> None:
        self._cache: OrderedDict[str, tuple[float, Any]] = OrderedDict()

    async def get(self, key: str, count: Callable[[], Awaitable[Any]]) -> Any:
        hit = self._cache.get(key)
        now = time.monotonic()
        if hit is not None and now - hit[0] <= _DF_TTL_S:
            self._cache.move_to_end(key)
            return hit[1]
        value = await count()
        self._cache[key] = (now, value)
        self._cache.move_to_end(key)
        while len(self._cache) > _DF_MAX:
            self._cache.popitem(last=False)
        return value


class PgVocabulary:
    """The index's terms (``search_df``: each with its pages, counted by the indexer; in code-point order, so a
    prefix is a range) for "did you mean" (``shared/search/suggest.py``) and a prefix's terms."""

    def __init__(self, db: PgDb, df: Frequencies) -> None:
        self._db = db
        self._df = df

    async def candidates(self, prefix: str, min_len: int, max_len: int, limit: int) -> list[str]:
        rows = await self._db.fetch(
            "SELECT term FROM search_df WHERE term >= ? AND term < ? AND length(term) BETWEEN ? AND ? AND docs > 0"
            " LIMIT ?",
            prefix,
            prefix + TOP_CHAR,
            min_len,
            max_len,
            limit,
        )
        return [r[0] for r in rows]

    async def docs(self, term: str) -> int:
        row = await self._db.fetchone("SELECT docs FROM search_df WHERE term = ?", term)
        return int(row[0]) if row else 0

    async def docs_many(self, terms: Sequence[str]) -> dict[str, int]:
        """Each term's pages (those not in the index: none), one statement."""
        if not terms:
            return {}
        rows = await self._db.fetch("SELECT term, docs FROM search_df WHERE term = ANY(?::text[])", list(terms))
        return {r[0]: int(r[1]) for r in rows}

    async def docs_of_prefix(self, prefix: str) -> int:
        """The pages of every term that starts with ``prefix``, added up (a bound of the prefix's own)."""
        row = await self._db.fetchone(
            "SELECT coalesce(sum(docs), 0) FROM search_df WHERE term >= ? AND term < ?", prefix, prefix + TOP_CHAR
        )
        return int(row[0]) if row else 0


async def phrases(query: SearchQuery, vocab: PgVocabulary) -> tuple[list[list[Phrase]], dict[str, int]]:
    """Each query group's phrases, as bm25 scores them (``search_walk.Phrase``), and each one's pages: a word's
    lemmas (their counts in ``search_df``); a prefix, read from the lists of its terms (``()`` past
    ``MAX_PREFIX_TERMS``), on as many pages as its terms are, at most every page; a phrase of two words, its
    pair's list (``sql/search_impacts.py``), on its pair's pages (exactly its own); a longer phrase, read from
    the list of its rarest pair, on as many pages as that pair. Counting a prefix's or a longer phrase's own
    pages would read the GIN index for each (seconds for a common one); these bounds cost one read of
    ``search_df`` for the whole query, and the walk and the full ranking both rank by them."""
    prefixes = {g[0].stem: await vocab.candidates(g[0].stem, len(g[0].stem), 10_000, MAX_PREFIX_TERMS + 1)
                for g in query.groups if len(g) == 1 and g[0].prefix}  # fmt: skip
    wanted = {pair_token(a.first, b.first) for g in query.groups if len(g) > 1 for a, b in pairwise(g)}
    wanted |= {x for g in query.groups if len(g) == 1 and not g[0].prefix for x in g[0].lemmas or (g[0].stem,)}
    wanted |= {x for found in prefixes.values() if len(found) <= MAX_PREFIX_TERMS for x in found}
    docs = await vocab.docs_many(sorted(wanted))
    out: list[list[Phrase]] = []
    df: dict[str, int] = {}
    for g in query.groups:
        if len(g) > 1:
            firsts = [t.first for t in g]
            rarest = min((pair_token(a, b) for a, b in pairwise(firsts)), key=lambda x: docs.get(x, 0))
            rare = (rarest,) if docs.get(rarest) else ()
            p = Phrase(_group(g), rare, " ".join(firsts), exact=len(g) == 2)
            df[p.match] = docs.get(rarest, 0)
            out.append([p])
        elif g[0].prefix:
            stem, found = g[0].stem, prefixes[g[0].stem]
            lists = tuple(found) if len(found) <= MAX_PREFIX_TERMS else ()
            p = Phrase(_word(g[0]), lists, stem, prefix=True)
            df[p.match] = sum(docs.get(x, 0) for x in lists) if lists else await vocab.docs_of_prefix(stem)
            out.append([p])
        else:
            alternatives = [Phrase(x, (x,), x, exact=True) for x in g[0].lemmas or (g[0].stem,)]
            df.update((p.match, docs.get(p.token, 0)) for p in alternatives)
            out.append(alternatives)
    return out, df


def score(
    request: SearchRequest, all_phrases: Sequence[Phrase], idf: dict[str, float], avgdl: float, row: Sequence[Any]
) -> float:
    """The score of ``(id, kind, published, host, length, title_terms, body_terms)``, as the walk computes it."""
    _id, kind, published, _host, length, title, body = row
    title, body = f" {title} ", f" {body} "
    weight = request.ranking.title_weight
    total = 0.0
    for p in all_phrases:
        t, b = p.count(title), p.count(body)
        if t + b:
            total += idf[p.match] * w(weight * t + b, length, avgdl)
    return total * freshness(request.ranking, kind, published, request.now_us)


class PgSearchIndex:
    def __init__(self, db: PgDb) -> None:
        self._db = db
        self._df = Frequencies()
        self._vocab = PgVocabulary(db, self._df)
        #: the walk; None ranks every query in full (the benchmark's baseline)
        self._topk: PgTopK | None = PgTopK(db)

    async def _stats(self) -> tuple[int, float]:
        """Pages in the index and their average length (bm25's N and avgdl)."""

        async def count() -> tuple[int, float]:
            row = await self._db.fetchone(
                "SELECT count(*), coalesce(sum(length), 0) FROM search_docs WHERE id IS NOT NULL"
            )
            n, tokens = (int(row[0]), int(row[1])) if row else (0, 0)
            return n, (tokens / n if n else 0.0)

        stats: tuple[int, float] = await self._df.get("\0stats", count)
        return stats

    async def search(self, request: SearchRequest) -> SearchResults:
        if request.query.empty or request.limit <= 0:
            return SearchResults()
        n, avgdl = await self._stats()
        if n == 0:
            return await with_suggestion(self, self._vocab, request, SearchResults())
        groups, df = await phrases(request.query, self._vocab)
        if any(all(not p.prefix and not df[p.match] for p in g) for g in groups):
            # a word or a pair no indexed page has: nothing matches (the GIN index would say so, slowly)
            return await with_suggestion(self, self._vocab, request, SearchResults())
        idf = {m: bm25_idf(n, d) for m, d in df.items()}
        top = None
        if self._topk is not None:
            top = await self._topk.best(request, groups, df, idf, n, avgdl)
        if top is None:
            top = await self._ranked(request, groups, idf, avgdl)
        if not top:
            return await with_suggestion(self, self._vocab, request, SearchResults())
        rows = {
            r[0]: r[1:]
            for r in await self._db.fetch(
                # a page gone since it was indexed is left out (its removal may still be in the queue)
                "SELECT d.id, p.url, p.host, p.title, p.text, p.written_at, p.kind, p.published_at"
                " FROM search_docs d JOIN pages p ON p.url = d.url WHERE d.id = ANY(?::bigint[]) AND NOT p.deleted",
                [i for i, _ in top],
            )
        }
        found = [(i, s) for i, s in top if i in rows]
        more = len(found) > request.limit  # the row past the page only says there is more: no snippet for it
        hits = tuple(hit_from_row(rows[i], s, request.query) for i, s in found[: request.limit])
        next_cursor = Cursor(request.now_us, hits[-1].score, hits[-1].url) if more and hits else None
        return SearchResults(hits=hits, next_cursor=next_cursor)

    async def _ranked(
        self, request: SearchRequest, groups: Sequence[Sequence[Phrase]], idf: dict[str, float], avgdl: float
    ) -> list[tuple[int, float]]:
        """Every match scored: the best ``limit + 1`` after the cursor, as ``(id, score)``."""
        f = request.filters
        where = "tsv @@ CAST(? AS tsquery) AND id IS NOT NULL"
        params: list[Any] = [tsquery_text(request.query)]
        if f.host:
            where += " AND host = ?"
            params.append(f.host)
        if f.kind:
            where += " AND kind = ?"
            params.append(f.kind.value)
        if f.since:
            where += " AND published >= ?"
            params.append(to_us(f.since))
        if f.until:
            where += " AND published <= ?"
            params.append(to_us(f.until))
        rows = await self._db.fetch(
            f"SELECT id, kind, published, host, length, title_terms, body_terms FROM search_docs WHERE {where}",
            *params,
        )
        all_phrases = [p for g in groups for p in g]
        ranked = sorted(((score(request, all_phrases, idf, avgdl, r), r[0]) for r in rows), key=lambda x: (-x[0], x[1]))
        if request.cursor is not None:
            ranked = self._after(ranked, await self._id_of(request.cursor.url), request.cursor.score)
        return [(i, s) for s, i in ranked[: request.limit + 1]]

    async def _id_of(self, url: str) -> int | None:
        row = await self._db.fetchone("SELECT id FROM search_docs WHERE url = ?", url)
        return None if row is None else row[0]

    @staticmethod
    def _after(ranked: list[tuple[float, int]], cursor_id: int | None, cursor_score: float) -> list[tuple[float, int]]:
        """The ranking after the cursor: after its page as it scores now, else after its stored score."""
        now = next((s for s, i in ranked if i == cursor_id), None) if cursor_id is not None else None
        if now is None:
            return [x for x in ranked if x[0] < cursor_score]
        return [x for x in ranked if x[0] < now or (x[0] == now and cursor_id is not None and x[1] > cursor_id)]
