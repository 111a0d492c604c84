"""Store interfaces (DESIGN.md section 4, "stores"; STYLE.md rule 4).

One ``typing.Protocol`` per store; two engines implement all of them:
``shared/stores/sqlite*.py`` (embedded, the default) and
``shared/stores/postgres*.py`` (asyncpg). ``open_stores(url)`` in
``shared/stores/__init__.py`` picks one by the URL's scheme and returns a
``Stores`` holding every store. The rows and outcome enums live in
``shared/stores/rows.py`` and are re-exported here.

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

import builtins
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

from shared.stores.rows import (
    ClaimOutcome,
    DeleteOutcome,
    Feed,
    FeedStatus,
    HashCheck,
    HashEntry,
    HostClaim,
    ImageRecord,
    ImageStatus,
    Owner,
    Page,
    ParkedDoc,
    ParkOutcome,
    SearchHit,
    StatusSnapshot,
    Task,
    TaskItem,
    TaskStatus,
    Tenant,
    TenantLimits,
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
]


class PageStore(Protocol):
    """The KV store of Turbo pages. Key: canonical URL. The highest version wins."""

    async def upsert(self, page: Page) -> UpsertOutcome:
        """Write ``page`` unless a row (page or tombstone) of an equal or higher version exists."""
        ...

    async def upsert_many(self, pages: Sequence[Page]) -> list[UpsertOutcome]:
        """``upsert`` for a batch in one transaction (the kvwriter's fast path); outcomes in order."""
        ...

    async def delete(self, url: str, version: int, *, now: datetime | None = None) -> DeleteOutcome:
        """Tombstone ``url`` at ``version``: a later upsert of a version <= ``version`` is stale."""
        ...

    async def get(self, url: str, *, include_deleted: bool = False) -> Page | None:
        """The page at ``url``; ``None`` when absent or tombstoned (unless ``include_deleted``)."""
        ...

    async def search(self, query: str, limit: int = 20, offset: int = 0) -> list[SearchHit]:
        """Full-text search over title and text; every word must match; best first.

        ``query`` is user text: operators are not interpreted, so any input is safe.
        """
        ...

    async def recent(self, limit: int = 20) -> list[SearchHit]:
        """The most recently written live pages (the frontend's home page)."""
        ...

    async def count(self) -> int:
        """Live (not tombstoned) pages."""
        ...

    async def random_urls(self, n: int) -> list[str]:
        """Up to ``n`` distinct live URLs picked at random (benchmarks)."""
        ...


class HashStore(Protocol):
    """Content hashes per (source, URL) for the parser's dedupe, URL ownership and guids."""

    async def check_and_set(
        self, source_id: str, url: str, content_hash: str, *, now: datetime | None = None
    ) -> HashCheck:
        """Atomically compare and store. Unchanged -> ``(False, stored version)``.

        Changed or new -> ``(True, v)`` with ``v = max(highest version of url over
        all sources + 1, now in microseconds since the epoch)``: strictly increasing per URL.
        """
        ...

    async def get(self, source_id: str, url: str) -> HashEntry | None: ...

    async def forget(self, source_id: str, url: str) -> bool:
        """Drop the hash (the item left the feed); True when there was one."""
        ...

    async def urls_of_source(self, source_id: str) -> list[str]: ...

    async def claim(self, url: str, source_id: str, priority: int, *, now: datetime | None = None) -> ClaimOutcome:
        """Take ownership of ``url``: a strictly higher priority takes it over; ties keep the owner."""
        ...

    async def owner(self, url: str) -> Owner | None: ...

    async def release(self, url: str, source_id: str) -> bool:
        """Give up ownership (only if ``source_id`` owns it); True when it did."""
        ...

    async def remember_guid(self, source_id: str, guid: str, url: str) -> None:
        """Map a feed item's guid to its URL (the latest mapping wins)."""
        ...

    async def url_for_guid(self, source_id: str, guid: str) -> str | None: ...

    # Batch forms, for a catalog of 100,000 offers: one round trip (or transaction) per call instead of
    # one per item. Each is equivalent to calling its one-by-one method for every item in order. Keep a
    # call to a few thousand items: PostgreSQL takes one advisory lock per URL for the transaction, and
    # its lock table holds ``max_locks_per_transaction`` x connections entries (6,400 by default).

    async def get_many(self, source_id: str, urls: Iterable[str]) -> dict[str, HashEntry]:
        """``get`` for many URLs: the entries that exist, by URL (missing URLs are absent)."""
        ...

    async def check_and_set_many(
        self, source_id: str, items: Sequence[tuple[str, str]], *, now: datetime | None = None
    ) -> list[HashCheck]:
        """``check_and_set`` of every ``(url, content_hash)`` in order, in one transaction; results in order.

        The same version rule: a changed URL gets ``max(highest version over all sources + 1, now)``,
        so versions stay strictly increasing per URL (a URL twice in ``items`` gets two versions).
        """
        ...

    async def owners(self, urls: Iterable[str]) -> dict[str, Owner]:
        """``owner`` for many URLs: the owned ones, by URL."""
        ...

    async def claim_many(
        self, urls: Sequence[str], source_id: str, priority: int, *, now: datetime | None = None
    ) -> list[ClaimOutcome]:
        """``claim`` of every URL in order, in one transaction; outcomes in order."""
        ...

    async def remember_guids(self, source_id: str, pairs: Sequence[tuple[str, str]]) -> None:
        """``remember_guid`` of every ``(guid, url)`` in order (the last mapping of a guid wins)."""
        ...

    async def urls_for_guids(self, source_id: str, guids: Iterable[str]) -> dict[str, str]:
        """``url_for_guid`` for many guids: the known ones, guid -> URL."""
        ...


class ImageRegistry(Protocol):
    """Source image URL -> its state in the CDN."""

    async def get(self, url: str) -> ImageRecord | None: ...

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        """Records of those ``urls`` that have one (missing URLs are absent from the dict)."""
        ...

    async def record_ok(
        self,
        url: str,
        *,
        cdn_url: str,
        mime: str | None = None,
        size: int = 0,
        width: int | None = None,
        height: int | None = None,
        sha256: str | None = None,
        now: datetime | None = None,
    ) -> None: ...

    async def record_failed(
        self, url: str, reason: str, retry_at: datetime | None = None, *, now: datetime | None = None
    ) -> None:
        """Mark failed; ``retry_at`` (None: never) is when it may be ordered again."""
        ...

    async def mark_ordered(self, url: str, now: datetime, *, window_s: float = 3600.0) -> bool:
        """True only for the first caller that should order ``url`` (then it is ``pending``).

        False when it is ``ok``, ``failed`` with ``retry_after`` not yet passed (or None), or
        ``pending`` and ordered less than ``window_s`` ago (a lost order is re-sent after the window).
        """
        ...


class DelayStore(Protocol):
    """Documents parked until their media is in the CDN or their deadline passes."""

    async def park(
        self,
        url: str,
        version: int,
        doc_json: bytes,
        pending: Iterable[str],
        deadline: datetime,
        *,
        host: str = "",
        now: datetime | None = None,
    ) -> ParkOutcome:
        """Park (or replace a lower version of) a document. ``pending`` must not be empty.

        A media URL cached between the caller's registry check and ``park`` is
        not seen here: the caller re-checks after parking and calls ``resolve``.
        """
        ...

    async def resolve(self, media_url: str, *, now: datetime | None = None) -> list[ParkedDoc]:
        """Remove ``media_url`` from every pending set; return the waiting docs now complete.

        They are not removed but RELEASED (``released_at = now``, a lease) until the
        caller ``confirm``s their publish; an unconfirmed release comes back from
        ``due`` after the lease. Atomic: concurrent callers never both release one
        document, and two media resolved concurrently never leave a complete document parked.
        """
        ...

    async def due(self, now: datetime, limit: int = 100, *, lease_s: float = 60.0) -> list[ParkedDoc]:
        """Release (``released_at = now``) and return up to ``limit`` docs, oldest deadline first.

        Those are the waiting docs whose deadline is <= ``now`` (``pending`` = the media
        still missing), and the released docs not confirmed within ``lease_s`` (their
        publish evidently did not happen: they are handed out again, a duplicate at worst).
        Concurrent callers (``FOR UPDATE SKIP LOCKED`` / one writer) never share a doc.
        """
        ...

    async def confirm(self, released: Iterable[tuple[str, int]]) -> int:
        """Drop released docs, given as ``(url, version)``, whose publish is durable; how many.

        Only the released version goes: a newer version parked meanwhile (it waits
        again) survives, as does a doc that is waiting, not released.
        """
        ...

    async def get(self, url: str) -> ParkedDoc | None:
        """The doc held for ``url``, waiting or released (then ``released_at`` is set)."""
        ...

    async def discard(self, url: str) -> bool:
        """Drop a parked doc (deleted upstream), released or not; True when there was one."""
        ...

    async def count(self) -> int:
        """Docs waiting (released ones awaiting ``confirm`` are not counted)."""
        ...

    async def waiting_by_host(self) -> dict[str, int]:
        """Docs waiting, per host (as ``count``)."""
        ...


class FeedStore(Protocol):
    """Registered feeds, their status and the scheduler's state."""

    async def upsert_feed(self, feed: Feed) -> UpsertOutcome:
        """Insert or update the registration fields (``feed.status`` is ignored; a deleted feed revives).

        inserted / updated / unchanged (nothing differs). ``created_at`` is kept from the first insert.
        """
        ...

    async def delete_feed(self, feed_id: str) -> bool:
        """Soft delete; True when a live feed was deleted."""
        ...

    async def get(self, feed_id: str) -> Feed | None:
        """The feed with its status, deleted or not."""
        ...

    async def list(self, tenant_id: str | None = None, *, include_deleted: bool = False) -> builtins.list[Feed]:
        """Feeds (of ``tenant_id`` when given) ordered by feed_id."""
        ...

    async def due(self, now: datetime, limit: int = 100) -> builtins.list[Feed]:
        """Live feeds with ``next_fetch_at`` None or <= ``now``, the most overdue first (None first)."""
        ...

    async def update_status(self, feed_id: str, **fields: Any) -> None:
        """Set some ``FeedStatus`` fields. Unknown names -> ``ValueError``; unknown feed -> ``NotFound``."""
        ...


class TenantStore(Protocol):
    """Tenants, the hosts they own, their API tokens (sha256 only) and their limits.

    Hosts are normalized with ``shared.urls.canonical_host`` (``News.Example.`` ->
    ``news.example``), since ownership decides who may publish for a host.
    """

    async def create_tenant(self, name: str, *, tenant_id: str | None = None, now: datetime | None = None) -> Tenant:
        """Create a tenant (a fresh id when None); an existing ``tenant_id`` is returned as is."""
        ...

    async def get_tenant(self, tenant_id: str) -> Tenant | None: ...

    async def add_host(self, tenant_id: str, host: str, *, now: datetime | None = None) -> HostClaim:
        """Claim ``host`` for the tenant (unverified, with a fresh verification token); idempotent."""
        ...

    async def set_verified(self, tenant_id: str, host: str, verified: bool = True) -> None:
        """Verify a claim; verifying makes it the only verified claim of the host. ``NotFound`` if absent."""
        ...

    async def host_owner(self, host: str) -> str | None:
        """The tenant whose claim on ``host`` is verified, or None."""
        ...

    async def hosts_of(self, tenant_id: str) -> list[HostClaim]: ...

    async def issue_token(self, tenant_id: str, *, now: datetime | None = None) -> str:
        """A new API token; the plaintext is returned once and only its sha256 is stored."""
        ...

    async def tenant_for_token(self, token: str) -> str | None:
        """The tenant id of a valid (not revoked) token, or None."""
        ...

    async def revoke_token(self, token: str) -> bool:
        """Revoke by plaintext; True when a live token was revoked."""
        ...

    async def get_limits(self, tenant_id: str) -> TenantLimits | None:
        """The tenant's own limits; None means the configured defaults apply."""
        ...

    async def set_limits(self, tenant_id: str, limits: TenantLimits | None) -> None:
        """Set (or with None clear) the tenant's limits. ``NotFound`` for an unknown tenant."""
        ...


class TaskStore(Protocol):
    """Partner upload tasks."""

    async def create(self, task: Task, *, now: datetime | None = None) -> Task:
        """Store a new task; with an ``idempotency_key`` already used by the tenant, return that task."""
        ...

    async def get(self, task_id: str, *, tenant_id: str | None = None) -> Task | None:
        """The task; with ``tenant_id``, None unless it belongs to that tenant (isolation)."""
        ...

    async def update(
        self,
        task_id: str,
        *,
        status: TaskStatus | None = None,
        items: Sequence[TaskItem] | None = None,
        errors: Sequence[str] | None = None,
        preview_urls: Sequence[str] | None = None,
        now: datetime | None = None,
    ) -> Task:
        """Replace the given fields and stamp ``updated_at``. ``NotFound`` for an unknown task."""
        ...

    async def find_by_idempotency_key(self, tenant_id: str, key: str) -> Task | None: ...


class StatusStore(Protocol):
    """Status snapshots published by cubes (``shared/status.py``), and page figures for the status page.

    A snapshot is a small JSON object under a name; every process overwrites its own
    names every few seconds, so a reader sees each process's latest state whatever the
    deployment (one process or a cluster). ``page_counts`` and ``freshness`` read the
    page store's table (the same database) for the status page.
    """

    async def put_status(self, name: str, data: dict[str, Any], *, now: datetime | None = None) -> None:
        """Store ``data`` (JSON-serializable) under ``name``; an older ``now`` never overwrites a newer one."""
        ...

    async def get_status(self, prefix: str = "") -> builtins.list[StatusSnapshot]:
        """The snapshots whose name starts with ``prefix``, ordered by name."""
        ...

    async def prune_status(self, before: datetime) -> int:
        """Drop snapshots last written before ``before`` (processes long gone); how many."""
        ...

    async def page_counts(self) -> dict[str, int]:
        """Live Turbo pages per host (preview pages left out)."""
        ...

    async def freshness(self, limit: int = 1000) -> builtins.list[float]:
        """Seconds from ``seen_at`` to ``written_at`` of the ``limit`` most recently written live pages."""
        ...


class Stores:
    """Every store of one engine, opened together by ``open_stores(url)``."""

    def __init__(
        self,
        url: str,
        *,
        pages: PageStore,
        hashes: HashStore,
        images: ImageRegistry,
        delay: DelayStore,
        feeds: FeedStore,
        tenants: TenantStore,
        tasks: TaskStore,
        status: StatusStore,
        close: Callable[[], Awaitable[None]],
    ) -> None:
        self.url = url
        self.pages = pages
        self.hashes = hashes
        self.images = images
        self.delay = delay
        self.feeds = feeds
        self.tenants = tenants
        self.tasks = tasks
        self.status = status
        self._close = close
        self._closed = False

    async def close(self) -> None:
        """Close the connections (idempotent)."""
        if not self._closed:
            self._closed = True
            await self._close()

    async def __aenter__(self) -> Stores:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
