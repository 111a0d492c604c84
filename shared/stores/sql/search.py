"""What both engines' search share: the freshness expression, turning rows into hits and the "did you mean"
step (docs/architecture.md s.3).

The formula is ``shared.search.ranking.Ranking.freshness``; this is its SQL,
with ``?`` parameters (``now_us``, ``boost``, ``half_life_s``, ``half_life_s``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from shared.search.kinds import PageKind
from shared.search.query import SearchQuery, parse_query
from shared.search.ranking import Ranking
from shared.search.request import Hit, SearchRequest, SearchResults
from shared.search.snippets import highlight, make_snippet
from shared.search.suggest import Vocabulary, suggest
from shared.stores.codec import from_us
from shared.stores.search import SearchIndex

__all__ = ["TOP_CHAR", "freshness_params", "freshness_sql", "hit_from_row", "with_suggestion"]

#: what ends a prefix range of terms: every term that starts with the prefix sorts below prefix + this
TOP_CHAR = "\U0010ffff"


def freshness_sql(kind: str, published: str) -> str:
    """The freshness factor of a row, in SQL (``kind`` and ``published`` are its column expressions)."""
    # typed parameters: PostgreSQL cannot infer the type of a bare ? in arithmetic (SQLite takes CAST too)
    num, us = "CAST(? AS DOUBLE PRECISION)", "CAST(? AS BIGINT)"
    return (
        f"(CASE WHEN {kind} = 'news' THEN 1.0 + {num} * {num} / ({num} + (CASE WHEN {us} > coalesce({published}, 0)"
        f" THEN ({us} - coalesce({published}, 0)) / 1000000.0 ELSE 0.0 END)) ELSE 1.0 END)"
    )


def freshness_params(ranking: Ranking, now_us: int) -> list[Any]:
    half = ranking.freshness_half_life_s
    return [ranking.freshness_boost, half, half, now_us, now_us]


def hit_from_row(row: Sequence[Any], score: float, query: SearchQuery) -> Hit:
    """A result from ``(url, host, title, text, written_at, kind, published_at)`` and its score."""
    url, host, title, text, written_at, kind, published_at = row
    terms = query.terms
    return Hit(
        url=url,
        host=host,
        title=highlight(title or url, terms),
        snippet=make_snippet(text or "", terms),
        score=float(score),
        kind=PageKind(kind) if kind in PageKind.__members__ else None,
        published_at=from_us(published_at),
        written_at=from_us(written_at),
    )


async def with_suggestion(
    index: SearchIndex, vocab: Vocabulary, request: SearchRequest, results: SearchResults
) -> SearchResults:
    """``results``, with a "did you mean" when a first page found nothing and a corrected query finds something."""
    if results.hits or request.cursor is not None or not request.suggest or request.query.empty:
        return results
    text = await suggest(request.query, vocab)
    if text is None:
        return results
    check = await index.search(dataclasses.replace(request, query=parse_query(text), limit=1, suggest=False))
    return dataclasses.replace(results, suggestion=text) if check.hits else results
