"""Reads the demo's progress from the stores (docs/architecture.md section 8, ``up --demo``).

The demo knows the canonical URL of every page each source should produce,
so per source it asks the stores about exactly those URLs:

* parsed  — the URL has an owner in the hash store (the parser and the
  autoparser claim a URL before they publish its document);
* waiting — the document is parked in the delay store, waiting for images;
* written — the Turbo page is in the page store (the KV store).

All four sources share one host (127.0.0.1), so ``waiting_by_host`` and a
per-host page count could not tell them apart; a few point reads per URL
can. A page once written stays counted (the demo never deletes), so each
poll only asks about the pages not written yet.
"""

from __future__ import annotations

from demo.content import Site, Source
from demo.progress import SourceProgress
from shared.stores import Stores

__all__ = ["Tracker"]


class Tracker:
    def __init__(self, site: Site, stores: Stores, feed_ids: dict[str, str]) -> None:
        self.site = site
        self.stores = stores
        #: source key -> feed id (the blog has none)
        self.feed_ids = feed_ids
        self._written: set[str] = set()
        self._parsed: set[str] = set()

    async def snapshot(self) -> list[SourceProgress]:
        return [await self._source(source) for source in self.site.sources]

    async def _source(self, source: Source) -> SourceProgress:
        pages, hashes, delay = self.stores.pages, self.stores.hashes, self.stores.delay
        waiting = 0
        for url in source.pages:
            if url in self._written:
                continue
            if await pages.get(url) is not None:
                self._written.add(url)
                self._parsed.add(url)
                continue
            if url not in self._parsed and await hashes.owner(url) is not None:
                self._parsed.add(url)
            if url in self._parsed and await delay.get(url) is not None:
                waiting += 1
        parsed = sum(1 for u in source.pages if u in self._parsed)
        written = sum(1 for u in source.pages if u in self._written)
        # the blog has no feed status: it counts as fetched once one of its pages was parsed
        fetched, error = parsed > 0, None
        feed_id = self.feed_ids.get(source.key)
        if feed_id is not None:
            feed = await self.stores.feeds.get(feed_id)
            if feed is not None:
                fetched = fetched or feed.status.last_fetch_at is not None
                error = feed.status.last_error
        return SourceProgress(
            label=source.label,
            expected=len(source.pages),
            parsed=parsed,
            waiting=waiting,
            written=written,
            fetched=fetched,
            error=error,
        )
