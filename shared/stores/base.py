"""``Stores``: every store of one engine, and the rules every engine keeps (docs/architecture.md section 4).

Rules every engine keeps (the contract suite in ``tests/contract`` checks them):

* Every write is idempotent; versioned writes never let an older version
  overwrite a newer one, so redelivered or reordered messages are harmless.
* URLs are canonical (``shared.urls.canonical_url``); the stores do not
  normalize them.
* Read-modify-write operations are atomic across processes (SQLite:
  ``BEGIN IMMEDIATE``; PostgreSQL: row locks), so two callers never both
  release one parked document or both order one image.
* An unreachable database raises ``shared.errors.StoreUnavailable``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from shared.stores.autoparser import AutoparserStore
from shared.stores.delay import DelayStore
from shared.stores.feeds import FeedStore
from shared.stores.hashes import HashStore
from shared.stores.images import ImageRegistry
from shared.stores.lanes import LaneStore
from shared.stores.notices import NoticeStore
from shared.stores.notify import NotifyStore
from shared.stores.pages import PageStore
from shared.stores.problems import ProblemStore
from shared.stores.search import IndexQueue, SearchIndex
from shared.stores.sessions import SessionStore
from shared.stores.shop import ShopStore
from shared.stores.status import StatusStore
from shared.stores.tasks import TaskStore
from shared.stores.tenants import TenantStore
from shared.stores.wordstat import WordstatStore

__all__ = ["Stores"]


class Stores:
    """Every store of one engine, opened together by ``open_stores(url)``."""

    def __init__(
        self,
        url: str,
        *,
        pages: PageStore,
        shop: ShopStore,
        hashes: HashStore,
        images: ImageRegistry,
        delay: DelayStore,
        feeds: FeedStore,
        tenants: TenantStore,
        notices: NoticeStore,
        notify: NotifyStore,
        tasks: TaskStore,
        status: StatusStore,
        problems: ProblemStore,
        sessions: SessionStore,
        autoparser: AutoparserStore,
        lanes: LaneStore,
        wordstat: WordstatStore,
        search: SearchIndex,
        index_queue: IndexQueue,
        close: Callable[[], Awaitable[None]],
    ) -> None:
        self.url = url
        self.pages = pages
        #: a shop category's offers, paged, sorted and filtered (read from the page table)
        self.shop = shop
        self.hashes = hashes
        self.images = images
        self.delay = delay
        self.feeds = feeds
        self.tenants = tenants
        #: changes of rights on origins, and the notices of those told (``shared.webmaster.rights``)
        self.notices = notices
        #: notification settings, the outbox of events and the delivery log (``shared/notify/``)
        self.notify = notify
        self.tasks = tasks
        self.status = status
        self.problems = problems
        self.sessions = sessions
        self.autoparser = autoparser
        self.lanes = lanes
        self.wordstat = wordstat
        self.search = search
        #: the pages written since the search index last took them (the indexer cube drains it)
        self.index_queue = index_queue
        #: what closes the connections; None once closed
        self._close: Callable[[], Awaitable[None]] | None = close

    async def close(self) -> None:
        """Close the connections (idempotent)."""
        close, self._close = self._close, None
        if close is not None:
            await close()

    async def __aenter__(self) -> Stores:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
