"""Feeds that are almost XML: the mistakes a reader can undo without losing text (docs/architecture.md s.3, s.10).

Recovery mode (libxml2's) keeps what it can parse and drops the rest: a title
``herons & egrets`` came out as ``herons  egrets`` under a green "ok". Two
mistakes are common in real feeds and have exactly one reading, so they are
*repaired* before recovery is even tried, and each repair is reported:

* **control characters.** A NUL or another C0 control (not tab, newline or
  carriage return) is not allowed anywhere in XML 1.0, not even in CDATA:
  recovery cut the item's text at the first one. That one character is dropped
  (it carries no text a reader could see) and the item says so, everything
  after it is kept.

* **ampersands and HTML entities.** A bare ``&`` (``AT&T``, ``?a=1&b=2``) is
  kept as ``&`` (written ``&amp;``); an HTML entity XML does not define
  (``&nbsp;``, ``&mdash;``) is read as its character (a numeric reference).
  Inside CDATA sections and comments nothing is touched: ``&`` means ``&`` there.
* **undeclared prefixes.** ``<turbo:content>`` in a feed that forgot
  ``xmlns:turbo`` (Yandex's own validator tolerates it, and it is common): the
  well-known prefixes get their namespace declared on the root element
  (``KNOWN_PREFIXES``), any other prefix a placeholder namespace, so the
  document is read as its author meant it.

Every repair keeps line numbers (nothing adds or drops a newline), so the
positions reported are the webmaster's own.
"""

from __future__ import annotations

import bisect
import html.entities
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from cubes.parser.model import ItemError, ParsedItem, Severity
from cubes.parser.xmltext import ATOM10, CONTENT, DC, DCTERMS, ITUNES, MEDIA_NS, RDF, TURBO, XHTML, YANDEX

__all__ = ["KNOWN_PREFIXES", "Fix", "FixKind", "Repaired", "fix_problems", "position", "repair_xml"]

#: prefixes feeds use, with the namespace a forgotten declaration of them means
KNOWN_PREFIXES: dict[bytes, bytes] = {
    b"turbo": TURBO.encode(),
    b"yandex": YANDEX.encode(),
    b"media": MEDIA_NS[0].encode(),
    b"content": CONTENT.encode(),
    b"dc": DC.encode(),
    b"dcterms": DCTERMS.encode(),
    b"atom": ATOM10.encode(),
    b"itunes": ITUNES.encode(),
    b"rdf": RDF.encode(),
    b"xhtml": XHTML.encode(),
    b"georss": b"http://www.georss.org/georss",
    b"slash": b"http://purl.org/rss/1.0/modules/slash/",
    b"wfw": b"http://wellformedweb.org/CommentAPI/",
    b"sy": b"http://purl.org/rss/1.0/modules/syndication/",
}
#: the namespace an unknown undeclared prefix is read in (its elements are then simply not ours)
_PLACEHOLDER = b"urn:turbocubes:undeclared:"

#: CDATA sections, comments and processing instructions: copied as they are
_VERBATIM = re.compile(rb"<!\[CDATA\[.*?\]\]>|<!--.*?-->|<\?.*?\?>", re.S)
_AMP = re.compile(rb"&(#[0-9]+;|#x[0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9._-]*;)?")
_XML_ENTITIES = frozenset({b"amp;", b"lt;", b"gt;", b"quot;", b"apos;"})
#: a prefix on an element or attribute name (``<turbo:content``, `` yandex:x=``, ``</turbo:content``)
_PREFIX_USE = re.compile(rb"</?([A-Za-z_][\w.-]*):[A-Za-z_]|\s([A-Za-z_][\w.-]*):[A-Za-z_][\w.-]*\s*=")
_PREFIX_DECL = re.compile(rb"xmlns:([A-Za-z_][\w.-]*)\s*=")
#: the C0 controls XML 1.0 forbids everywhere (tab, newline and carriage return are allowed)
_CONTROL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
#: the root element's start tag: the first "<" that opens an element (after the prolog)
_ROOT_TAG = re.compile(rb"<[A-Za-z_][^\s/>]*")


class FixKind(StrEnum):
    ampersand = "ampersand"  # a bare & kept as &
    entity = "entity"  # an HTML entity read as its character
    prefix = "prefix"  # a namespace declared for an undeclared prefix
    control = "control"  # a control character XML forbids, dropped


@dataclass(frozen=True, slots=True)
class Fix:
    kind: FixKind
    #: byte offset in the original body (``position`` turns it into line and column)
    offset: int
    #: what was there: "&", "&nbsp;", "turbo"
    text: str


@dataclass(slots=True)
class Repaired:
    body: bytes
    fixes: list[Fix] = field(default_factory=list)


def position(body: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``body``."""
    line = body.count(b"\n", 0, offset) + 1
    return line, offset - (body.rfind(b"\n", 0, offset) + 1) + 1


def _fix_amps(segment: bytes, start: int, fixes: list[Fix]) -> bytes:
    if b"&" not in segment:
        return segment

    def one(m: re.Match[bytes]) -> bytes:
        ref = m.group(1)
        if ref is None:
            fixes.append(Fix(FixKind.ampersand, start + m.start(), "&"))
            return b"&amp;"
        if ref.startswith(b"#") or ref in _XML_ENTITIES:
            return m.group(0)
        char = html.entities.html5.get(ref.decode("ascii", "replace"))
        if char is not None:
            fixes.append(Fix(FixKind.entity, start + m.start(), m.group(0).decode("ascii", "replace")))
            return b"".join(b"&#%d;" % ord(c) for c in char)
        # "&T;" in "AT&T;" is no entity at all: the & is bare
        fixes.append(Fix(FixKind.ampersand, start + m.start(), "&"))
        return b"&amp;" + ref

    return _AMP.sub(one, segment)


def _prefix_uses(segment: bytes, start: int, first: dict[bytes, int], declared: set[bytes]) -> None:
    """Record the first use of each prefix in ``segment`` (outside CDATA), and the declared ones."""
    if b":" not in segment:
        return
    for m in _PREFIX_USE.finditer(segment):
        prefix = m.group(1) or m.group(2)
        first.setdefault(prefix, start + m.start())
    declared.update(_PREFIX_DECL.findall(segment))


def _declare(out: bytes, missing: list[bytes]) -> bytes:
    """``out`` with ``missing`` declared on its root element, right after the root's name."""
    m = _ROOT_TAG.search(out)
    if m is None:
        return out
    decls = b"".join(b' xmlns:%s="%s"' % (p, KNOWN_PREFIXES.get(p, _PLACEHOLDER + p)) for p in missing)
    return out[: m.end()] + decls + out[m.end() :]


def repair_xml(body: bytes) -> Repaired:
    """``body`` with control characters, bare ampersands, HTML entities and undeclared prefixes repaired.

    ``fixes`` says where, as offsets in ``body``. For an ASCII-compatible encoding (UTF-8 and the
    single-byte ones, where a byte below 0x20 is always that control; UTF-16 is transcoded before).
    """
    fixes = [Fix(FixKind.control, m.start(), f"U+{m.group(0)[0]:04X}") for m in _CONTROL.finditer(body)]
    if fixes:
        # dropped first, everywhere (CDATA too); later offsets are mapped back to the original body
        kept = _CONTROL.sub(b"", body)
        rest = _repair_markup(kept)
        starts = [f.offset for f in fixes]
        moved = [Fix(f.kind, f.offset + _dropped_before(starts, f.offset), f.text) for f in rest.fixes]
        return Repaired(rest.body, sorted(fixes + moved, key=lambda f: f.offset))
    return _repair_markup(body)


def _dropped_before(starts: Sequence[int], offset: int) -> int:
    """How many dropped characters came before ``offset`` of the body they were dropped from."""
    # the k-th dropped one sat at starts[k] in the original, i.e. right before starts[k] - k after the drop
    return bisect.bisect_right([s - k for k, s in enumerate(starts)], offset)


def _repair_markup(body: bytes) -> Repaired:
    fixes: list[Fix] = []
    parts: list[bytes] = []
    first_use: dict[bytes, int] = {}
    declared: set[bytes] = set()
    pos = 0
    for m in _VERBATIM.finditer(body):
        segment = body[pos : m.start()]
        _prefix_uses(segment, pos, first_use, declared)
        parts.append(_fix_amps(segment, pos, fixes))
        parts.append(m.group(0))
        pos = m.end()
    _prefix_uses(body[pos:], pos, first_use, declared)
    parts.append(_fix_amps(body[pos:], pos, fixes))
    out = b"".join(parts)
    missing = sorted(set(first_use) - declared - {b"xml", b"xmlns"})
    if missing:
        out = _declare(out, missing)
        fixes.extend(Fix(FixKind.prefix, first_use[p], p.decode("ascii", "replace")) for p in missing)
    return Repaired(out, sorted(fixes, key=lambda f: f.offset))


_CODES = {
    FixKind.ampersand: "xml.bare_ampersand",
    FixKind.entity: "xml.html_entity",
    FixKind.prefix: "xml.undeclared_prefix",
    FixKind.control: "xml.control_character",
}


def fix_problems(body: bytes, fixes: Sequence[Fix], items: Sequence[ParsedItem]) -> list[ItemError]:
    """A warning per repaired item and kind of repair (how many, and where the first one is).

    A fix belongs to the item whose start line is the last one at or before it; fixes before the
    first item (the channel's title) and the prefix declarations are the feed's.
    """
    # items without a line (read by feedparser) cannot be told apart: their fixes are the feed's
    starts = [it.line or 0 for it in items] if all(it.line for it in items) else []
    groups: dict[tuple[int | None, FixKind, str], list[Fix]] = {}
    for fix in fixes:
        line, _ = position(body, fix.offset)
        at = bisect.bisect_right(starts, line) - 1
        index = None if fix.kind is FixKind.prefix or at < 0 else at
        # one warning per item and kind; one per prefix (each names its own declaration)
        groups.setdefault((index, fix.kind, fix.text if fix.kind is FixKind.prefix else ""), []).append(fix)
    out = []
    for (index, kind, _), group in groups.items():
        line, column = position(body, group[0].offset)
        if kind is FixKind.prefix:
            reason = f"prefix {group[0].text}: is used without its xmlns:{group[0].text} declaration; read as declared"
        elif kind is FixKind.control:
            names = ", ".join(sorted({f.text for f in group}))
            what = "character" if len(group) == 1 else "characters"
            reason = f"{len(group)} control {what} XML forbids ({names}) dropped; the text around kept"
        elif kind is FixKind.ampersand:
            reason = f"{len(group)} bare & kept as & (write &amp;)"
        else:
            names = ", ".join(sorted({f.text for f in group}))
            what = "entity" if len(group) == 1 else "entities"
            reason = f"{len(group)} HTML {what} XML does not define ({names}) read as characters"
        item = items[index] if index is not None else None
        out.append(
            ItemError(
                reason,
                line,
                column,
                index=item.index if item else None,
                link=item.link if item else None,
                severity=Severity.warning,
                code=_CODES[kind],
            )
        )
    return out
