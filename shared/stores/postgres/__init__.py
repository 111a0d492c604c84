"""``open_postgres(url)``: the production store engine (docs/architecture.md section 4).

``postgres/db.py`` is the pool and ``batch.py`` the calls of one loop turn
sent as one statement; the roles that need a plan of their own are
``pages.py``, ``shop.py``, ``hashes.py``, ``images.py``, ``delay.py``, ``feeds.py``, ``search.py`` (with
``search_queue.py``, ``search_topk.py``) and ``wordstat.py`` here; the others run
the portable statements of ``shared/stores/sql/``.
"""

from __future__ import annotations

from shared.stores.base import Stores
from shared.stores.postgres.db import PgDb, connect, split_schema
from shared.stores.postgres.delay import PgDelayStore
from shared.stores.postgres.feeds import PgFeedStore
from shared.stores.postgres.hashes import PgHashStore
from shared.stores.postgres.images import PgImageRegistry
from shared.stores.postgres.pages import PgPageStore
from shared.stores.postgres.search import PgSearchIndex
from shared.stores.postgres.search_queue import PgIndexQueue, requeue_if_stale
from shared.stores.postgres.shop import PgShopStore
from shared.stores.postgres.wordstat import PgWordstatStore
from shared.stores.sql.autoparser import SqlAutoparserStore
from shared.stores.sql.lanes import SqlLaneStore
from shared.stores.sql.notices import SqlNoticeStore
from shared.stores.sql.notify import SqlNotifyStore
from shared.stores.sql.problems import SqlProblemStore
from shared.stores.sql.sessions import SqlSessionStore
from shared.stores.sql.status import SqlStatusStore
from shared.stores.sql.tasks import SqlTaskStore
from shared.stores.sql.team import SqlTeamStore
from shared.stores.sql.tenants import SqlTenantStore

__all__ = ["PgDb", "open_postgres", "split_schema"]


async def open_postgres(url: str, pool_size: int = 10, *, accept_lossy_commits: bool = False) -> Stores:
    db = await connect(url, pool_size, accept_lossy_commits=accept_lossy_commits)
    try:
        await requeue_if_stale(db)  # pages analyzed by another version of the analyzer (or none)
    except BaseException:
        await db.close()
        raise
    queue = PgIndexQueue(db.view("search"))

    async def close() -> None:
        queue.close()
        await db.close()

    return Stores(
        url,
        pages=PgPageStore(db.view("pages")),
        shop=PgShopStore(db.view("shop")),
        hashes=PgHashStore(db.view("hashes")),
        images=PgImageRegistry(db.view("images")),
        delay=PgDelayStore(db.view("delay")),
        feeds=PgFeedStore(db.view("feeds")),
        tenants=SqlTenantStore(db.view("tenants"), team=SqlTeamStore(db.view("team"), lock_rows=" FOR UPDATE")),
        notices=SqlNoticeStore(db.view("notices")),
        notify=SqlNotifyStore(db.view("notify")),
        tasks=SqlTaskStore(db.view("tasks")),
        status=SqlStatusStore(db.view("status")),
        problems=SqlProblemStore(db.view("problems")),
        sessions=SqlSessionStore(db.view("sessions")),
        autoparser=SqlAutoparserStore(db.view("autoparser")),
        lanes=SqlLaneStore(db.view("lanes")),
        search=PgSearchIndex(db.view("search")),
        index_queue=queue,
        wordstat=PgWordstatStore(db.view("wordstat")),
        close=close,
    )
