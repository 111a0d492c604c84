"""``open_stores(url)``: every store of the engine named by the URL's scheme (docs/architecture.md section 4).

* ``sqlite:///var/store.db`` — a path relative to the working directory;
  ``sqlite:////srv/store.db`` — an absolute path (the embedded default engine).
* ``postgresql://user:pass@host:port/db`` (also ``postgres://``) — asyncpg, pooled.
  An optional ``?schema=NAME`` puts every table in that schema (tests use a fresh one).

Migrations are applied at open (versioned, idempotent; see ``migrations.py``).

The layout, one module per role (pages, shop, hashes, images, delay, feeds, tenants,
notices, notify, tasks, status, problems, sessions, team, lanes, search, wordstat,
autoparser) on each floor; a floor imports only the floors above it:

1. ``<role>.py`` — the contract: the Protocol, its rows and outcomes, and the
   engine-free rules both engines apply (``pages.upsert_outcome``,
   ``hashes.plan_hashes``, …). ``codec.py`` encodes values; ``base.py`` holds
   ``Stores``, the bundle ``open_stores`` returns.
2. ``sql/<role>.py`` — what both engines share in SQL: the role's columns and
   row decoders, and its implementation over ``sql/runner.SqlRunner`` (``?``
   placeholders; PostgreSQL rewrites them to ``$n``). A role whose statements
   run unchanged on both engines (tenants, notices, notify, tasks, status, problems, sessions,
   team, lanes, autoparser; images and feeds on SQLite) is written once here, and the
   openers use it as it is.
3. ``sqlite/<role>.py``, ``postgres/<role>.py`` — a role that needs an
   engine-specific plan (pages, shop, hashes, delay, search, wordstat; images and feeds
   on PostgreSQL) builds on its ``sql/`` module
   (the row codec; the ``sql/`` class, subclassed, for the methods that are
   portable) and adds the methods whose atomicity or speed is the engine's;
   the module's docstring says why. ``sqlite/db.py`` and ``postgres/db.py`` are the
   connections (group commit, pool), and each engine package's ``__init__``
   opens its engine.

Nothing under ``shared/stores`` imports this package's ``__init__``: callers
import from here, the stores import the module that owns a name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from shared.errors import ConfigError
from shared.stores.base import Stores
from shared.stores.delay import DelayStore, ParkedDoc, ParkOutcome
from shared.stores.feeds import Feed, FeedStatus, FeedStore
from shared.stores.hashes import ClaimOutcome, HashCheck, HashEntry, HashStore, Owner
from shared.stores.images import ImageRecord, ImageRegistry, ImageStatus
from shared.stores.lanes import LaneState, LaneStore, RobotsRecord
from shared.stores.notices import Notice, NoticeStore, RightChange, RightsEvent
from shared.stores.notify import Delivery, DeliveryStatus, NotifyStore
from shared.stores.pages import DeleteOutcome, Page, PageStore, SearchHit, UpsertOutcome
from shared.stores.problems import FetchReport, PageProblems, PageRow, PageState, ProblemStore
from shared.stores.sessions import Session, SessionStore
from shared.stores.shop import CategoryFacets, Offer, OfferCard, OfferQuery, ShopStore, Sort
from shared.stores.status import StatusSnapshot, StatusStore
from shared.stores.tasks import Task, TaskItem, TaskMode, TaskPage, TaskQuery, TaskStatus, TaskStore
from shared.stores.tenants import HostClaim, Tenant, TenantLimits, TenantStore

if TYPE_CHECKING:
    from shared.config import StoreConfig

__all__ = [
    "CategoryFacets",
    "ClaimOutcome",
    "DelayStore",
    "DeleteOutcome",
    "Delivery",
    "DeliveryStatus",
    "Feed",
    "FeedStatus",
    "FeedStore",
    "FetchReport",
    "HashCheck",
    "HashEntry",
    "HashStore",
    "HostClaim",
    "ImageRecord",
    "ImageRegistry",
    "ImageStatus",
    "LaneState",
    "LaneStore",
    "Notice",
    "NoticeStore",
    "NotifyStore",
    "Offer",
    "OfferCard",
    "OfferQuery",
    "Owner",
    "Page",
    "PageProblems",
    "PageRow",
    "PageState",
    "PageStore",
    "ParkOutcome",
    "ParkedDoc",
    "ProblemStore",
    "RightChange",
    "RightsEvent",
    "RobotsRecord",
    "SearchHit",
    "Session",
    "SessionStore",
    "ShopStore",
    "Sort",
    "StatusSnapshot",
    "StatusStore",
    "Stores",
    "Task",
    "TaskItem",
    "TaskMode",
    "TaskPage",
    "TaskQuery",
    "TaskStatus",
    "TaskStore",
    "Tenant",
    "TenantLimits",
    "TenantStore",
    "UpsertOutcome",
    "open_configured",
    "open_stores",
]


async def open_stores(url: str, pool_size: int = 10, *, accept_lossy_commits: bool = False) -> Stores:
    """Open (and migrate) the stores at ``url``. ``ConfigError`` for an unknown scheme, and for a
    PostgreSQL server that may lose acknowledged commits unless ``accept_lossy_commits``
    (``store.accept_lossy_commits``; ``postgres/durability.py``)."""
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from shared.stores.sqlite import open_sqlite

        return await open_sqlite(url)
    if scheme in ("postgresql", "postgres"):
        from shared.stores.postgres import open_postgres

        return await open_postgres(url, pool_size=pool_size, accept_lossy_commits=accept_lossy_commits)
    raise ConfigError(
        "store.url",
        url,
        "sqlite:///RELATIVE/PATH, sqlite:////ABSOLUTE/PATH or postgresql://USER:PASS@HOST:PORT/DB",
        ["sqlite", "postgresql"],
    )


async def open_configured(cfg: StoreConfig, *, pool_size: int | None = None) -> Stores:
    """The stores the ``[store]`` settings name: their URL, pool size (``pool_size`` for a
    command that needs fewer) and whether a server that may lose commits is accepted."""
    return await open_stores(
        cfg.url,
        pool_size=cfg.pool_size if pool_size is None else pool_size,
        accept_lossy_commits=cfg.accept_lossy_commits,
    )
