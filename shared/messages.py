"""Message models: the Python side of the topic contracts (docs/architecture.md section 5).

Each topic in ``schemas/topics.toml`` names one model here. The JSON Schema
files in ``schemas/`` are *generated* from these models
(``turbocubes schemas write``) and a test keeps them equal, so the two can
never drift. A breaking change is a new model and a new ``.v2.json`` file,
never an edit of a published one.

Every message carries ``schema_version`` and a ``trace_id``; documents carry
their stage timestamps (``seen_at`` → ``parsed_at`` → ``media_ready_at`` →
``written_at``) so freshness can be measured end to end.

Models are frozen: once built (and so validated) a message cannot be changed
into an invalid one; use ``model_copy(update=...)`` for a changed copy.
"""

from __future__ import annotations

import os
import random
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.urls import MAX_URL_LENGTH

__all__ = [
    "FULL_TEXT_PREFIX",
    "HOST_MAX",
    "PARITY_PREFIX",
    "REGION_MAX",
    "BrandingChanged",
    "CategoryRef",
    "CrawlKind",
    "CrawlRequest",
    "CrawlResult",
    "DeliveryOption",
    "Device",
    "DocKind",
    "Document",
    "DocumentDeleted",
    "FeedFormat",
    "FeedRegistration",
    "FetchStatus",
    "Media",
    "MediaCached",
    "MediaKind",
    "MediaStatus",
    "Message",
    "PartnerUpload",
    "Product",
    "ProductParam",
    "SearchQueryEvent",
    "SourceKind",
    "SourceRef",
    "UploadFormat",
    "new_trace_id",
]


#: trace ids need to be unique, not unpredictable: a generator seeded from the OS once per process (and
#: again in a forked child) instead of uuid4's read of os.urandom for every document (~7 us each, a
#: few percent of a catalog's first load)
_TRACE_IDS = random.Random()
os.register_at_fork(after_in_child=_TRACE_IDS.seed)


def new_trace_id() -> str:
    """32 hex digits, like a uuid4's."""
    return f"{_TRACE_IDS.getrandbits(128):032x}"


#: the longest host name a message carries (DNS allows 253, a trailing dot 254)
HOST_MAX = 255
#: the longest region code a search is counted under (``SearchQueryEvent.region``)
REGION_MAX = 64

Url = Annotated[str, Field(min_length=1, max_length=MAX_URL_LENGTH)]
Host = Annotated[str, Field(min_length=1, max_length=HOST_MAX)]
#: ``scheme://host[:port]``, canonical (``shared.origins``): what a right on a site covers
Origin = Annotated[str, Field(min_length=8, max_length=300)]


class Message(BaseModel):
    """Base of every message on the bus."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        ser_json_bytes="base64",
        val_json_bytes="base64",
        use_enum_values=False,
    )

    schema_version: Literal[1] = 1
    trace_id: str = Field(default_factory=new_trace_id, min_length=1, max_length=64)


# --------------------------------------------------------------------------- feeds.registry


class FeedFormat(StrEnum):
    rss = "rss"  # RSS 0.9x/1.0/2.0 and Atom
    turbo = "turbo"  # Yandex Turbo RSS
    yml = "yml"  # Yandex Market Language catalog
    auto = "auto"  # detect from the body


class FeedRegistration(Message):
    """A feed registered (or removed) by a webmaster or the operator. Key: ``feed_id``; compacted."""

    action: Literal["upsert", "delete"] = "upsert"
    feed_id: str = Field(min_length=1, max_length=64)
    url: Url
    host: Host
    format: FeedFormat = FeedFormat.auto
    services: list[str] = Field(default_factory=list)
    tenant_id: str | None = None
    #: pages of this host are also read by the autoparser
    autoparser: bool = False
    registered_at: datetime


# --------------------------------------------------------------------------- crawl.requests


class CrawlKind(StrEnum):
    feed = "feed"
    image = "image"
    video = "video"
    page = "page"


#: the requesters of a feed item's page (``CrawlRequest.document``): the page completes the item, or
#: the published item is checked against it (``cubes/parser/fulltext.py``, the autoparser reads them)
FULL_TEXT_PREFIX = "fulltext:"
PARITY_PREFIX = "parity:"


class CrawlRequest(Message):
    """Please fetch this URL. Key: ``host`` (one host's lane lives in one crawler instance)."""

    kind: CrawlKind
    url: Url
    host: Host
    #: who wants the result: "feed:<id>", "media:<doc url>", "autoparser:<host>", ...
    requesters: list[str] = Field(default_factory=list)
    feed_id: str | None = None
    #: conditional GET validators from the last successful fetch
    etag: str | None = None
    last_modified: str | None = None
    requested_at: datetime
    #: lower is more urgent; 0 = a push / a new feed, 5 = routine, 9 = bulk
    priority: int = Field(default=5, ge=0, le=9)
    #: a scheduled poll: the feed's due time it was emitted for. The same poll emitted twice (a
    #: scheduler replica taking over from one that died before recording it) is fetched once
    due_at: datetime | None = None
    #: the feed's credentials and extra headers, sealed (``shared/secretbox.py``): only the crawler opens
    #: them, and sends them to the feed's own origin only
    credentials: str | None = Field(default=None, max_length=16_384)
    #: the feed's own fetch timeout (``shared/webmaster/feed_options.py``), within the crawler's budget
    timeout_s: float | None = Field(default=None, gt=0, le=600)
    #: kind=page for a feed's item: the item's document, which the page completes (requester
    #: ``fulltext:<feed>``: the autoparser publishes it with the page's article) or is checked
    #: against (``parity:<feed>``); carried through the crawler onto the result
    document: Document | None = None


# --------------------------------------------------------------------------- crawl.feeds / images / pages


class FetchStatus(StrEnum):
    ok = "ok"
    not_modified = "not_modified"
    robots_denied = "robots_denied"
    blocked_address = "blocked_address"
    bad_url = "bad_url"
    dns_error = "dns_error"
    connect_error = "connect_error"
    timeout = "timeout"
    too_large = "too_large"
    too_many_redirects = "too_many_redirects"
    redirect_loop = "redirect_loop"
    http_4xx = "http_4xx"
    http_5xx = "http_5xx"
    throttled = "throttled"  # 429 / 503 with Retry-After, gave up for now
    credentials_error = "credentials_error"  # the feed's sealed credentials did not open (secrets.key changed)


class CrawlResult(Message):
    """What the crawler got for a request. Key: ``host`` for feeds and pages, the URL for images."""

    kind: CrawlKind
    url: Url
    final_url: Url | None = None
    host: Host
    status: FetchStatus
    http_status: int | None = None
    content_type: str | None = None
    #: selected response headers (lower-case names): etag, last-modified, content-type, ...
    headers: dict[str, str] = Field(default_factory=dict)
    #: the body when it is at most 256 KB, else None and ``body_ref`` names the blob
    body: bytes | None = None
    body_ref: str | None = None
    size: int = 0
    requesters: list[str] = Field(default_factory=list)
    feed_id: str | None = None
    error: str | None = None
    requested_at: datetime | None = None
    fetched_at: datetime
    elapsed_ms: float = 0.0
    #: the request's ``document``, as it asked
    document: Document | None = None
    #: the Crawl-delay the host's robots.txt asks for, when it is more than ``crawler.max_crawl_delay_s``
    #: (which the crawler honours instead); None when it asked for no more
    crawl_delay_capped: float | None = None


# --------------------------------------------------------------------------- partner.uploads


class UploadFormat(StrEnum):
    rss = "rss"
    turbo = "turbo"
    yml = "yml"
    json = "json"


class PartnerUpload(Message):
    """A payload pushed by a partner through the API. Key: ``host``."""

    task_id: str = Field(min_length=1, max_length=64)
    tenant_id: str
    host: Host
    format: UploadFormat
    mode: Literal["production", "debug"] = "production"
    body: bytes | None = None
    body_ref: str | None = None
    size: int = 0
    received_at: datetime


# --------------------------------------------------------------------------- documents.*


class SourceKind(StrEnum):
    """Where a document came from. The order of priority is in ``SOURCE_PRIORITY``."""

    upload = "upload"  # partner API
    turbo = "turbo"  # Turbo RSS feed
    yml = "yml"
    rss = "rss"
    autoparser = "autoparser"


#: Higher wins a conflict over one URL, so pages never flap between sources.
SOURCE_PRIORITY: dict[SourceKind, int] = {
    SourceKind.upload: 40,
    SourceKind.turbo: 30,
    SourceKind.yml: 20,
    SourceKind.rss: 20,
    SourceKind.autoparser: 10,
}


class SourceRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SourceKind
    #: feed id, upload task id, or the autoparsed host
    id: str


class DocKind(StrEnum):
    article = "article"
    product = "product"


class MediaKind(StrEnum):
    image = "image"
    video = "video"


class Media(BaseModel):
    """One image or video a document refers to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: Url
    kind: MediaKind = MediaKind.image
    #: cover, content, enclosure, picture, poster, thumbnail
    role: str = "content"
    #: set by the media cube once the file is in the CDN
    cdn_url: str | None = None
    mime: str | None = None
    width: int | None = None
    height: int | None = None
    #: widths of its smaller copies in the CDN (``shared.images.variants``), for the page's srcset
    variants: list[int] = Field(default_factory=list)


class ProductParam(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    value: str
    unit: str | None = None


class CategoryRef(BaseModel):
    """One category of a YML catalog's tree, as a shop page's breadcrumbs show it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    #: the category's listing page (a Turbo page of the same feed)
    url: str | None = None


class DeliveryOption(BaseModel):
    """A YML ``<delivery-options><option cost= days=>``: what delivery costs and how long it takes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cost: str
    days: str | None = None


class Product(BaseModel):
    """Fields of a YML offer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    offer_id: str
    #: YML ``available``: false means "on order", not out of stock (those are not in a catalog)
    available: bool = True
    price: str | None = None
    old_price: str | None = None
    currency: str | None = None
    #: the category's name (the leaf of ``category_path``)
    category: str | None = None
    #: the categories from the root to the offer's own (``categoryId`` / ``parentId``)
    category_path: list[CategoryRef] = Field(default_factory=list)
    vendor: str | None = None
    vendor_code: str | None = None
    model: str | None = None
    params: list[ProductParam] = Field(default_factory=list)
    sales_notes: str | None = None
    #: None: the catalog does not say
    delivery: bool | None = None
    pickup: bool | None = None
    store: bool | None = None
    delivery_options: list[DeliveryOption] = Field(default_factory=list)
    #: the shop's name (``<shop><name>``), for the "buy at" button
    shop: str | None = None


class Document(Message):
    """A parsed document (``documents.parsed``) or one whose media is in the CDN (``documents.ready``).

    Key: ``url`` (canonical). ``version`` grows with every change of the
    document; stores keep the highest version, so reordering is harmless.
    """

    url: Url
    host: Host
    source: SourceRef
    kind: DocKind = DocKind.article
    title: str = Field(min_length=1, max_length=2000)
    author: str | None = None
    published_at: datetime | None = None
    updated_at: datetime | None = None
    #: partner HTML as parsed; sanitized again by the kvwriter before it is rendered
    content_html: str = ""
    summary: str | None = None
    media: list[Media] = Field(default_factory=list)
    product: Product | None = None
    #: turbo:topic, yandex:related, turbo:source and the like
    extra: dict[str, str | list[str]] = Field(default_factory=dict)
    guid: str | None = None
    content_hash: str
    version: int = Field(ge=0)
    #: debug uploads render preview pages that are never published
    preview: bool = False
    #: the webmaster asked to see a fix now ("fetch now", a feed check): the media cube orders again
    #: every image of it that failed at or before this instant, whatever its retry time
    retry_failed_before: datetime | None = None
    seen_at: datetime
    parsed_at: datetime
    media_ready_at: datetime | None = None
    written_at: datetime | None = None


class DocumentDeleted(Message):
    """Remove the page at ``url``. Key: ``url``. A versioned tombstone."""

    url: Url
    host: Host
    source: SourceRef
    version: int = Field(ge=0)
    reason: str = "removed"
    deleted_at: datetime


# --------------------------------------------------------------------------- media.cached


class MediaStatus(StrEnum):
    ok = "ok"
    failed = "failed"


class MediaCached(Message):
    """An image or video is in the CDN (or could not be cached, with the reason). Key: source ``url``."""

    url: Url
    kind: MediaKind = MediaKind.image
    status: MediaStatus
    cdn_url: str | None = None
    #: 404, robots_denied, not_an_image, too_large, ... when failed
    reason: str | None = None
    mime: str | None = None
    size: int = 0
    width: int | None = None
    height: int | None = None
    sha256: str | None = None
    #: widths of the smaller copies made beside it (``shared.images.variants``)
    variants: list[int] = Field(default_factory=list)
    #: the CDN URL of the copy this one replaces: the source image changed in place (a re-check
    #: found new bytes), and the pages that show the old copy are rendered again with this one
    replaces: str | None = None
    cached_at: datetime
    #: who asked beside the pages, when they wait for this copy themselves: ``branding:<tenant>|<host>``, a
    #: host's logo (the kvwriter renders that host's pages again once its logo is in the CDN)
    requesters: list[str] = Field(default_factory=list, max_length=16)


# --------------------------------------------------------------------------- search.queries


class Device(StrEnum):
    """The class of device a search came from (read from the User-Agent, which is not kept)."""

    desktop = "desktop"
    mobile = "mobile"
    tablet = "tablet"


class BrandingChanged(Message):
    """A tenant changed its branding of a host (``shared/webmaster/branding.py``). Key: ``host``.

    The kvwriter renders that tenant's pages of the host again, from the documents they keep."""

    host: Host
    tenant_id: str = Field(min_length=1, max_length=64)
    changed_at: datetime


class SearchQueryEvent(Message):
    """A search the frontend answered, for query statistics (``wordstat``). Key: ``event_id``.

    Private by construction: no IP address, no User-Agent, no session — a coarse region
    and a device class only. ``event_id`` makes counting idempotent under redelivery;
    ``client`` counts a client's searches of one query once a day, and tells no one who the
    client was (an HMAC of its address and the query under a key of the day, dropped two days
    on: ``shared/wordstat/clients.py``).
    """

    event_id: str = Field(min_length=16, max_length=64)
    #: folded words in order, excluded words left out (``shared.wordstat.lemmas.normalize_query``)
    query: str = Field(min_length=1, max_length=400)
    at: datetime
    #: a region code from the frontend's region header or IP-range table; "unknown" otherwise
    region: str = Field(default="unknown", min_length=1, max_length=REGION_MAX)
    device: Device = Device.desktop
    #: results on the page shown
    results: int = Field(default=0, ge=0)
    #: hosts of the results shown, best first, each once
    hosts: list[Host] = Field(default_factory=list, max_length=20)
    #: origins of the results shown, best first, each once: the holders of a right on an origin see the
    #: searches that showed its pages (``shared.wordstat.hosts``), never those of another port or scheme
    origins: list[Origin] = Field(default_factory=list, max_length=20)
    #: the searcher's key for this query and day (hex); None: every such search counts
    client: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$")


# the crawl messages carry a Document, defined after them
CrawlRequest.model_rebuild()
CrawlResult.model_rebuild()
