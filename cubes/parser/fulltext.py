"""Which items get their page's article, and which are checked against it (docs/architecture.md sections 2-3).

A Turbo page replaces the original for its reader, so it must carry the whole article; many
feeds carry a summary only. Per feed, ``full_text`` (``shared.messages.FullText``) says:

* ``auto`` (the default): an item that looks like a summary is published with its page's
  article. It looks like one when the feed gives its summary alone (RSS ``description`` with no
  ``content:encoded``, an Atom ``summary`` with no ``content``) and it is shorter than
  ``ARTICLE_WORDS``, or when it ends the way teasers end ("…", "[...]", "Read more",
  "Подробнее" and the like). A Turbo item's ``turbo:content`` is the page by Turbo's own
  contract: it is checked against its page (below), never replaced. A YML catalog's pages (offers,
and the category listings the parser makes) are neither read nor checked. Whether
  the page's article really is longer is decided where the page is read (the autoparser:
  the feed's text stays when it is not), so a short but complete item loses nothing;
* ``always``: every article's page is read, and its article used when it is longer;
* ``never``: the feed's text is the page.

Such an item's document is not published by the parser: it travels in a ``kind=page`` crawl
request (requester ``fulltext:<feed>``, through the host's polite lane, fetched once), and the
autoparser publishes it, as the feed's document, with the page's article or, when the page
cannot be read, with the feed's text and a problem saying so. An item published as the feed
has it (``auto``) is checked against its page too, ``PARITY_PER_FETCH`` per fetch at most
(requester ``parity:<feed>``): a Turbo page that carries much less than its original is
reported (``page.content_mismatch``), as Yandex does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cubes.parser.documents import Candidate
from cubes.parser.xmltext import plain
from shared.messages import FULL_TEXT_PREFIX, PARITY_PREFIX, CrawlKind, CrawlRequest, Document
from shared.origins import try_origin
from shared.pages.wordcount import words
from shared.runtime.cube import Output
from shared.webmaster.feed_options import FullText

__all__ = ["ARTICLE_WORDS", "PARITY_PER_FETCH", "PageOrders", "looks_like_summary"]

#: a summary given alone and shorter than this is a summary: news articles run 300-1,000 words,
#: the descriptions of summary-only feeds one to three sentences (10-80)
ARTICLE_WORDS = 250
#: items published as the feed has them and checked against their page, per fetch: one page more a
#: fetch with news keeps every feed checked without doubling what we ask of the partner's host
PARITY_PER_FETCH = 1
#: a page request is routine work: after the feeds' polls, before bulk
_PRIORITY = 5
_MORE = re.compile(
    r"(?:…|\.\.\.|\[(?:…|\.\.\.)\]|read more|continue reading|more\s*»|weiterlesen|lire la suite|leer más"
    r"|читать далее|подробнее|далее)\W*$",
    re.IGNORECASE,
)


def looks_like_summary(cand: Candidate) -> bool:
    """Whether the item's content reads as a summary of an article (see the module docstring)."""
    text = plain(cand.content_html)
    n = words(" ".join(text.split()))
    return (cand.summary_only and n < ARTICLE_WORDS) or _MORE.search(text[-60:]) is not None


@dataclass
class PageOrders:
    """One fetch's page requests: which items wait for their page, which are checked against it."""

    feed_id: str | None
    mode: FullText
    now: datetime
    #: Turbo RSS: an item's turbo:content is its page (checked, never replaced)
    turbo: bool = False
    #: a YML catalog: its offers are products and its category listings our own pages (categories.py),
    #: none an article with an original to read or check against
    catalog: bool = False
    parity_left: int = PARITY_PER_FETCH
    #: the feed's own fetch options (its sealed credentials, its timeout:
    #: ``shared.webmaster.feed_options.crawl_fields``),
    #: sent along for an item's page on the feed's own origin (a staging site behind a password has its
    #: pages behind it too), never to another origin
    fetch_fields: Mapping[str, Any] = field(default_factory=dict)
    feed_origin: str | None = None

    def route(self, cand: Candidate, doc: Document) -> list[Output]:
        """The outputs of one item's document: itself, its page request instead, or both (a parity check)."""
        published = Output("documents.parsed", doc, key=doc.url)
        if self.feed_id is None or self.catalog or self.mode is FullText.never or cand.kind != "article" or doc.preview:
            return [published]
        if not self.turbo and (self.mode is FullText.always or looks_like_summary(cand)):
            return [self._order(doc, FULL_TEXT_PREFIX)]
        if self.parity_left > 0:
            self.parity_left -= 1
            return [published, self._order(doc, PARITY_PREFIX)]
        return [published]

    def _order(self, doc: Document, prefix: str) -> Output:
        request = CrawlRequest(
            kind=CrawlKind.page,
            url=doc.url,
            host=doc.host,
            requesters=[f"{prefix}{self.feed_id}"],
            feed_id=self.feed_id,
            requested_at=self.now,
            priority=_PRIORITY,
            document=doc,
            **(self.fetch_fields if self.feed_origin is not None and try_origin(doc.url) == self.feed_origin else {}),
        )
        return Output("crawl.requests", request, key=doc.host)
