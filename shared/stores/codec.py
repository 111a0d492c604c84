"""Row encoding shared by both store engines (DESIGN.md section 4, "stores").

Both engines keep timestamps as BIGINT microseconds since the Unix epoch
(UTC) rather than native types: one encoding means one set of row decoders,
and integer comparisons keep the versioned guards cheap. Lists (services,
task items) are JSON text, since they are read whole and never queried.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from shared.clock import utcnow
from shared.stores.rows import (
    ClaimOutcome,
    DeleteOutcome,
    Feed,
    FeedStatus,
    ImageRecord,
    ImageStatus,
    Page,
    ParkedDoc,
    Task,
    TaskItem,
    TaskStatus,
    UpsertOutcome,
)

__all__ = [
    "FEED_COLUMNS",
    "FEED_STATUS_FIELDS",
    "IMAGE_COLUMNS",
    "MAX_SEARCH_TERMS",
    "PAGE_COLUMNS",
    "TASK_COLUMNS",
    "check_pending",
    "claim_outcome",
    "delete_outcome",
    "dumps",
    "feed_from_row",
    "from_us",
    "image_from_row",
    "next_version",
    "now_us",
    "page_from_row",
    "page_params",
    "parked_from_row",
    "search_terms",
    "task_from_row",
    "task_items_json",
    "to_us",
    "tombstone_params",
    "upsert_outcome",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_us(value: datetime | None) -> int | None:
    """Microseconds since the epoch; naive datetimes are refused (they hide bugs)."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: stores need timezone-aware UTC times")
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(value: int | None) -> datetime | None:
    if value is None:
        return None
    return _EPOCH + timedelta(microseconds=value)


def now_us(now: datetime | None) -> int:
    stamp = to_us(now if now is not None else utcnow())
    assert stamp is not None
    return stamp


# --------------------------------------------------------------------------- pages

PAGE_COLUMNS = (
    "url, host, version, html, doc_json, title, text, content_hash, etag, seen_at, parsed_at, "
    "media_ready_at, written_at, deleted, source_kind"
)


def page_params(page: Page) -> tuple[Any, ...]:
    """The values of ``PAGE_COLUMNS`` in order."""
    doc = page.doc_json.encode("utf-8") if isinstance(page.doc_json, str) else page.doc_json
    return (
        page.url,
        page.host,
        page.version,
        page.html,
        doc,
        page.title,
        page.text,
        page.content_hash,
        page.etag,
        to_us(page.seen_at),
        to_us(page.parsed_at),
        to_us(page.media_ready_at),
        to_us(page.written_at),
        bool(page.deleted),
        page.source_kind,
    )


def page_from_row(row: Sequence[Any]) -> Page:
    return Page(
        url=row[0],
        host=row[1],
        version=row[2],
        html=row[3],
        doc_json=bytes(row[4]),
        title=row[5],
        text=row[6],
        content_hash=row[7],
        etag=row[8],
        seen_at=from_us(row[9]),
        parsed_at=from_us(row[10]),
        media_ready_at=from_us(row[11]),
        written_at=from_us(row[12]),
        deleted=bool(row[13]),
        source_kind=row[14],
    )


#: a search term is a run of letters/digits (any script); everything else separates terms
_TERM_RE = re.compile(r"\w+", re.UNICODE)
#: more terms than this adds nothing to relevance and only costs time
MAX_SEARCH_TERMS = 16


def search_terms(query: str) -> list[str]:
    """The words of a user query, lower-cased; operators and punctuation are dropped, so any text is safe."""
    return [term.lower() for term in _TERM_RE.findall(query)][:MAX_SEARCH_TERMS]


# --------------------------------------------------------------------------- images

IMAGE_COLUMNS = "url, status, cdn_url, reason, mime, size, width, height, sha256, updated_at, retry_after, ordered_at"


def image_from_row(row: Sequence[Any]) -> ImageRecord:
    return ImageRecord(
        url=row[0],
        status=ImageStatus(row[1]),
        cdn_url=row[2],
        reason=row[3],
        mime=row[4],
        size=row[5] or 0,
        width=row[6],
        height=row[7],
        sha256=row[8],
        updated_at=from_us(row[9]),
        retry_after=from_us(row[10]),
        ordered_at=from_us(row[11]),
    )


def check_pending(pending: Iterable[str]) -> frozenset[str]:
    media = frozenset(pending)
    if not media:
        raise ValueError("nothing pending: a document with all its media ready is published, not parked")
    return media


def parked_from_row(row: Sequence[Any], pending: frozenset[str]) -> ParkedDoc:
    """``row``: url, host, version, doc_json, deadline, parked_at."""
    deadline = from_us(row[4])
    parked_at = from_us(row[5])
    assert deadline is not None
    assert parked_at is not None
    return ParkedDoc(
        url=row[0],
        host=row[1],
        version=row[2],
        doc_json=bytes(row[3]),
        pending=pending,
        deadline=deadline,
        parked_at=parked_at,
    )


# --------------------------------------------------------------------------- feeds

#: FeedStatus field -> whether it holds a datetime (stored as microseconds)
FEED_STATUS_FIELDS: dict[str, bool] = {name: name.endswith("_at") for name in FeedStatus.__dataclass_fields__}
FEED_COLUMNS = "feed_id, url, host, format, tenant_id, services, autoparser, created_at, deleted, " + ", ".join(
    FEED_STATUS_FIELDS
)


def feed_from_row(row: Sequence[Any]) -> Feed:
    status_values: dict[str, Any] = {}
    for offset, (name, is_time) in enumerate(FEED_STATUS_FIELDS.items(), start=9):
        value = row[offset]
        status_values[name] = from_us(value) if is_time else value
    status_values["consecutive_failures"] = status_values["consecutive_failures"] or 0
    return Feed(
        feed_id=row[0],
        url=row[1],
        host=row[2],
        format=row[3],
        tenant_id=row[4],
        services=tuple(orjson.loads(row[5] or "[]")),
        autoparser=bool(row[6]),
        created_at=from_us(row[7]),
        deleted=bool(row[8]),
        status=FeedStatus(**status_values),
    )


def dumps(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


# --------------------------------------------------------------------------- tasks

TASK_COLUMNS = "task_id, tenant_id, host, status, created_at, updated_at, items, errors, preview_urls, idempotency_key"


def task_items_json(items: Sequence[TaskItem]) -> str:
    return dumps([{"url": i.url, "status": i.status, "error": i.error} for i in items])


def task_from_row(row: Sequence[Any]) -> Task:
    return Task(
        task_id=row[0],
        tenant_id=row[1],
        host=row[2],
        status=TaskStatus(row[3]),
        created_at=from_us(row[4]),
        updated_at=from_us(row[5]),
        items=tuple(TaskItem(**item) for item in orjson.loads(row[6] or "[]")),
        errors=tuple(orjson.loads(row[7] or "[]")),
        preview_urls=tuple(orjson.loads(row[8] or "[]")),
        idempotency_key=row[9],
    )


# --------------------------------------------------------------------------- versioning rules


def upsert_outcome(prev: tuple[int, bool] | None, version: int) -> UpsertOutcome:
    """What a page upsert of ``version`` does, given the stored (version, deleted) or None.

    Only a strictly higher version is written; an equal version is a redelivery
    (``unchanged`` for a live page, ``stale`` against a tombstone, since a delete
    wins a tie).
    """
    if prev is None:
        return UpsertOutcome.inserted
    stored, deleted = prev
    if version > stored:
        return UpsertOutcome.inserted if deleted else UpsertOutcome.updated
    if version == stored and not deleted:
        return UpsertOutcome.unchanged
    return UpsertOutcome.stale


def delete_outcome(prev: tuple[int, bool] | None, version: int) -> DeleteOutcome:
    """What a tombstone of ``version`` does; it is written for ``deleted`` and ``absent``.

    A delete wins a tie with a live page of the same version; a higher
    tombstone version over a lower tombstone is recorded (it fences more).
    """
    if prev is None:
        return DeleteOutcome.absent
    stored, deleted = prev
    if deleted:
        if version > stored:
            return DeleteOutcome.absent
        return DeleteOutcome.unchanged if version == stored else DeleteOutcome.stale
    return DeleteOutcome.deleted if version >= stored else DeleteOutcome.stale


def claim_outcome(prev: tuple[str, int] | None, source_id: str, priority: int) -> ClaimOutcome:
    """Who owns a URL after ``source_id`` claims it with ``priority``, given the (owner, priority)."""
    if prev is None:
        return ClaimOutcome.claimed
    owner, owner_priority = prev
    if owner == source_id:
        return ClaimOutcome.owned
    return ClaimOutcome.taken_over if priority > owner_priority else ClaimOutcome.outranked


def next_version(highest: int | None, now: datetime | None) -> int:
    """A version above every stored one for the URL and, normally, the current time in microseconds.

    Time-based so that a version stays monotonic even if the hash store is lost.
    """
    return max((highest or 0) + 1, now_us(now))


def tombstone_params(url: str, host: str, version: int, written_at: int) -> tuple[Any, ...]:
    """``PAGE_COLUMNS`` values of a tombstone: the content is dropped, the version fences older upserts."""
    return (url, host, version, "", b"", "", "", "", "", None, None, None, written_at, True, "")
