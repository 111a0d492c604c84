"""What the pure parse layer returns (docs/architecture.md section 3, parser).

``parse_feed`` turns bytes into a ``ParseResult``: the items it found (raw:
links not yet canonical, content not yet sanitized), the deletions
(``turbo="false"``), per-item and feed-level errors with line and column,
and the feed's own metadata. Nothing here touches the bus or a store, so the
same functions serve the cube, ``turbocubes parse`` and the benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = [
    "DetectedFormat",
    "FeedMeta",
    "ItemError",
    "MediaRef",
    "Note",
    "ParseResult",
    "ParsedItem",
    "Related",
    "Severity",
]


class DetectedFormat(StrEnum):
    rss = "rss"  # RSS 0.9x / 2.0
    rdf = "rdf"  # RSS 1.0 / 0.90
    atom = "atom"  # Atom 1.0 / 0.3
    turbo = "turbo"  # RSS 2.0 with xmlns:turbo
    yml = "yml"
    json = "json"  # partner JSON documents
    jsonfeed = "jsonfeed"
    unknown = "unknown"


class Severity(StrEnum):
    #: the item (or the feed) was dropped
    error = "error"
    #: something was wrong but recovered; nothing was lost that we know of
    warning = "warning"
    #: nothing to fix now: markup we knowingly do not use (the channel's analytics counters), or what
    #: the webmaster asked for (an item their filters left out)
    info = "info"


@dataclass(slots=True)
class ItemError:
    """One problem, where it is: ``line``/``column`` in the body (1-based) when known.

    ``code`` is its row in ``shared/problems/codes.py``; ``to_problem`` (``cubes/parser/problems.py``)
    turns it into the ``shared.problems.Problem`` that feed status and upload tasks keep. A problem
    left without a code is reported as ``item.unreadable`` / ``feed.not_readable``: give it one.
    """

    reason: str
    line: int | None = None
    column: int | None = None
    #: index of the item in the feed, None for feed-level problems
    index: int | None = None
    link: str | None = None
    severity: Severity = Severity.error
    code: str | None = None
    #: a hint more specific than the code's default one
    hint: str | None = None
    #: what to use instead (the feeds an HTML page names): ``Problem.offers``
    offers: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "line": self.line,
            "column": self.column,
            "index": self.index,
            "link": self.link,
            "severity": self.severity.value,
            "code": self.code,
        }


@dataclass(frozen=True, slots=True)
class Note:
    """Something the page could not carry as the source has it: ``code`` is its problem code."""

    code: str
    message: str


@dataclass(slots=True)
class MediaRef:
    url: str
    kind: str = "image"  # image | video
    #: enclosure, media:content, media:thumbnail, content (img in the HTML), picture (YML), cover
    role: str = "content"
    mime: str | None = None
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True, slots=True)
class Related:
    """A ``<yandex:related>`` link: the page it points to, its title and picture."""

    url: str
    title: str
    image: str | None = None


@dataclass(slots=True)
class ParsedItem:
    """One entry / item / offer as found in the body."""

    index: int
    link: str | None = None
    guid: str | None = None
    title: str | None = None
    author: str | None = None
    published: datetime | None = None
    updated: datetime | None = None
    #: raw HTML (unsanitized); Turbo: the whole turbo:content
    content_html: str = ""
    summary: str | None = None
    media: list[MediaRef] = field(default_factory=list)
    #: product fields (YML offers / JSON products), ``shared.messages.Product`` keyword arguments
    product: dict[str, Any] | None = None
    extra: dict[str, str | list[str]] = field(default_factory=dict)
    kind: str = "article"  # article | product
    #: base URL for relative links inside the item (xml:base, the feed URL)
    base: str | None = None
    line: int | None = None
    #: the item's language (its xml:lang, else the channel's <language>), as written
    language: str | None = None
    #: Turbo's ``<yandex:related>`` links, shown as cards below the content
    related: list[Related] = field(default_factory=list)
    #: the item's content is its summary (RSS ``description`` with no ``content:encoded``, an Atom
    #: ``summary`` with no ``content``): the parser may read the article from its page (``fulltext.py``)
    summary_only: bool = False
    #: Turbo's ``<metrics>`` breadcrumbs, (url, text) from the site's root down: shown above the content
    crumbs: list[tuple[str, str]] = field(default_factory=list)
    #: what the reader left out of the item (a number that is not one: ``bounds.py``); the item is
    #: published without it, and these become its warnings
    notes: list[Note] = field(default_factory=list)


@dataclass(slots=True)
class FeedMeta:
    title: str | None = None
    link: str | None = None
    #: WebSub hub (atom:link rel="hub") and self URL, for the scheduler
    hub: str | None = None
    self_url: str | None = None
    language: str | None = None
    #: the channel's markup that is not rendered, told (``turbo.analytics_ignored`` ...): (code, message, line)
    ignored: list[tuple[str, str, int | None]] = field(default_factory=list)
    #: how the body was read: "lxml", "lxml-recover", "feedparser", "iterparse", "json"
    parser: str = ""
    version: str = ""


@dataclass(slots=True)
class ParseResult:
    format: DetectedFormat
    items: list[ParsedItem] = field(default_factory=list)
    #: links (or GUIDs) of items the feed asks to remove (Turbo ``turbo="false"``)
    deletions: list[ParsedItem] = field(default_factory=list)
    #: pages made from the feed, not items of it: a YML catalog's category listings (``categories.py``)
    listings: list[ParsedItem] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    meta: FeedMeta = field(default_factory=FeedMeta)
    encoding: str | None = None
    #: the feed as a whole could not be read (no items could be trusted)
    fatal: bool = False

    @property
    def feed_error(self) -> ItemError | None:
        """The first feed-level problem (what goes into the feed's status)."""
        for err in self.errors:
            if err.index is None and err.severity is not Severity.info:
                return err
        return None
