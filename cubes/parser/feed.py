"""``parse_feed``: bytes in, items out; no bus, no store (docs/architecture.md section 3, parser).

The order of attempts, and why:

0. a gzip file is inflated (``compressed``: bounded, a bomb costs the limit);
1. the format is sniffed (``detect``); YML is streamed (``yml``), JSON read
   as partner documents or JSON Feed (``jsondoc``);
2. XML: the charset is settled (``detect.prepare_xml``), blank lines before
   the XML declaration are moved after it, then lxml reads it strictly
   (``xmlsafe``) -- the fast path, about 10x feedparser; a feed wrapped in
   another root (``<html><body><feed>``) is read from the inner root;
3. an attack (entity declarations, absurd nesting or sizes) stops here with
   the reason: nothing is recovered from a hostile body;
4. a body that is not well-formed because of a bare ``&``, an HTML entity or
   an undeclared prefix (``turbo:`` without ``xmlns:turbo``) is repaired
   (``repair``: nothing is lost, each repair is a warning on its item) and read
   strictly again;
5. what is still not well-formed is read again with lxml's recovery; if that
   finds the items, they are used and the error is kept as a *warning* with
   its line and column (the webmaster should fix the feed, the readers should
   not wait for it);
6. otherwise, and for roots lxml's readers do not know, feedparser's loose
   parser gets the bytes; if it finds nothing either, the feed is ``fatal``
   and the first strict error (line, column) is what the webmaster sees --
   unless the body is an HTML page: then it is ``feed.not_a_feed`` naming the
   feeds the page links to (``html_page``).

Then Turbo's deletions and limits apply to every XML feed.
"""

from __future__ import annotations

import io

from lxml import etree

from cubes.parser.atom import ENTRY_TAGS, MISPLACED_ITEM_TAGS, atom_meta, read_atom_entries
from cubes.parser.categories import Listings
from cubes.parser.compressed import InflateError, gunzip, gunzip_head, is_gzip
from cubes.parser.detect import detect_format, prepare_xml
from cubes.parser.html_page import not_a_feed
from cubes.parser.jsondoc import parse_json_documents, parse_json_feed
from cubes.parser.model import DetectedFormat, FeedMeta, ItemError, ParseResult, Severity
from cubes.parser.repair import fix_problems, repair_xml
from cubes.parser.rss import ITEM_TAGS, read_rss_items, rss_meta
from cubes.parser.turbo import Limits, apply_limits, apply_turbo, oversized
from cubes.parser.xmlsafe import HostileXml, XmlError, parse_xml
from cubes.parser.xmltext import ATOM03, ATOM10, RDF, TURBO
from cubes.parser.yml import Catalog, iter_yml
from shared.webmaster.feed_discovery import looks_like_html

__all__ = ["Limits", "parse_feed", "parse_yml", "yml_source"]

_ATOM_ROOTS = (f"{{{ATOM10}}}feed", f"{{{ATOM03}}}feed")


def _feedparser(body: bytes, url: str | None, content_type: str | None) -> ParseResult:
    """feedparser's loose parse, imported on first use: a rare path (bodies lxml cannot read), and
    feedparser with its charset detector is most of what ``turbocubes parse`` of a good feed would load."""
    from cubes.parser.fallback import parse_with_feedparser

    return parse_with_feedparser(body, url, content_type)


def parse_feed(
    body: bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    declared_format: str | None = None,
    limits: Limits | None = None,
) -> ParseResult:
    """Everything one body holds; never raises for bad input (errors are in the result)."""
    limits = limits or Limits()
    if is_gzip(body):
        try:
            body = gunzip(body, limits.max_body_bytes)
        except InflateError as exc:
            return _fatal(DetectedFormat.unknown, ItemError(exc.reason, code=exc.code))
    if not body or not body.strip():
        return _fatal(DetectedFormat.unknown, ItemError("empty body: no feed to read", 1, 1, code="feed.empty"))
    fmt = detect_format(body, declared_format)
    if fmt is DetectedFormat.json:
        result = parse_json_documents(body)
        apply_limits(result, limits)
        return result
    if fmt is DetectedFormat.jsonfeed:
        result = parse_json_feed(body, url)
        apply_limits(result, limits)
        return result
    prepared = prepare_xml(body, content_type)
    if fmt is DetectedFormat.yml:
        result = parse_yml(prepared.body, url=url, limits=limits)
        result.encoding = prepared.encoding
        return result
    result = _parse_xml_feed(_decl_first(prepared.body), url, content_type, fmt)
    if result.fatal and looks_like_html(prepared.body):
        return not_a_feed(prepared.body, url)  # a site's page given as its feed: the feeds it names
    if url is None and (own := _self_url(result)) is not None:
        # no URL given (a file): the feed's own address is what its relative links mean
        result = _parse_xml_feed(_decl_first(prepared.body), own, content_type, fmt)
    result.encoding = result.encoding or prepared.encoding
    for code, message, line in result.meta.ignored:
        severity = Severity.info if code in _INFO_CODES else Severity.warning
        result.errors.append(ItemError(message, line, None, severity=severity, code=code))
    if result.items:
        apply_turbo(result)
        apply_limits(result, limits)
        if result.meta.language:  # the channel's language is every item's that does not say its own
            for it in result.items:
                it.language = it.language or result.meta.language
    return result


#: the channel's markup we knowingly do not use: nothing to fix
_INFO_CODES = frozenset({"turbo.analytics_ignored", "turbo.ads_ignored"})


def yml_source(
    body: bytes,
    *,
    content_type: str | None = None,
    declared_format: str | None = None,
    limits: Limits | None = None,
) -> tuple[bytes, str] | None:
    """When ``body`` is a YML catalog: the bytes ``iter_yml`` should read and their encoding; else None.

    ``parse_feed`` decides the same way; the handler uses this to stream a big catalog in batches
    instead of holding all its offers at once. A gzipped catalog is inflated (a broken or too large
    one is left to ``parse_feed``, which says why).
    """
    if is_gzip(body):
        head = gunzip_head(body, 8192)
        if not head.strip() or detect_format(head, declared_format) is not DetectedFormat.yml:
            return None
        try:
            body = gunzip(body, (limits or Limits()).max_body_bytes)
        except InflateError:
            return None
    if not body or not body.strip() or detect_format(body, declared_format) is not DetectedFormat.yml:
        return None
    prepared = prepare_xml(body, content_type)
    return prepared.body, prepared.encoding


def _self_url(result: ParseResult) -> str | None:
    """The feed's ``rel="self"`` address when it is an absolute http(s) URL (else None)."""
    own = (result.meta.self_url or "").strip()
    return own if not result.fatal and own.startswith(("http://", "https://")) else None


def _decl_first(body: bytes) -> bytes:
    """Blank lines before ``<?xml ...?>`` (a PHP template's habit) moved after it.

    Strict XML refuses a declaration that is not the very first thing; moving
    the whitespace behind it, instead of dropping it, keeps every line number
    the webmaster will be told about.
    """
    if not body[:1].isspace():
        return body
    stripped = body.lstrip()
    if not stripped.startswith(b"<?xml"):
        return body
    end = stripped.find(b"?>")
    if end < 0:
        return body
    return stripped[: end + 2] + body[: len(body) - len(stripped)] + stripped[end + 2 :]


def _fatal(fmt: DetectedFormat, err: ItemError) -> ParseResult:
    return ParseResult(fmt, errors=[err], fatal=True)


def _parse_xml_feed(body: bytes, url: str | None, content_type: str | None, fmt: DetectedFormat) -> ParseResult:
    try:
        root, _ = parse_xml(body, base_url=url)
    except HostileXml as exc:
        return _fatal(fmt, ItemError(exc.reason, exc.line, exc.column, code="xml.hostile"))
    except XmlError as strict:
        # bare ampersands, HTML entities, undeclared prefixes: undone without losing text (repair.py)
        repaired = repair_xml(body)
        if not repaired.fixes:
            return _recover(body, url, content_type, fmt, strict)
        try:
            root, _ = parse_xml(repaired.body, base_url=url)
        except HostileXml as exc:
            return _fatal(fmt, ItemError(exc.reason, exc.line, exc.column, code="xml.hostile"))
        except XmlError as still:
            result = _recover(repaired.body, url, content_type, fmt, still)
        else:
            result = _read_tree(root, repaired.body, url, content_type, fmt, None, [], nested=False)
            result.meta.parser = "lxml-repaired"
        result.errors[:0] = fix_problems(body, repaired.fixes, result.items)
        return result
    return _read_tree(root, body, url, content_type, fmt, None, [], nested=False)


def _recover(
    body: bytes, url: str | None, content_type: str | None, fmt: DetectedFormat, strict: XmlError
) -> ParseResult:
    """lxml's recovery, then feedparser's loose parser; the strict error is kept as the warning."""
    warning = ItemError(
        f"not well-formed XML: {strict.reason}",
        strict.line,
        strict.column,
        severity=Severity.warning,
        code="xml.recovered",
    )
    try:
        root, logged = parse_xml(body, recover=True, base_url=url)
    except HostileXml as exc:
        return _fatal(fmt, ItemError(exc.reason, exc.line, exc.column, code="xml.hostile"))
    except XmlError:
        root = None
    if root is not None and not _has_entries(root):
        root = None
    if root is None:
        result = _feedparser(body, url, content_type)
        if result.fatal or not result.items:
            # what the webmaster needs is lxml's first error: it has the line and column
            warning.severity = Severity.error
            warning.code = "xml.malformed"
            result.errors = [warning]
            result.fatal = True
        else:
            result.errors.insert(0, warning)
        return result
    return _read_tree(root, body, url, content_type, fmt, warning, logged, nested=False)


_KNOWN_LOCAL = ("rss", "RDF", "channel")


def _read_tree(
    root: etree._Element,
    body: bytes,
    url: str | None,
    content_type: str | None,
    fmt: DetectedFormat,
    warning: ItemError | None,
    logged: list[XmlError],
    *,
    nested: bool,
) -> ParseResult:
    tag = root.tag if isinstance(root.tag, str) else ""
    xml_base = b"xml:base" in body
    if tag in _ATOM_ROOTS:
        result = ParseResult(DetectedFormat.atom, meta=atom_meta(root, url))
        result.items = read_atom_entries(root, url, xml_base=xml_base)
        if not result.items and (misplaced := next(root.iter(*MISPLACED_ITEM_TAGS), None)) is not None:
            result.items = read_atom_entries(root, url, xml_base=xml_base, tags=MISPLACED_ITEM_TAGS)
            result.errors.append(
                ItemError(
                    f"this Atom feed has {len(result.items)} <item> element(s) and no <entry>: read as entries",
                    misplaced.sourceline,
                    None,
                    severity=Severity.warning,
                    code="feed.misplaced_items",
                )
            )
    elif tag.rsplit("}", 1)[-1] in _KNOWN_LOCAL:
        rdf = tag.endswith("RDF")
        turbo = TURBO in (root.nsmap or {}).values() or fmt is DetectedFormat.turbo
        kind = DetectedFormat.rdf if rdf else (DetectedFormat.turbo if turbo else DetectedFormat.rss)
        result = ParseResult(kind, meta=rss_meta(root, url))
        result.items = read_rss_items(root, url, xml_base=xml_base)
    elif not nested and (inner := _nested_feed(root)) is not None:
        # a feed wrapped in something else (<html><body><feed>...): read the feed inside
        return _read_tree(inner, body, url, content_type, fmt, warning, logged, nested=True)
    else:
        # not a root our readers know (an RSS dialect, a misnamed root): feedparser may still know it
        result = _feedparser(body, url, content_type)
        if not result.items:
            return _fatal(
                fmt,
                ItemError(
                    f"not a feed: the root element is <{tag.rsplit('}', 1)[-1] or '?'}>, "
                    "expected <rss>, <rdf:RDF>, <feed> or <yml_catalog>",
                    root.sourceline,
                    1,
                    code="feed.not_a_feed",
                ),
            )
        return result
    if warning is not None:
        result.meta.parser = "lxml-recover"
        result.errors.append(warning)
        result.errors.extend(
            ItemError(f"recovered: {e.reason}", e.line, e.column, severity=Severity.warning, code="xml.recovered")
            for e in logged[1:5]
        )
    return result


def _nested_feed(root: etree._Element) -> etree._Element | None:
    """The first <feed> / <rss> / <rdf:RDF> below the root, if any."""
    for el in root.iter(*_ATOM_ROOTS, "rss", f"{{{RDF}}}RDF"):
        if el is not root:
            return el
    return None


def _has_entries(root: object) -> bool:
    it = root.iter(*ITEM_TAGS, *ENTRY_TAGS)  # type: ignore[attr-defined]
    return next(it, None) is not None


def parse_yml(body: bytes, *, url: str | None = None, limits: Limits | None = None) -> ParseResult:
    """A whole YML catalog as a ``ParseResult`` (the cube's path; the streaming reader is ``iter_yml``)."""
    result = ParseResult(DetectedFormat.yml, meta=FeedMeta(parser="iterparse", version="yml"))
    catalog, listings = Catalog(), Listings()
    limits = limits or Limits()
    try:
        for entry in iter_yml(io.BytesIO(body), base=url, catalog=catalog):
            if isinstance(entry, ItemError):
                result.errors.append(entry)
            elif (refused := oversized(entry, limits)) is not None:
                result.errors.append(refused)
            else:
                result.items.append(entry)
                listings.add(entry)
    except HostileXml as exc:
        result.errors.append(ItemError(exc.reason, exc.line, exc.column, code="xml.hostile"))
        result.fatal = True
        return result
    if not result.items and result.errors:
        result.fatal = True
    else:
        # the category listing pages, after the offers (categories.py)
        result.listings = listings.items(catalog, len(result.items))
    return result
