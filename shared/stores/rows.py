"""Rows and outcomes of the stores (DESIGN.md section 4, "stores").

Frozen dataclasses, one per kind of row, and the enums the write methods
return (STYLE.md rule 6: outcomes are enums, never flags). Every timestamp is
a timezone-aware UTC ``datetime``; the engines keep microsecond precision.
URLs are *canonical* (``shared.urls.canonical_url``): the stores never
normalize, so a caller with a raw URL normalizes it first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple

__all__ = [
    "ClaimOutcome",
    "DeleteOutcome",
    "Feed",
    "FeedStatus",
    "HashCheck",
    "HashEntry",
    "HostClaim",
    "ImageRecord",
    "ImageStatus",
    "Owner",
    "Page",
    "ParkOutcome",
    "ParkedDoc",
    "SearchHit",
    "StatusSnapshot",
    "Task",
    "TaskItem",
    "TaskStatus",
    "Tenant",
    "TenantLimits",
    "UpsertOutcome",
]


# --------------------------------------------------------------------------- outcomes


class UpsertOutcome(StrEnum):
    inserted = "inserted"  # no live row before (absent, or a tombstone of a lower version)
    updated = "updated"  # a live row of a lower version was replaced
    stale = "stale"  # the stored row (or tombstone) has a higher version: nothing written
    unchanged = "unchanged"  # the same version is already stored (a redelivery): nothing written


class DeleteOutcome(StrEnum):
    deleted = "deleted"  # a live page of a lower version became a tombstone
    absent = "absent"  # there was no page; the tombstone is recorded anyway (it fences late upserts)
    stale = "stale"  # the stored page or tombstone has a higher version: nothing written
    unchanged = "unchanged"  # a tombstone of this version exists already


class ParkOutcome(StrEnum):
    parked = "parked"  # first parked version of the URL
    replaced = "replaced"  # a lower parked version was replaced (its pending set too)
    stale = "stale"  # a higher version is parked: ignored
    unchanged = "unchanged"  # this version is parked already


class ClaimOutcome(StrEnum):
    claimed = "claimed"  # nobody owned the URL; the claimer owns it now
    owned = "owned"  # the claimer owned it already (priority refreshed)
    taken_over = "taken_over"  # the claimer's priority is higher than the owner's: it owns it now
    outranked = "outranked"  # another source with an equal or higher priority owns it: nothing changed


class ImageStatus(StrEnum):
    pending = "pending"  # ordered, not cached yet
    ok = "ok"
    failed = "failed"


class TaskStatus(StrEnum):
    queued = "queued"
    processing = "processing"
    done = "done"
    failed = "failed"


# --------------------------------------------------------------------------- pages


@dataclass(frozen=True, slots=True)
class Page:
    """One Turbo page in the KV store, keyed by its canonical URL."""

    url: str
    host: str
    version: int
    html: str = ""  # the rendered Turbo page
    doc_json: bytes = b""  # the JSON form (served by /api/v1/pages)
    title: str = ""
    text: str = ""  # plain text, indexed for search with the title
    content_hash: str = ""
    etag: str = ""
    seen_at: datetime | None = None
    parsed_at: datetime | None = None
    media_ready_at: datetime | None = None
    written_at: datetime | None = None
    deleted: bool = False  # a tombstone: ``get`` hides it unless asked
    source_kind: str = ""


@dataclass(frozen=True, slots=True)
class SearchHit:
    url: str
    host: str
    title: str
    snippet: str  # an excerpt of the text around the match (plain text, not HTML)
    rank: float  # larger is better; comparable only within one result list
    written_at: datetime | None = None


# --------------------------------------------------------------------------- hashes


class HashCheck(NamedTuple):
    changed: bool  # new or different content: the parser publishes it
    version: int  # the version to publish (the stored one when unchanged)


@dataclass(frozen=True, slots=True)
class HashEntry:
    source_id: str
    url: str
    content_hash: str
    version: int
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Owner:
    url: str
    source_id: str
    priority: int  # higher wins (``shared.messages.SOURCE_PRIORITY``)
    claimed_at: datetime


# --------------------------------------------------------------------------- images


@dataclass(frozen=True, slots=True)
class ImageRecord:
    url: str  # the source URL of the image
    status: ImageStatus
    cdn_url: str | None = None
    reason: str | None = None  # why it failed: 404, not_an_image, too_large, ...
    mime: str | None = None
    size: int = 0
    width: int | None = None
    height: int | None = None
    sha256: str | None = None
    updated_at: datetime | None = None
    retry_after: datetime | None = None  # a failed image may be ordered again after this
    ordered_at: datetime | None = None


# --------------------------------------------------------------------------- delay


@dataclass(frozen=True, slots=True)
class ParkedDoc:
    url: str
    host: str
    version: int
    doc_json: bytes
    pending: frozenset[str]  # media URLs still missing (empty in what ``resolve`` returns)
    deadline: datetime  # released by ``due`` after this, ready or not
    parked_at: datetime
    #: when it was last handed out (a lease until ``confirm``); None while it waits
    released_at: datetime | None = None


# --------------------------------------------------------------------------- feeds


@dataclass(frozen=True, slots=True)
class FeedStatus:
    """What the scheduler and the crawler learned about a feed. All optional."""

    last_fetch_at: datetime | None = None
    last_http_status: int | None = None
    last_result: str | None = None  # a FetchStatus / parser outcome name
    items: int | None = None
    last_error: str | None = None
    error_line: int | None = None
    error_column: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    last_hash: str | None = None
    next_fetch_at: datetime | None = None  # None: due now
    interval_s: float | None = None
    consecutive_failures: int = 0
    websub_hub: str | None = None
    websub_expires_at: datetime | None = None
    autoparser_unavailable_reason: str | None = None
    #: the topic (self URL) and HMAC secret of the live WebSub subscription (migration 2)
    websub_topic: str | None = None
    websub_secret: str | None = None


@dataclass(frozen=True, slots=True)
class Feed:
    feed_id: str
    url: str
    host: str
    format: str  # a FeedFormat value
    tenant_id: str | None = None
    services: tuple[str, ...] = ()
    autoparser: bool = False
    created_at: datetime | None = None  # set by the store on first insert when None
    deleted: bool = False
    status: FeedStatus = field(default_factory=FeedStatus)  # read-only through upsert_feed


# --------------------------------------------------------------------------- tenants


@dataclass(frozen=True, slots=True)
class TenantLimits:
    rps: float  # requests per second
    burst: int  # token bucket size, in requests
    bytes_per_s: float  # upload bytes per second


@dataclass(frozen=True, slots=True)
class Tenant:
    tenant_id: str
    name: str
    created_at: datetime
    limits: TenantLimits | None = None  # None: the configured defaults apply


@dataclass(frozen=True, slots=True)
class HostClaim:
    host: str
    tenant_id: str
    verified: bool
    verification_token: str  # the partner publishes it (DNS TXT / file) to prove control
    created_at: datetime


# --------------------------------------------------------------------------- tasks


@dataclass(frozen=True, slots=True)
class TaskItem:
    url: str
    status: str  # ok / failed / skipped / ...: the api and parser agree on the words
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Task:
    task_id: str
    tenant_id: str
    host: str
    status: TaskStatus = TaskStatus.queued
    created_at: datetime | None = None  # set by the store when None
    updated_at: datetime | None = None
    items: tuple[TaskItem, ...] = ()
    errors: tuple[str, ...] = ()
    preview_urls: tuple[str, ...] = ()
    idempotency_key: str | None = None  # unique per tenant


# --------------------------------------------------------------------------- status snapshots


@dataclass(frozen=True, slots=True)
class StatusSnapshot:
    """A small JSON document a cube publishes every few seconds (``shared/status.py``); the latest wins."""

    name: str  # "<kind>:<cube>:<instance>", e.g. "cube:parser:host-1:4242"
    data: dict[str, Any]
    updated_at: datetime
