"""A feed item's page: its article for a summary, the parity check for the rest (docs/architecture.md section 3).

The parser sends a feed item's document along with a ``kind=page`` request for the item's page
(``cubes/parser/fulltext.py`` decides which items, ``CrawlRequest.document``). The crawler fetches
the page through the host's polite lane and hands the document back on the result; here:

* ``fulltext:<feed>`` -- the item is a summary. ``complete`` publishes the document, still the
  feed's (its source, title, date, images, version; nothing is ``outranked``), with the page's
  article when the page's article is clearly longer than the feed's text (``_LONGER``: the
  feed may carry the whole article after all). When the page cannot be read (a failed fetch,
  not HTML, no article, an extraction the completeness guard refuses), the feed's text is
  published and ``page.full_text_unavailable`` says why, with a hint.
* ``parity:<feed>`` -- the item was published as the feed has it. ``parity`` compares its text
  with the page's article: when the published page lacks more than
  ``autoparser.parity_max_missing`` of it, ``page.content_mismatch`` says how much, as Yandex's
  own check does. A page that cannot be read checks nothing.

Texts are compared by their word 3-shingles (CJK characters are words: ``shared/pages/wordcount.py``).
"""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass

from cubes.autoparser.extract import Extraction
from shared.hashing import content_hash
from shared.messages import Document, Media, SourceKind
from shared.pages.wordcount import CJK_TOKEN
from shared.pages.wordcount import words as count_words
from shared.problems import Problem, problem
from shared.urls import MAX_URL_LENGTH

__all__ = ["Completion", "complete", "missing_share", "parity", "plain_text", "unreadable"]

#: the page's article replaces the feed's text only when it has this much more: a feed that carries
#: the article and a page that adds a byline and a caption stay the feed's
_LONGER = 1.25
#: and only when the feed's text lacks this share of the article's shingles (a summary lacks most)
_MISSING = 0.2
#: an article this short says too little to compare with
_MIN_ARTICLE_TOKENS = 40
_TAGS = re.compile(r"<[^>]+>")
_FEED_SOURCES = frozenset({SourceKind.rss, SourceKind.turbo, SourceKind.yml})


@dataclass(frozen=True)
class Completion:
    #: the document to publish (the feed's, with the page's article or without)
    document: Document
    #: what the webmaster is told about it (empty: nothing to tell)
    problems: tuple[Problem, ...] = ()


def plain_text(content_html: str) -> str:
    """The text of a document's HTML: tags dropped, entities decoded."""
    return " ".join(html_lib.unescape(_TAGS.sub(" ", content_html)).split())


def _shingles(text: str) -> list[str]:
    t = CJK_TOKEN.findall(text.lower())
    return [" ".join(t[i : i + 3]) for i in range(max(0, len(t) - 2))]


def missing_share(published: str, article: str) -> float | None:
    """Share of the article's 3-shingles the published text lacks; None for an article too short to tell."""
    wanted = _shingles(article)
    if len(wanted) < _MIN_ARTICLE_TOKENS:
        return None
    have = set(_shingles(published))
    return sum(1 for s in wanted if s not in have) / len(wanted)


def _feed(doc: Document) -> str | None:
    return doc.source.id if doc.source.kind in _FEED_SOURCES else None


def unreadable(doc: Document, why: str) -> Completion:
    """The feed's text published as it is, and why the page's article is not on it."""
    words = count_words(plain_text(doc.content_html))  # a Japanese summary is not "1 words"
    message = f"The item's page {doc.url} could not be read ({why}): the page was published with the feed's text"
    message += f" ({words} words)." if words else "."
    told = problem("page.full_text_unavailable", message, feed=_feed(doc), link=doc.url)
    return Completion(doc, (told,))


def complete(doc: Document, ex: Extraction) -> Completion:
    """The feed's document with its page's article, when that article is the longer text."""
    feed_text = plain_text(doc.content_html)
    missing = missing_share(feed_text, ex.text)
    longer = len(CJK_TOKEN.findall(ex.text)) >= _LONGER * max(1, len(CJK_TOKEN.findall(feed_text)))
    if missing is None or missing < _MISSING or not longer:
        return Completion(doc)  # the feed carries the article
    seen = {m.url for m in doc.media}
    media = [
        *doc.media,
        *(Media(url=src, role="content") for src in ex.images if src not in seen and len(src) <= MAX_URL_LENGTH),
    ]
    merged = doc.model_copy(
        update={
            "content_html": ex.body_html,
            "media": media,
            "summary": doc.summary or feed_text[:1000] or None,
            "author": doc.author or ex.author or None,
            "published_at": doc.published_at or ex.published_at,
            "extra": {**doc.extra, "full_text": "page"},
            "content_hash": content_hash([doc.title, ex.text, doc.content_hash]),
        }
    )
    return Completion(Document.model_validate(merged.model_dump()))


def parity(doc: Document, ex: Extraction, max_missing: float) -> Problem | None:
    """``page.content_mismatch`` when the published ``doc`` lacks more than ``max_missing`` of its page's article."""
    missing = missing_share(plain_text(doc.content_html), ex.text)
    if missing is None or missing <= max_missing:
        return None
    message = (
        f"The Turbo page carries {1 - missing:.0%} of the original's article: {missing:.0%} of the text of "
        f"{doc.url} is not in the feed's item."
    )
    return problem("page.content_mismatch", message, feed=_feed(doc), link=doc.url)
