"""A search in one call, for tests: the URLs a query finds through ``stores.search``.

The index follows the pages through a queue (``shared/stores/search.py``); a test
that has just written pages wants them searchable, so each search here first
drains the queue, as the indexer cube would within its period.
"""

from __future__ import annotations

from typing import Any

from shared.search.query import parse_query
from shared.search.request import SearchRequest, SearchResults
from shared.stores import Stores


async def results(stores: Stores, text: str, **fields: Any) -> SearchResults:
    await stores.index_queue.catch_up()
    return await stores.search.search(SearchRequest(query=parse_query(text), **fields))


async def found(stores: Stores, text: str, **fields: Any) -> list[str]:
    """The URLs ``text`` finds, best first."""
    return [h.url for h in (await results(stores, text, **fields)).hits]
