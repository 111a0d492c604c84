"""The kvwriter's handler: ``documents.ready`` -> a rendered page, ``documents.deleted`` -> a tombstone.

DESIGN.md section 3 ("kvwriter"). Every write is versioned (the store keeps the
highest version of a URL, a tombstone included), so a redelivered or reordered
message changes nothing. Writes of concurrent key-lanes share one transaction
(``batch.py``, group commit). A preview document (a debug upload) is written under
``preview_key(task, url)`` and never touches the public page. The page's
freshness (``seen_at`` -> written) goes to ``turbocubes_freshness_seconds``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from cubes.kvwriter.batch import GroupWriter
from cubes.kvwriter.metrics import DELETES, FRESHNESS, MEDIA_DROPPED, WRITES
from cubes.kvwriter.render import page_sanitizer, preview_key, render
from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.errors import Reject
from shared.messages import Document, DocumentDeleted
from shared.runtime.cube import Context, Output
from shared.search.analysis import page_lang
from shared.search.kinds import page_kind
from shared.stores import DeleteOutcome, Page, PageStore, UpsertOutcome

__all__ = ["KvwriterHandler"]

#: characters of a page's text that language detection reads (enough letters to tell Cyrillic from Latin)
_LANG_SAMPLE = 2000


def _declared_lang(doc: Document) -> str | None:
    """The language the source declares (RSS ``<language>``), if any."""
    value = doc.extra.get("language")
    return value if isinstance(value, str) else None


class KvwriterHandler:
    def __init__(self, pages: PageStore, settings: Settings, clock: Clock | None = None) -> None:
        self.pages = pages
        self.writer = GroupWriter(pages)
        self.clock = clock or SystemClock()
        self.sanitizer = page_sanitizer(settings)

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock.time(), tz=UTC)

    async def handle(self, msg: Document | DocumentDeleted, ctx: Context | None = None) -> Sequence[Output]:
        if isinstance(msg, Document):
            await self.write(msg)
        elif isinstance(msg, DocumentDeleted):
            await self.delete(msg)
        else:  # the runtime validated the topic's model; anything else is a wiring bug
            raise Reject(f"kvwriter got an unexpected message type {type(msg).__name__}")
        return []

    def page_for(self, doc: Document, written_at: datetime) -> Page:
        """The row to store for ``doc`` (rendered, sanitized, keyed).

        ``doc.url`` is canonical: the boundary that accepted it (the parser's identity check, the
        API, the autoparser) canonicalized it, and every store key downstream trusts that.
        """
        url = doc.url
        out = render(doc, self.sanitizer, written_at=written_at)
        if out.dropped_media:
            MEDIA_DROPPED.inc(out.dropped_media)
        return Page(
            url=preview_key(doc.source.id, url) if doc.preview else url,
            host=doc.host,
            version=doc.version,
            html=out.html,
            doc_json=out.doc_json,
            # a preview is never found by search: nothing to match in an empty title and text
            title="" if doc.preview else doc.title,
            text="" if doc.preview else out.text,
            content_hash=doc.content_hash,
            etag=out.etag,
            seen_at=doc.seen_at,
            parsed_at=doc.parsed_at,
            media_ready_at=doc.media_ready_at,
            written_at=written_at,
            source_kind=doc.source.kind.value,
            # search's filters, freshness and PostgreSQL text-search configuration
            kind="" if doc.preview else page_kind(doc.kind.value, doc.published_at).value,
            published_at=doc.published_at,
            lang=page_lang(_declared_lang(doc), f"{doc.title} {out.text[:_LANG_SAMPLE]}"),
        )

    async def write(self, doc: Document) -> UpsertOutcome:
        written_at = self._now()
        outcome = await self.writer.upsert(self.page_for(doc, written_at))
        WRITES.labels(outcome.value).inc()
        if outcome in (UpsertOutcome.inserted, UpsertOutcome.updated) and not doc.preview:
            FRESHNESS.observe(max(0.0, (written_at - doc.seen_at).total_seconds()))
        return outcome

    async def delete(self, msg: DocumentDeleted) -> DeleteOutcome:
        # canonical, like a document's (see page_for)
        outcome = await self.pages.delete(msg.url, msg.version, now=self._now())
        DELETES.labels(outcome.value).inc()
        return outcome
