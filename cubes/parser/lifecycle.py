"""The parser's part of pages following their source (docs/architecture.md section 3).

* ``follow_catalog``: after a full YML catalog is read, the offers it no longer
  has are removed, or held when it lost too many (``removals.py`` has the rule);
* ``feed_registered``: a feed deleted (``feeds.registry``, ``action=delete``)
  takes its pages with it -- every page it published and still owns gets a
  tombstone (the kvwriter removes it from the KV store and the search index) and
  its ownership is released, so another source may publish the URL. Pages another
  source owns now are left alone;
* ``host_off``: the webmaster switched its Turbo pages of the host off
  (``TenantStore.set_turbo``): at each fetch of one of its feeds, every page of
  its own there -- the feed's, the tenant's uploads' -- is removed, and nothing
  of it is published; the autoparser's pages too once no holder of a right on
  the host keeps its pages on. Another holder's pages stay (``shared.webmaster.rights``).
  Switched on again, the next fetch publishes it all again (the hash store
  remembers the removals, so nothing reads as unchanged).

Both go through ``ItemRecorder.remove_many``, like a Turbo ``turbo="false"``:
one path for every removal, so the hash store always knows what was removed
(the same page published again later is a change, not "unchanged").
"""

from __future__ import annotations

import logging
from collections.abc import Container
from datetime import datetime

from cubes.parser.items import ItemRecorder, Seen, Source, record
from cubes.parser.model import ParseResult
from cubes.parser.removals import catalog_removals, source_removals
from cubes.parser.status import Outcome
from shared.clock import Clock
from shared.messages import FeedFormat, FeedRegistration, SourceKind, SourceRef
from shared.stores import Stores
from shared.urls import canonical_url

__all__ = ["Lifecycle", "complete"]

log = logging.getLogger(__name__)

#: problem codes that mean the body was not read to its end
_CUT = frozenset({"xml.malformed", "xml.hostile", "xml.recovered", "feed.not_readable", "fetch.too_large"})
#: a deleted feed's format -> the kind its documents were published as (priority only matters for
#: conflicts, and a deleted feed removes only what it owns)
_KINDS = {FeedFormat.turbo: SourceKind.turbo, FeedFormat.yml: SourceKind.yml}


def complete(result: ParseResult) -> bool:
    """A catalog read to its end: no XML error cut it off (only then do missing offers mean removed)."""
    return not result.fatal and not any(e.code in _CUT for e in result.errors)


def _canonical(url: str) -> str:
    try:
        return canonical_url(url)
    except ValueError:
        return url


class Lifecycle:
    def __init__(self, stores: Stores, items: ItemRecorder, clock: Clock) -> None:
        self.stores = stores
        self.items = items
        self.clock = clock

    async def follow_catalog(
        self, src: Source, run: Outcome, seen: Seen, parsed_at: datetime, feed_url: str, current: Container[str]
    ) -> None:
        """The offers a full catalog no longer has: removed, or held when it lost too many."""
        if src.preview:
            return
        plan = await catalog_removals(self.stores.hashes, src.store_id, _canonical(feed_url), current)
        if plan.held:
            run.errors.append(plan.warning())
            run.keep_reading = True  # the same body is read again next time: that fetch may agree
            return
        reasons = ["not in the catalog any more"] * len(plan.removals)
        await self.items.remove_many(plan.removals, src, run, seen, parsed_at, reasons=reasons)

    async def feed_registered(self, msg: FeedRegistration) -> Outcome:
        """A registration: nothing for an upsert; a deleted feed's pages removed."""
        run = Outcome()
        if msg.action != "delete":
            return run
        store_id = f"feed:{msg.feed_id}"
        removals = await source_removals(self.stores.hashes, store_id)
        if not removals:
            return run
        now = self.clock.now()
        kind = _KINDS.get(msg.format, SourceKind.rss)
        src = Source(kind, SourceRef(kind=kind, id=msg.feed_id), store_id, msg.host, now, tenant_id=msg.tenant_id)
        seen = Seen()
        reasons = ["the feed was deleted"] * len(removals)
        await self.items.remove_many(removals, src, run, seen, now, reasons=reasons)
        seen.releases.extend(r.url for r in removals)  # the URLs are free for another source now
        run.writes.append(record(self.stores.hashes, store_id, seen, now))
        log.info("feed %s deleted: %d page(s) removed", msg.feed_id, len(removals))
        return run

    async def host_off(self, feed_id: str | None, tenant_id: str | None, host: str, kind: SourceKind) -> Outcome:
        """Every page of ``host`` removed (its Turbo pages are switched off); the count in ``run.results``."""
        run = Outcome()
        now = self.clock.now()
        sources: list[tuple[str, SourceKind, str, str | None]] = (
            [(f"feed:{feed_id}", kind, feed_id, None)] if feed_id else []
        )
        if tenant_id:
            sources.append((f"tenant:{tenant_id}", SourceKind.upload, tenant_id, host))
        if not await self.stores.tenants.turbo_enabled(host):
            # the autoparser's pages are nobody's: off once every holder of the host switched its pages off
            sources.append((f"autoparser:{host}", SourceKind.autoparser, host, None))
        for store_id, source_kind, ref_id, only in sources:
            removals = await source_removals(self.stores.hashes, store_id, host=only)
            if not removals:
                continue
            src = Source(source_kind, SourceRef(kind=source_kind, id=ref_id), store_id, host, now, tenant_id=tenant_id)
            seen = Seen()
            reasons = ["Turbo pages are switched off for the host"] * len(removals)
            await self.items.remove_many(removals, src, run, seen, now, reasons=reasons)
            run.writes.append(record(self.stores.hashes, store_id, seen, now))
        return run
