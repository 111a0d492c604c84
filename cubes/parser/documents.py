"""From parsed items to documents: identity, sanitizing, media, hash (docs/architecture.md sections 3 and 5).

``prepare_items`` is the pure middle of the parser: for each ``ParsedItem`` it
checks the identity (canonical URL on the feed's host), the title, sanitizes
the content, collects the media with their roles, and computes the content
hash. What it cannot use becomes an ``ItemError`` with the item's line and the
reason; one bad item never stops the others. ``to_document`` adds what only
the handler knows (source, version, stage times).
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from cubes.parser.blocks import crumbs_html, related_html, turbo_blocks
from cubes.parser.bounds import bounded_date
from cubes.parser.identity import IdentityError, identify
from cubes.parser.model import DetectedFormat, ItemError, MediaRef, Note, ParsedItem, Severity
from cubes.parser.normalize import content_fields
from cubes.parser.sanitize import ContentCleaner
from cubes.parser.xmltext import plain
from shared.hashing import content_hash
from shared.messages import DocKind, Document, MediaKind, SourceKind, SourceRef
from shared.pages.completeness import carried, incomplete_message
from shared.pages.i18n import language
from shared.urls import canonical_url
from shared.webmaster.hosts import HostScope

__all__ = [
    "Candidate",
    "Removal",
    "describe",
    "prepare_deletions",
    "prepare_isolated",
    "prepare_items",
    "prepare_one",
    "source_kind",
    "to_document",
]

#: the message model's limits (shared/messages.py): longer titles are cut, not refused
_TITLE_MAX = 2000
#: a summary is a teaser; longer ones are cut
_SUMMARY_MAX = 2000
_IMG_SRC = re.compile(r'<img\b[^>]*?\ssrc="([^"]+)"')
#: value -> member: a dict look-up instead of ``Enum.__call__`` (~1 us each, three per document)
_MEDIA_KINDS = {k.value: k for k in MediaKind}
_DOC_KINDS = {k.value: k for k in DocKind}


def _canonical(url: str) -> str | None:
    try:
        return canonical_url(url)
    except ValueError:
        return None


@dataclass(slots=True)
class Candidate:
    """A document before the handler gives it a source, a version and times."""

    url: str
    host: str
    title: str
    content_hash: str
    index: int
    kind: str = "article"
    author: str | None = None
    published: datetime | None = None
    updated: datetime | None = None
    content_html: str = ""
    summary: str | None = None
    media: list[MediaRef] = field(default_factory=list)
    product: dict[str, Any] | None = None
    extra: dict[str, str | list[str]] = field(default_factory=dict)
    guid: str | None = None
    line: int | None = None
    #: what the page could not carry as the source has it (the item is published all the same)
    warnings: list[ItemError] = field(default_factory=list)
    #: the item's content is the feed's summary (``ParsedItem.summary_only``)
    summary_only: bool = False


@dataclass(frozen=True, slots=True)
class Removal:
    url: str
    host: str
    guid: str | None
    #: the item's index in the body; None for a removal of what the body no longer has
    index: int | None


def _media(item: ParsedItem, content: str) -> list[MediaRef]:
    seen: set[str] = set()
    out: list[MediaRef] = []
    for m in item.media:
        url = _canonical(m.url)
        if url and url not in seen:
            seen.add(url)
            m.url = url
            out.append(m)
    if "<img" in content:
        for src in _IMG_SRC.findall(content):
            url = _canonical(html.unescape(src))
            if url and url not in seen:
                seen.add(url)
                out.append(MediaRef(url, "image", "content"))
    return out


_CLEANER = ContentCleaner()


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


_INCOMPLETE = "page.incomplete"
#: how the parser loses an image or a table: the safe-HTML policy removed it
_HOW = (
    "the safe-HTML policy removed them: an image without a web URL (data:, javascript: or none), or "
    "content inside an element removed with everything in it (noscript, object, a form)"
)


def _incomplete(blocks: str, content: str, hold: bool) -> str | None:
    """Held (raises) or warned (the message) when ``content`` lost images or tables of ``blocks``.

    ``blocks``: the item's HTML with its Turbo blocks made static (what they leave out on purpose,
    an ad or a form, is reported by them and holds nothing); ``content``: what the policy kept.
    """
    before = carried(blocks)
    if not before:
        return None  # nothing to lose (the common teaser: one scan)
    lost = carried(content).lost_from(before)
    if not lost:
        return None
    if hold:
        raise IdentityError(incomplete_message(lost, before, _HOW), code=_INCOMPLETE)
    return incomplete_message(lost, before, _HOW, held=False)


def prepare_one(item: ParsedItem, feed_host: HostScope | str | None, cleaner: ContentCleaner = _CLEANER) -> Candidate:
    """One item as a candidate; ``IdentityError`` (with the reason) when it cannot be a page.

    ``cleaner``: the sanitizer with the configured video hosts (default: the default hosts).
    """
    ident = identify(item.link, feed_host)
    title = " ".join((item.title or "").split())
    if not title:
        raise IdentityError("item has no title (or it is empty)", code="item.no_title")
    cut = len(title) > _TITLE_MAX
    if cut:
        title = title[: _TITLE_MAX - 1] + "…"
    lang = language(item.language or _str(item.extra.get("language")))
    extra = {**item.extra, "language": lang} if lang else item.extra
    html = item.content_html + related_html(item.related) if item.related else item.content_html
    if item.crumbs:
        html = crumbs_html(item.crumbs) + html
    html, notes = turbo_blocks(html, page_url=ident.url, lang=lang, video_hosts=cleaner.video_hosts)
    content = cleaner.clean(html, item.base or ident.url, page_url=ident.url)
    incomplete = _incomplete(html, content, cleaner.hold_incomplete)
    media = _media(item, content)
    summary = plain(item.summary)[:_SUMMARY_MAX] or None if item.summary else None
    digest = content_hash(
        content_fields(
            title=title,
            content_html=content,
            author=item.author,
            media_urls=[m.url for m in media],
            product=item.product,
            extra=extra,
        )
    )
    published, bad_published = bounded_date(item.published, "publication date")
    updated, bad_updated = bounded_date(item.updated, "update date")
    # what the reader left out (a number that is not one) and the dates no store could hold: told
    told = [*notes, *item.notes, *(bad for bad in (bad_published, bad_updated) if bad is not None)]
    if cut:
        told.append(
            Note(
                "item.title_cut",
                f"the title is longer than {_TITLE_MAX:,} characters: it is cut there",
            )
        )
    warnings = [
        ItemError(n.message, item.line, None, item.index, ident.url, severity=Severity.warning, code=n.code)
        for n in told
    ]
    if incomplete:
        warnings.append(
            ItemError(incomplete, item.line, None, item.index, ident.url, severity=Severity.warning, code=_INCOMPLETE)
        )
    return Candidate(
        url=ident.url,
        host=ident.host,
        title=title,
        content_hash=digest,
        index=item.index,
        kind=item.kind,
        author=item.author,
        published=published,
        updated=updated,
        content_html=content,
        summary=summary,
        media=media,
        product=item.product,
        extra=extra,
        guid=item.guid,
        line=item.line,
        warnings=warnings,
        summary_only=item.summary_only,
    )


class FirstSeen(Protocol):
    """URL -> index of the first item that had it (a dict, or a compact index for a whole catalog)."""

    def setdefault(self, url: str, index: int, /) -> int: ...


def prepare_items(
    items: Iterable[ParsedItem],
    *,
    feed_host: HostScope | str | None,
    first: FirstSeen | None = None,
    cleaner: ContentCleaner = _CLEANER,
    ready: Mapping[int, Candidate | IdentityError] | None = None,
) -> tuple[list[Candidate], list[ItemError]]:
    """Candidates of every usable item, and an error for every other one.

    ``first`` (URL -> index of the item that has it) carries the duplicate check across the
    batches of one streamed catalog (``catalog_stream.UrlIndex``). ``ready``: item index -> the
    outcome of the items prepared elsewhere already (in a worker process, ``preparing.py``).
    """
    out: list[Candidate] = []
    errors: list[ItemError] = []
    first = {} if first is None else first
    ready = ready or {}
    for item in items:
        try:
            done = ready.get(item.index)
            if isinstance(done, IdentityError):
                raise done
            cand = done if done is not None else prepare_one(item, feed_host, cleaner)
        except IdentityError as exc:
            errors.append(ItemError(str(exc), item.line, None, item.index, item.link, code=exc.code))
            continue
        kept = first.setdefault(cand.url, item.index)
        if kept != item.index:
            errors.append(
                ItemError(
                    f"duplicate link: item {kept} of this feed has the same URL; kept that one",
                    item.line,
                    None,
                    item.index,
                    item.link,
                    code="item.duplicate_link",
                )
            )
            continue
        out.append(cand)
    return out, errors


def prepare_isolated(
    item: ParsedItem, feed_host: HostScope | str | None, cleaner: tuple[tuple[str, ...], bool]
) -> Candidate | tuple[str, str]:
    """``prepare_one`` in a worker process (``preparing.py``): the candidate, or the refusal's (code, message).

    ``cleaner``: ``ContentCleaner.config`` (its cleaner is built once per worker). A refusal travels
    as a tuple: an exception with keyword arguments does not survive the pickle back.
    """
    try:
        return prepare_one(item, feed_host, _cleaner(*cleaner))
    except IdentityError as exc:
        return exc.code, str(exc)


@functools.lru_cache(maxsize=8)
def _cleaner(video_hosts: tuple[str, ...], hold_incomplete: bool) -> ContentCleaner:
    return ContentCleaner(video_hosts, hold_incomplete=hold_incomplete)


def describe(err: ItemError) -> str:
    """An error as one line for a status: where it is, then why."""
    where = []
    if err.index is not None:
        where.append(f"item {err.index + 1}")
    if err.line is not None:
        where.append(f"line {err.line}" + (f", column {err.column}" if err.column is not None else ""))
    return f"{' '.join(where)}: {err.reason}" if where else err.reason


def prepare_deletions(
    items: Iterable[ParsedItem], *, feed_host: HostScope | str | None
) -> tuple[list[Removal], list[ItemError]]:
    out: list[Removal] = []
    errors: list[ItemError] = []
    for item in items:
        try:
            ident = identify(item.link, feed_host)
        except IdentityError as exc:
            errors.append(
                ItemError(
                    f"deletion refused: {exc}", item.line, None, item.index, item.link, code="item.deletion_refused"
                )
            )
            continue
        out.append(Removal(ident.url, ident.host, item.guid, item.index))
    return out, errors


_PARAM_KEYS = frozenset({"name", "value", "unit"})


def _product(data: dict[str, Any] | None) -> dict[str, Any] | None:
    if not data or not data.get("offer_id"):
        return None
    given = data.get("params")
    if given and all(p.keys() == _PARAM_KEYS and type(p["value"]) is str for p in given):
        return data  # a YML offer's params are in the message's shape already: no copy per offer
    params = [
        {"name": p["name"], "value": p.get("value") or "", "unit": p.get("unit")} for p in data.get("params") or ()
    ]
    return {**{k: v for k, v in data.items() if k != "params"}, "params": params}


def to_document(
    cand: Candidate,
    *,
    source: SourceRef,
    version: int,
    seen_at: datetime,
    parsed_at: datetime,
    preview: bool = False,
    retry_failed_before: datetime | None = None,
) -> Document:
    # one validation of the whole tree from plain dicts: about 3x cheaper than building the nested
    # models one by one (6 model __init__ calls per offer), which was the largest cost of a big
    # catalog's first load; the message is validated all the same. A field left at its default (None,
    # an empty list or dict) is not given at all: the model fills it in, without validating a value
    # (~1.2 us of ~9 on a YML offer); the message is the same (``model_fields_set`` aside, which
    # nothing reads)
    values: dict[str, Any] = {
        "url": cand.url,
        "host": cand.host,
        "source": source,
        "kind": _DOC_KINDS.get(cand.kind) or DocKind(cand.kind),
        "title": cand.title,
        "content_html": cand.content_html,
        "content_hash": cand.content_hash,
        "version": version,
        "preview": preview,
        "seen_at": seen_at,
        "parsed_at": parsed_at,
    }
    if retry_failed_before is not None:
        values["retry_failed_before"] = retry_failed_before
    if cand.author is not None:
        values["author"] = cand.author
    if cand.published is not None:
        values["published_at"] = cand.published
    if cand.updated is not None:
        values["updated_at"] = cand.updated
    if cand.summary is not None:
        values["summary"] = cand.summary
    if cand.media:
        values["media"] = [_media_values(m) for m in cand.media]
    if (product := _product(cand.product)) is not None:
        values["product"] = product
    if cand.extra:
        values["extra"] = cand.extra
    if cand.guid is not None:
        values["guid"] = cand.guid
    return Document.model_validate(values)


def _media_values(m: MediaRef) -> dict[str, Any]:
    values: dict[str, Any] = {"url": m.url, "kind": _MEDIA_KINDS.get(m.kind) or MediaKind(m.kind), "role": m.role}
    if m.mime is not None:
        values["mime"] = m.mime
    if m.width is not None:
        values["width"] = m.width
    if m.height is not None:
        values["height"] = m.height
    return values


def source_kind(fmt: DetectedFormat) -> SourceKind:
    """The kind of source a feed of format ``fmt`` is, as its documents name it."""
    if fmt is DetectedFormat.turbo:
        return SourceKind.turbo
    if fmt is DetectedFormat.yml:
        return SourceKind.yml
    return SourceKind.rss
