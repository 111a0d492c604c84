"""``open_stores(url)``: every store of the engine named by the URL's scheme (DESIGN.md section 4).

* ``sqlite:///var/store.db`` — a path relative to the working directory;
  ``sqlite:////srv/store.db`` — an absolute path (the embedded default engine).
* ``postgresql://user:pass@host:port/db`` (also ``postgres://``) — asyncpg, pooled.
  An optional ``?schema=NAME`` puts every table in that schema (tests use a fresh one).

Migrations are applied at open (versioned, idempotent; see ``migrations.py``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from shared.errors import ConfigError
from shared.stores.base import (
    ClaimOutcome,
    DelayStore,
    DeleteOutcome,
    Feed,
    FeedStatus,
    FeedStore,
    HashCheck,
    HashEntry,
    HashStore,
    HostClaim,
    ImageRecord,
    ImageRegistry,
    ImageStatus,
    Owner,
    Page,
    PageStore,
    ParkedDoc,
    ParkOutcome,
    SearchHit,
    StatusSnapshot,
    StatusStore,
    Stores,
    Task,
    TaskItem,
    TaskStatus,
    TaskStore,
    Tenant,
    TenantLimits,
    TenantStore,
    UpsertOutcome,
)

__all__ = [
    "ClaimOutcome",
    "DelayStore",
    "DeleteOutcome",
    "Feed",
    "FeedStatus",
    "FeedStore",
    "HashCheck",
    "HashEntry",
    "HashStore",
    "HostClaim",
    "ImageRecord",
    "ImageRegistry",
    "ImageStatus",
    "Owner",
    "Page",
    "PageStore",
    "ParkOutcome",
    "ParkedDoc",
    "SearchHit",
    "StatusSnapshot",
    "StatusStore",
    "Stores",
    "Task",
    "TaskItem",
    "TaskStatus",
    "TaskStore",
    "Tenant",
    "TenantLimits",
    "TenantStore",
    "UpsertOutcome",
    "open_stores",
]


async def open_stores(url: str, pool_size: int = 10) -> Stores:
    """Open (and migrate) the stores at ``url``. ``ConfigError`` for an unknown scheme."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from shared.stores.sqlite import open_sqlite

        return await open_sqlite(url)
    if scheme in ("postgresql", "postgres"):
        from shared.stores.postgres import open_postgres

        return await open_postgres(url, pool_size=pool_size)
    raise ConfigError(
        "store.url",
        url,
        "sqlite:///RELATIVE/PATH, sqlite:////ABSOLUTE/PATH or postgresql://USER:PASS@HOST:PORT/DB",
        ["sqlite", "postgresql"],
    )
