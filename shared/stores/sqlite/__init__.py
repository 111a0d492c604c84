"""``open_sqlite(url)``: the embedded store engine (docs/architecture.md sections 4 and 7).

``sqlite/db.py`` is the connections and the group commit; the roles that need
a plan of their own are ``pages.py``, ``shop.py``, ``hashes.py``, ``delay.py``, ``search.py``
(with ``search_groups.py``, ``search_queue.py``, ``search_topk.py``) and
``wordstat.py`` here; the others run the portable statements of ``shared/stores/sql/``.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from shared.errors import StoreUnavailable
from shared.stores.base import Stores
from shared.stores.sql.autoparser import SqlAutoparserStore
from shared.stores.sql.feeds import SqlFeedStore
from shared.stores.sql.images import SqlImageRegistry
from shared.stores.sql.lanes import SqlLaneStore
from shared.stores.sql.notices import SqlNoticeStore
from shared.stores.sql.notify import SqlNotifyStore
from shared.stores.sql.problems import SqlProblemStore
from shared.stores.sql.sessions import SqlSessionStore
from shared.stores.sql.status import SqlStatusStore
from shared.stores.sql.tasks import SqlTaskStore
from shared.stores.sql.team import SqlTeamStore
from shared.stores.sql.tenants import SqlTenantStore
from shared.stores.sqlite.db import LONG_BATCH, SqliteDb, sqlite_path
from shared.stores.sqlite.delay import SqliteDelayStore
from shared.stores.sqlite.hashes import SqliteHashStore
from shared.stores.sqlite.pages import SqlitePageStore
from shared.stores.sqlite.search import SqliteSearchIndex
from shared.stores.sqlite.search_queue import SqliteIndexQueue, requeue_if_stale
from shared.stores.sqlite.shop import SqliteShopStore
from shared.stores.sqlite.wordstat import SqliteWordstatStore

__all__ = ["LONG_BATCH", "SqliteDb", "open_sqlite", "sqlite_path"]


async def open_sqlite(url: str) -> Stores:
    path = sqlite_path(url)
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        db = await asyncio.to_thread(SqliteDb, path)
    except sqlite3.Error as exc:
        raise StoreUnavailable(f"sqlite {path}: cannot open: {exc}") from exc
    try:
        await db.write_raw(db.migrate)
        await requeue_if_stale(db)  # pages analyzed by another version of the analyzer (or none)
    except BaseException:
        await db.close()
        raise
    queue = SqliteIndexQueue(db)

    async def close() -> None:
        queue.close()
        await db.close()

    return Stores(
        url,
        pages=SqlitePageStore(db),
        shop=SqliteShopStore(db),
        hashes=SqliteHashStore(db),
        images=SqlImageRegistry(db),
        delay=SqliteDelayStore(db),
        feeds=SqlFeedStore(db),
        tenants=SqlTenantStore(db, team=SqlTeamStore(db)),
        notices=SqlNoticeStore(db),
        notify=SqlNotifyStore(db),
        tasks=SqlTaskStore(db),
        status=SqlStatusStore(db),
        problems=SqlProblemStore(db),
        sessions=SqlSessionStore(db),
        autoparser=SqlAutoparserStore(db),
        lanes=SqlLaneStore(db),
        search=SqliteSearchIndex(db),
        index_queue=queue,
        wordstat=SqliteWordstatStore(db),
        close=close,
    )
