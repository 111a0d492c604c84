"""The autoparser cube's handler: crawled HTML page -> article ``Document`` (docs/architecture.md sections 2-3).

For each ``crawl.pages`` result:

0. A result carrying a feed item's document (``CrawlResult.document``) is that item's page, read
   for the feed (``fulltext.py``): a summary item is published as the feed's document with the
   page's article, or with its own text and ``page.full_text_unavailable`` when the page cannot
   be read; a published item is checked against its page (``page.content_mismatch``). None of
   the steps below applies to it (the feed owns the URL: nothing is claimed or ``outranked``).
1. Only fetched HTML pages go on; everything else is skipped with a counted reason
   (``turbocubes_autoparser_skipped_total{reason}``): the scheduler's discovery fetches
   (sitemaps and home pages asked for by ``discover:<host>`` alone, reason ``discovery``),
   fetch failures, non-HTML bodies, hosts marked *autoparser unavailable*.
2. The body comes inline or from the blob store (``body_ref``); a missing blob is a
   ``Reject`` (the message can never succeed), an unreachable store is transient.
3. ``Extractor.extract`` reads the page with the host's template (``knowledge.py``:
   its features and its filter) and the host's calibration when ``train`` chose one,
   then the template learns the page. Completeness below ``autoparser.min_completeness``
   -> refused with the guard's reason (``completeness.py``, problem ``autoparser.incomplete``):
   a Turbo page that drops real content gets the site banned, so losing the page is the
   lesser harm. Not an article (a listing, too little text) -> skipped with its reason
   (problem ``autoparser.not_article``), never silently.
   Either is the page's problem, held back (``PageProblems.held``): the host's
   webmaster sees it in the console and the host's status until the page is published.
4. A page whose URL a feed owns is a training pair when that feed's page in the KV
   store has a full text (``MIN_PAIR_WORDS``): the page and the feed's text go to the
   autoparser store for ``turbocubes autoparser train``. Then the page is skipped
   (``outranked``): the feed's version wins.
5. The document's URL is the page's ``<link rel=canonical>`` when it is on the same
   host (a page must not be able to publish itself under another site's URL), else
   the fetched URL, canonicalized -- the requested one when a redirect left the host.
   The URL is claimed in the hash store with the autoparser's (lowest) source
   priority, so a feed's version of the same article always wins; unchanged content
   (xxh3-128 of title + text) is not republished.

For ``media.cached`` failures with reason ``robots_denied`` the image's host is
marked *autoparser unavailable* in the feed registry (``HostMarker``), as Turbo does:
its pages would render without their images.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence

from prometheus_client import Counter

from cubes.autoparser.extract import Extraction, Extractor
from cubes.autoparser.fulltext import complete, parity, unreadable
from cubes.autoparser.hosts import HostMarker
from cubes.autoparser.knowledge import HostKnowledge
from cubes.autoparser.meta import undeclared_date
from shared.blobs.base import BlobStore
from shared.clock import Clock, SystemClock
from shared.config import AutoparserConfig
from shared.errors import NotFound, Reject
from shared.hashing import TOMBSTONE, content_hash
from shared.messages import (
    FULL_TEXT_PREFIX,
    SOURCE_PRIORITY,
    CrawlKind,
    CrawlResult,
    Document,
    DocumentDeleted,
    FetchStatus,
    Media,
    MediaCached,
    MediaStatus,
    SourceKind,
    SourceRef,
)
from shared.pages.i18n import language
from shared.pages.wordcount import words
from shared.problems import Problem, problem
from shared.runtime.cube import Context, Output
from shared.stores import ClaimOutcome, HashStore, PageProblems, PageStore, ProblemStore
from shared.stores.autoparser import AutoparserStore, Pair
from shared.urls import MAX_URL_LENGTH, host_of, try_canonical_url

__all__ = ["SKIPPED", "AutoparserHandler"]

log = logging.getLogger(__name__)

SKIPPED = Counter("turbocubes_autoparser_skipped_total", "Crawled pages not turned into documents", ["reason"])
PUBLISHED_DOCS = Counter("turbocubes_autoparser_documents_total", "Autoparsed documents published")
REMOVED = Counter("turbocubes_autoparser_removed_total", "Autoparsed pages removed: their page answered 404 or 410")
FULL_TEXT = Counter(
    "turbocubes_autoparser_full_text_total",
    "Summary items of feeds published with their page's article (page), their own text (feed) or without (unreadable)",
    ["outcome"],
)
PARITY = Counter("turbocubes_autoparser_parity_total", "Feed pages checked against their original page", ["outcome"])
PAIRS = Counter("turbocubes_autoparser_pairs_total", "Crawled pages stored with their feed's full text for training")
#: a feed text shorter than this is a summary, not the article: no pair
MIN_PAIR_WORDS = 80
#: pages above this many bytes are read in a worker thread so the event loop keeps serving
#: /healthz; a typical page (~100 KB) takes ~8 ms, not worth a thread hop
_OFFLOAD_BYTES = 512 * 1024
_TITLE_MAX = 2000
#: answers that mean the page is gone for good: its Turbo page is removed
_GONE = frozenset({404, 410})
#: the scheduler's requester for the pages it reads to find articles (cubes/scheduler/discovery.py)
_DISCOVERY = "discover:"


def _charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    for part in content_type.split(";")[1:]:
        k, _, v = part.strip().partition("=")
        if k.lower() == "charset" and v:
            return v.strip().strip("\"'") or None
    return None


def _is_html(result: CrawlResult) -> bool:
    ct = (result.content_type or result.headers.get("content-type") or "").split(";")[0].strip().lower()
    return ct in ("", "text/html", "application/xhtml+xml")


class AutoparserHandler:
    def __init__(
        self,
        config: AutoparserConfig,
        extractor: Extractor,
        blobs: Callable[[], Awaitable[BlobStore]],
        hashes: HashStore | None = None,
        hosts: HostMarker | None = None,
        clock: Clock | None = None,
        store: AutoparserStore | None = None,
        pages: PageStore | None = None,
        turbo_enabled: Callable[[str], Awaitable[bool]] | None = None,
        problems: ProblemStore | None = None,
    ) -> None:
        self.config = config
        #: where a refused page's problem is written for its webmaster; None: only logged and counted
        self.problems = problems
        self.extractor = extractor
        self._blobs = blobs
        self.hashes = hashes
        self.hosts = hosts
        self.clock = clock or SystemClock()
        self.store = store
        self.pages = pages
        #: the webmaster's host-wide switch (``TenantStore.turbo_enabled``): off, nothing is published
        self.turbo_enabled = turbo_enabled
        self.knowledge = HostKnowledge(store, self.clock) if store is not None else None

    async def handle(self, msg: CrawlResult | MediaCached, ctx: Context) -> Sequence[Output]:
        if isinstance(msg, MediaCached):
            await self._on_media(msg)
            return []
        return await self._on_page(msg)

    async def _on_media(self, msg: MediaCached) -> None:
        if msg.status == MediaStatus.failed and msg.reason == FetchStatus.robots_denied.value and self.hosts:
            try:
                host = host_of(msg.url)
            except ValueError:
                return
            await self.hosts.mark_unavailable(host, "robots.txt forbids fetching the host's images")

    async def _on_gone(self, msg: CrawlResult) -> Sequence[Output]:
        """The page answered 404 / 410: its Turbo page goes, if this host's autoparser
        published it and still owns it. A tombstone, recorded like the parser's removals (``TOMBSTONE``)."""
        if self.hashes is None:
            return self._skip("gone", msg)
        url = try_canonical_url(msg.url) or msg.url
        source_id = f"autoparser:{msg.host}"
        owner = await self.hashes.owner(url)
        entry = await self.hashes.get(source_id, url)
        if owner is None or owner.source_id != source_id or entry is None or entry.content_hash == TOMBSTONE:
            return self._skip("gone", msg)
        now = self.clock.now()
        check = await self.hashes.check_and_set(source_id, url, TOMBSTONE, now=now)
        await self.hashes.release(url, source_id)
        REMOVED.inc()
        gone = DocumentDeleted(
            url=url,
            host=msg.host,
            source=SourceRef(kind=SourceKind.autoparser, id=msg.host),
            version=check.version,
            reason=f"the page answered HTTP {msg.http_status}",
            deleted_at=now,
        )
        return [Output(topic="documents.deleted", message=gone, key=url)]

    async def _held(self, msg: CrawlResult, url: str, refusal: Problem) -> None:
        """The refused page's problem, where its webmaster looks (the host's status, the console)."""
        if self.problems is None:
            return
        now = self.clock.now()
        # a version of the clock the hash store's versions follow: the page published later is newer
        version = int(now.timestamp() * 1_000_000)
        row = PageProblems(url, version, msg.host, SourceKind.autoparser.value, msg.host, (refusal,), held=True)
        await self.problems.put_page_problems([row], now=now)

    def _skip(self, reason: str, msg: CrawlResult) -> Sequence[Output]:
        SKIPPED.labels(reason=reason).inc()
        log.debug("autoparser skipped %s: %s", msg.url, reason)
        return []

    async def _on_page(self, msg: CrawlResult) -> Sequence[Output]:
        if msg.kind != CrawlKind.page:
            return self._skip("not_a_page", msg)
        if msg.document is not None:
            return await self._for_item(msg, msg.document)
        if msg.requesters and all(r.startswith(_DISCOVERY) for r in msg.requesters):
            return self._skip("discovery", msg)  # a sitemap or home page the scheduler reads for links
        if msg.status != FetchStatus.ok:
            if msg.http_status in _GONE:
                return await self._on_gone(msg)
            return self._skip(f"fetch_{msg.status.value}", msg)
        if not _is_html(msg):
            return self._skip("not_html", msg)
        if self.hosts is not None and await self.hosts.unavailable_reason(msg.host):
            return self._skip("host_unavailable", msg)
        if self.turbo_enabled is not None and not await self.turbo_enabled(msg.host):
            return self._skip("turbo_off", msg)
        body = await self._body(msg)
        page_url = msg.final_url or msg.url
        ex = await self._extract(msg, body, page_url)
        url = _document_url(ex, page_url, msg.url)
        if url is None:
            return self._skip("bad_url", msg)
        if await self._owned_elsewhere(msg, body, url):
            return self._skip("outranked", msg)  # a feed or an upload owns this URL
        refusal = self._refusal(ex, page_url)
        if refusal is not None:
            reason, held = refusal
            log.warning("autoparser refused %s: %s", page_url, held.model_dump_json())
            await self._held(msg, url, held)
            return self._skip(reason, msg)
        title = ex.title.strip()[:_TITLE_MAX]
        if not title:
            return self._skip("no_title", msg)
        return await self._publish(msg, ex, url, title)

    async def _for_item(self, msg: CrawlResult, doc: Document) -> Sequence[Output]:
        """A feed item's page (``fulltext.py``): the item published with its article, or checked against it."""
        ex, why = await self._item_page(msg)
        if any(r.startswith(FULL_TEXT_PREFIX) for r in msg.requesters):
            done = complete(doc, ex) if ex is not None else unreadable(doc, why)
            outcome = "unreadable" if ex is None else ("page" if done.document is not doc else "feed")
            FULL_TEXT.labels(outcome=outcome).inc()
            await self._tell(done.document, done.problems)
            return [Output(topic="documents.parsed", message=done.document, key=done.document.url)]
        mismatch = parity(doc, ex, self.config.parity_max_missing) if ex is not None else None
        PARITY.labels(outcome="unreadable" if ex is None else ("mismatch" if mismatch else "ok")).inc()
        if mismatch is not None:
            await self._tell(doc, (mismatch,))
        return []

    async def _item_page(self, msg: CrawlResult) -> tuple[Extraction | None, str]:
        """The extraction of a feed item's page, or None and why it cannot be read."""
        if msg.status != FetchStatus.ok:
            return None, f"it answered {msg.http_status or msg.status.value}" + (f": {msg.error}" if msg.error else "")
        if not _is_html(msg):
            return None, f"it is not an HTML page ({msg.content_type or 'no content type'})"
        try:
            body = await self._body(msg)
        except Reject as exc:  # the page's body is gone: the item is published all the same
            return None, str(exc)
        page_url = msg.final_url or msg.url
        ex = await self._extract(msg, body, page_url)
        refused = self._refusal(ex, page_url)
        if refused is not None:
            return None, refused[1].message.removeprefix("The page was not published: ").rstrip(".")
        return ex, ""

    async def _tell(self, doc: Document, problems: Sequence[Problem]) -> None:
        """What the webmaster is told about a feed's published page (its problems at its version)."""
        if not problems or self.problems is None:
            return
        row = PageProblems(doc.url, doc.version, doc.host, doc.source.kind.value, doc.source.id, tuple(problems))
        await self.problems.put_page_problems([row], now=self.clock.now())

    def _refusal(self, ex: Extraction, page_url: str) -> tuple[str, Problem] | None:
        """(skip reason, the webmaster's problem) of a page not published, None for one that is.

        A page that lost its article is refused as incomplete, whether what is left reads as an
        article or not (a story told in one ``<div>`` lost whole leaves no article text at all);
        a page whose text is not an article and lost nothing (a listing) is reported as such.
        """
        line = self.config.min_completeness
        if ex.completeness < line:
            message = (
                f"The page was not published: {ex.completeness_reason} (completeness {ex.completeness:.2f} "
                f"against {ex.completeness_region}, below {line:.2f})."
            )
            return "incomplete", problem("autoparser.incomplete", message, link=page_url)
        if not ex.is_article:
            reason = "empty" if not ex.text.strip() else "not_article"
            message = f"The page was not published: {ex.not_article_reason}."
            return reason, problem("autoparser.not_article", message, link=page_url)
        return None

    async def _extract(self, msg: CrawlResult, body: bytes, page_url: str) -> Extraction:
        """The page's extraction with the host's template and calibration; the template learns the page."""
        encoding = _charset(msg.content_type or msg.headers.get("content-type"))
        template = calibration = None
        extractor = self.extractor
        if self.knowledge is not None:
            template = await self.knowledge.template(msg.host)
            calibration = await self.knowledge.calibration(msg.host)
            if calibration is not None and calibration.model is not None:
                extractor = Extractor(model=calibration.model)
        run = functools.partial(
            extractor.extract,
            body,
            page_url,
            encoding,
            template=template,
            body_threshold=calibration.threshold if calibration is not None else None,
        )
        # one host's pages are handled one at a time (crawl.pages is keyed by host), so the
        # template is not read by a worker thread while the loop changes it
        ex = await asyncio.to_thread(run) if len(body) > _OFFLOAD_BYTES else run()
        if ex.published_at is None and ex.is_article:
            # nothing on the page declares its date: htmldate reads URLs and bylines (meta.py says why)
            dated = functools.partial(undeclared_date, body)
            ex.published_at = await asyncio.to_thread(dated) if len(body) > _OFFLOAD_BYTES else dated()
        learnt = template is not None and ex.page is not None and template.learn(ex.page, page_url)
        if learnt and self.knowledge is not None and template is not None:
            await self.knowledge.learnt(msg.host, template)
        ex.page = None  # the tree is not needed past this point
        return ex

    async def _owned_elsewhere(self, msg: CrawlResult, body: bytes, url: str) -> bool:
        """True when a feed or an upload owns ``url``; stores the training pair when the feed has the full text."""
        if self.hashes is None:
            return False
        owner = await self.hashes.owner(url)
        if owner is None or owner.source_id == f"autoparser:{msg.host}":
            return False
        if self.store is not None and self.pages is not None:
            theirs = await self.pages.get(url)
            full_text = theirs is not None and theirs.source_kind != SourceKind.autoparser.value
            if theirs is not None and full_text and words(theirs.text) >= MIN_PAIR_WORDS:
                now = self.clock.now()
                await self.store.add_pair(Pair(msg.host, url, body, theirs.text, theirs.title, now))
                PAIRS.inc()
        return True

    async def _body(self, msg: CrawlResult) -> bytes:
        if msg.body is not None:
            return msg.body
        if not msg.body_ref:
            raise Reject(f"crawl.pages result for {msg.url} has neither body nor body_ref")
        blobs = await self._blobs()
        try:
            return await blobs.get(msg.body_ref)
        except NotFound:
            raise Reject(f"body blob {msg.body_ref!r} of {msg.url} is gone") from None

    async def _publish(self, msg: CrawlResult, ex: Extraction, url: str, title: str) -> Sequence[Output]:
        now = self.clock.now()
        digest = content_hash([title, ex.text])
        version = int(self.clock.time() * 1_000_000)
        if self.hashes is not None:
            source_id = f"autoparser:{msg.host}"
            claim = await self.hashes.claim(url, source_id, SOURCE_PRIORITY[SourceKind.autoparser], now=now)
            if claim == ClaimOutcome.outranked:
                return self._skip("outranked", msg)  # a feed or an upload owns this URL
            check = await self.hashes.check_and_set(source_id, url, digest, now=now)
            if not check.changed:
                return self._skip("unchanged", msg)
            version = check.version
        doc = Document(
            url=url,
            host=msg.host,
            source=SourceRef(kind=SourceKind.autoparser, id=msg.host),
            title=title,
            author=ex.author or None,
            published_at=ex.published_at,
            updated_at=ex.modified_at,
            content_html=ex.body_html,
            media=_media(ex),
            extra={"language": lang} if (lang := language(ex.lang)) else {},
            content_hash=digest,
            version=version,
            seen_at=msg.fetched_at,
            parsed_at=now,
        )
        PUBLISHED_DOCS.inc()
        return [Output(topic="documents.parsed", message=doc, key=url)]


def _media(ex: Extraction) -> list[Media]:
    """The page's cover (``og:image``) first, unless the body shows it, then the body's images."""
    out = [Media(url=src, role="content") for src in ex.images if len(src) <= MAX_URL_LENGTH]
    if ex.cover and ex.cover not in ex.images and len(ex.cover) <= MAX_URL_LENGTH and ex.cover.startswith("http"):
        out.insert(0, Media(url=ex.cover, role="cover"))
    return out


def _document_url(ex: Extraction, page_url: str, requested_url: str) -> str | None:
    page = try_canonical_url(page_url)
    requested = try_canonical_url(requested_url)
    if page is None or requested is None:
        return None
    if host_of(page) != host_of(requested):
        # a redirect off the host: the page stays the one that was asked for, on its host, never the
        # other host's URL (whose pages are not this host's to publish, shared.webmaster.hosts)
        page = requested
    declared = try_canonical_url(ex.canonical_url) if ex.canonical_url else None
    if declared is not None and host_of(declared) == host_of(page):
        return declared
    return page
