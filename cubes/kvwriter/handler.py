"""The kvwriter's handler: ``documents.ready`` -> a rendered page, ``documents.deleted`` -> a tombstone.

docs/architecture.md section 3 ("kvwriter"). Every write is versioned (the store keeps the
highest version of a URL, a tombstone included), so a redelivered or reordered
message changes nothing. Writes of concurrent key-lanes share one transaction
(``batch.py``, group commit). A preview document (a debug upload) is written under
``preview_key(task, url)`` and never touches the public page. The page's
freshness (``seen_at`` -> written) goes to ``turbocubes_freshness_seconds``.

A document past 16 KB of HTML is rendered in a worker process, under
``kvwriter.render_deadline_s`` (``rendered``; ``shared/offload.py`` says why).

A page keeps the ready document it was rendered from, and the image registry
which CDN copies it shows; a ``media.cached`` that replaces a copy (the source
image changed in place) renders those pages again with the new one, and one that
drops a copy (a purged image gone at its source) renders them without it (``refresh.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from cubes.kvwriter.batch import GroupWriter
from cubes.kvwriter.branding import BrandingLookup, PageBrand
from cubes.kvwriter.metrics import DELETES, FRESHNESS, MEDIA_DROPPED, REBRANDS, REFRESHES, WRITES
from cubes.kvwriter.offers import offer_of, shop_of
from cubes.kvwriter.refresh import pack, shown_copies, unpack, with_new_copy, without_copy
from cubes.kvwriter.render import Rendered, page_sanitizer, preview_key, render, render_isolated, sanitizer_config
from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.errors import OffloadFailed, Reject
from shared.messages import BrandingChanged, Document, DocumentDeleted, MediaCached, MediaStatus
from shared.offload import OFFLOAD_CHARS, Offload
from shared.runtime.cube import Context, Output
from shared.search.analysis import page_lang
from shared.search.kinds import page_kind
from shared.stores import DeleteOutcome, ImageRegistry, Page, PageStore, UpsertOutcome
from shared.webmaster.branding import logo_waiters

__all__ = ["KvwriterHandler"]

#: URLs of a source read at a time when its pages are rendered again in a new branding
_REBRAND_BATCH = 200
#: characters of a page's text that language detection reads (enough letters to tell Cyrillic from Latin)
_LANG_SAMPLE = 2000


def _declared_lang(doc: Document) -> str | None:
    """The language the source declares (RSS ``<language>``), if any."""
    value = doc.extra.get("language")
    return value if isinstance(value, str) else None


class KvwriterHandler:
    def __init__(
        self,
        pages: PageStore,
        settings: Settings,
        clock: Clock | None = None,
        images: ImageRegistry | None = None,
        *,
        brands: BrandingLookup | None = None,
        offload: Offload | None = None,
    ) -> None:
        self.pages = pages
        #: which branding each page wears (None: none, every page in the default look)
        self.brands = brands
        #: worker processes for documents past 16 KB of HTML (None: every page rendered on the loop)
        self.offload = offload
        self.render_deadline_s = settings.kvwriter.render_deadline_s
        #: where the copies each page shows are recorded; None: nowhere (no refresh of changed images)
        self.images = images
        self.cdn_base = settings.cdn.public_base_url
        self.writer = GroupWriter(pages, written=self._link if images is not None else None)
        #: (url, version) -> the CDN copies that page shows, from its write until its batch is stored
        self._shown: dict[tuple[str, int], set[str]] = {}
        self.clock = clock or SystemClock()
        self.sanitizer = page_sanitizer(settings)
        #: what a worker process builds the same sanitizer from (``render.render_isolated``)
        self.sanitizer_config = sanitizer_config(settings)

    async def handle(
        self, msg: Document | DocumentDeleted | MediaCached | BrandingChanged, ctx: Context | None = None
    ) -> Sequence[Output]:
        if isinstance(msg, Document):
            await self.write(msg)
        elif isinstance(msg, DocumentDeleted):
            await self.delete(msg)
        elif isinstance(msg, MediaCached):
            if msg.replaces:
                await self.refresh(msg)
            if msg.requesters and msg.status is MediaStatus.ok:  # a host's logo came: its pages show it now
                for tenant_id, host in logo_waiters(msg.requesters):
                    await self.rebrand(tenant_id, host, ctx)
        elif isinstance(msg, BrandingChanged):
            await self.rebrand(msg.tenant_id, msg.host, ctx)
        else:  # the runtime validated the topic's model; anything else is a wiring bug
            raise Reject(f"kvwriter got an unexpected message type {type(msg).__name__}")
        return []

    async def rendered(self, doc: Document, written_at: datetime, brand: PageBrand | None = None) -> Rendered:
        """``doc``'s page in ``brand``'s look: on the loop, or past 16 KB of HTML in a worker process under a
        deadline.

        Sanitizing costs more than its size says on some HTML (``shared/offload.py``); past
        ``kvwriter.render_deadline_s`` the worker is stopped and the document dead-lettered with the
        reason (``OffloadTimeout``). The parser already prepared it under a shorter deadline, so
        that is a document its cleaner's output made dearer, not one the parser let through.
        """
        if self.offload is None or len(doc.content_html) <= OFFLOAD_CHARS:
            return render(doc, self.sanitizer, written_at=written_at, brand=brand)
        what = f"rendering {doc.url} ({len(doc.content_html):,} characters of HTML)"
        try:
            return await self._render_isolated(doc, written_at, brand, what)
        except OffloadFailed:  # a worker killed from outside is not the document's fault: once more
            return await self._render_isolated(doc, written_at, brand, what)

    async def _render_isolated(
        self, doc: Document, written_at: datetime, brand: PageBrand | None, what: str
    ) -> Rendered:
        assert self.offload is not None
        return await self.offload.run(
            render_isolated, doc, self.sanitizer_config, written_at, brand, deadline_s=self.render_deadline_s, what=what
        )

    def page_for(
        self, doc: Document, written_at: datetime, out: Rendered, ready: bytes | None = None, tenant: str | None = None
    ) -> Page:
        """The row to store for ``doc``, rendered as ``out`` (sanitized, keyed); ``tenant``: who published it.

        ``doc.url`` is canonical: the boundary that accepted it (the parser's identity check, the
        API, the autoparser) canonicalized it, and every store key downstream trusts that.
        """
        url = doc.url
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
            ready=b"" if doc.preview or self.images is None else (pack(doc) if ready is None else ready),
            # what a shop category's page lists of it (``offers.py``)
            shop=shop_of(doc, tenant),
            offer=offer_of(doc),
        )

    async def write(self, doc: Document, *, again: bool = False) -> UpsertOutcome:
        """Render and store ``doc``; ``again``: a page rendered anew from its kept document (a changed
        image, a new branding), which says nothing of how fresh the pipeline is."""
        written_at = self.clock.now()
        brand = await self.brands.for_doc(doc) if self.brands is not None else None
        out = await self.rendered(doc, written_at, brand)
        # the kept document of a large page is packed in a thread (zlib lets the GIL go): 1 MB of it, dumped
        # and compressed on the loop, held it ~0.3 s (bench/hostile.py)
        keep = not doc.preview and self.images is not None and len(doc.content_html) > OFFLOAD_CHARS
        tenant = await self.brands.tenant_of(doc) if self.brands is not None and shop_of(doc, None) else None
        page = self.page_for(doc, written_at, out, await asyncio.to_thread(pack, doc) if keep else None, tenant)
        key = (page.url, page.version)
        if page.ready:
            self._shown[key] = shown_copies(doc, self.cdn_base)
        try:
            outcome = await self.writer.upsert(page)
        finally:
            self._shown.pop(key, None)
        WRITES.labels(outcome.value).inc()
        if outcome in (UpsertOutcome.inserted, UpsertOutcome.updated) and not doc.preview and not again:
            FRESHNESS.observe(max(0.0, (written_at - doc.seen_at).total_seconds()))
        return outcome

    async def _link(self, pages: Sequence[Page]) -> None:
        """Record the copies the stored ``pages`` show (GroupWriter's hook: once per batch)."""
        assert self.images is not None
        links = [(cdn, p.url) for p in pages for cdn in self._shown.get((p.url, p.version), ())]
        if links:
            await self.images.link_pages(links)

    async def refresh(self, msg: MediaCached) -> int:
        """Render again every page that shows the copy ``msg`` replaces: with the new copy, or without it when
        ``msg`` dropped it (``refresh.py``)."""
        if self.images is None or msg.replaces is None:
            return 0
        done = 0
        for url in await self.images.pages_using(msg.replaces):
            page = await self.pages.get(url)
            if page is None or not page.ready:  # removed since, or written before pages kept their document
                continue
            ready = unpack(page.ready)
            doc = with_new_copy(ready, msg) if msg.status is MediaStatus.ok else without_copy(ready, msg.replaces)
            if doc is None:  # edited since: it no longer shows the old copy
                continue
            outcome = await self.write(doc, again=True)
            REFRESHES.labels(outcome.value).inc()
            done += outcome in (UpsertOutcome.inserted, UpsertOutcome.updated)
        return done

    async def rebrand(self, tenant_id: str, host: str, ctx: Context | None = None) -> int:
        """Render again, in its branding as it is now, every page of ``tenant_id``'s sources on ``host``.

        Each from the document it keeps, one version up (as ``refresh`` does): higher than the page,
        lower than any later edit of the source. Its sources are its feeds on the host and its uploads;
        their URLs are read a page at a time, and each page done tells the runtime the work goes on.
        """
        if self.brands is None:
            return 0
        self.brands.forget(tenant_id, host)
        stores = self.brands.stores
        sources = [f"feed:{f.feed_id}" for f in await stores.feeds.list(tenant_id) if f.host == host and not f.deleted]
        sources.append(f"tenant:{tenant_id}")
        done = 0
        for source in sources:
            after: str | None = None
            while urls := await stores.hashes.urls_of_source(source, _REBRAND_BATCH, after=after):
                after = urls[-1]
                for url in urls:
                    page = await self.pages.get(url)
                    if page is None or page.host != host or not page.ready:
                        continue
                    doc = unpack(page.ready)
                    outcome = await self.write(doc.model_copy(update={"version": doc.version + 1}), again=True)
                    done += outcome in (UpsertOutcome.inserted, UpsertOutcome.updated)
                if ctx is not None:
                    ctx.progress()
        REBRANDS.inc(done)
        return done

    async def delete(self, msg: DocumentDeleted) -> DeleteOutcome:
        # canonical, like a document's (see page_for)
        outcome = await self.pages.delete(msg.url, msg.version, now=self.clock.now())
        DELETES.labels(outcome.value).inc()
        return outcome
