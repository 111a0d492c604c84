"""The search index's contract (docs/architecture.md section 3, "frontend" search; section 4, "stores").

Search reads the page store's live pages: a page is in the index from the
transaction that writes it until the one that tombstones or removes it (both
engines keep the index in the page's own transaction or row), so a deleted page
is never found. What is searched, ranked and returned is defined engine-free in
``shared.search``: the query language (``query.py``), the ranking (``ranking.py``),
filters and cursors (``request.py``), snippets (``snippets.py``). Engines:
``sqlite/search.py`` (FTS5 over stems, BM25; a common word's best pages found
through an impact-ordered index, ``sqlite/search_topk.py``) and ``postgres/search.py`` (the
``russian`` / ``english`` configurations, GIN).
"""

from __future__ import annotations

from typing import Protocol

from shared.search.request import SearchRequest, SearchResults

__all__ = ["SearchIndex"]


class SearchIndex(Protocol):
    async def search(self, request: SearchRequest) -> SearchResults:
        """The best ``request.limit`` pages for the request after its cursor, best first."""
        ...
