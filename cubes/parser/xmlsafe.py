"""XML parsing that cannot be turned against us (docs/architecture.md section 6, secure by default).

* no entity expansion, no DTD loading, no network: ``resolve_entities=False``,
  ``load_dtd=False``, ``no_network=True``;
* ``huge_tree=False`` keeps libxml2's own limits: nesting depth 256, a text
  node of 10 MB, bounded attribute values -- a deeply nested or huge-attribute
  document fails fast instead of eating memory;
* a DOCTYPE with an internal subset that declares entities is refused before
  parsing, with a reason that names the attack (billion laughs when the
  entities nest, XXE when one is SYSTEM/PUBLIC). Real feeds never need that.
  The prolog is read by ``shared.xmlguard``, the one reader of it that the
  scheduler's sitemap and WebSub readers use too.

A refusal is ``HostileXml``; every other syntax error is an ``XmlError`` with
line and column, which the caller may try to recover from.
"""

from __future__ import annotations

import re
from typing import IO

from lxml import etree

from shared.xmlguard import Declared, NeedMore, declared_entity

__all__ = ["SAFE_XML", "HostileXml", "XmlError", "check_doctype", "check_doctype_stream", "parse_xml", "xml_error"]

#: chunks read from a stream while its prolog is not over yet
_CHUNK = 64 * 1024

#: libxml2 messages that mean "this document is built to hurt", never recovered from
_HOSTILE_MESSAGES = (
    "excessive depth",
    "huge input lookup",
    "huge text node",
    "attvalue length too long",
    "xmlsax2characters: huge",
    "maximum entity amplification",
    "entity reference loop",
    "detected an entity reference loop",
    "name too long",
    "resource limit exceeded",
    "xml_parse_huge",
)


class XmlError(Exception):
    """The body is not well-formed XML; ``line``/``column`` are 1-based when known."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None) -> None:
        where = f" at line {line}, column {column}" if line else ""
        super().__init__(f"{reason}{where}")
        self.reason = reason
        self.line = line
        self.column = column


class HostileXml(XmlError):
    """The body tries an XML attack (entities, depth, size); refused, never recovered."""


def _refuse(found: Declared) -> HostileXml:
    if found.external:
        return HostileXml(
            f"DOCTYPE declares an external entity {found.name!r} "
            "(XXE: reading local files or URLs); external entities are refused",
            found.line,
            found.column,
        )
    return HostileXml(
        "DOCTYPE declares entities (entity expansion, e.g. billion laughs); entity declarations are refused",
        found.line,
        found.column,
    )


def _check(body: bytes, *, complete: bool) -> bool:
    """Raise ``HostileXml`` for entity declarations; False when ``body`` ends before that is known."""
    try:
        found = declared_entity(body, complete=complete)
    except NeedMore:
        return False
    if found is not None:
        raise _refuse(found)
    return True


def check_doctype(body: bytes) -> None:
    """Refuse a DOCTYPE that declares entities (billion laughs, XXE), wherever in the prolog it is."""
    _check(body, complete=True)


def check_doctype_stream(source: IO[bytes]) -> None:
    """``check_doctype`` for a stream: reads only as far as the prolog goes, then rewinds ``source``."""
    body = b""
    while True:
        chunk = source.read(max(_CHUNK, len(body)))  # doubling: a long prolog costs linear time
        body += chunk
        if _check(body, complete=not chunk):
            break
    source.seek(0)


#: what every XML parse here runs with, whole documents and streamed catalogs alike: no entity
#: expansion, no network, no DTD, libxml2's size guards on, comments and processing instructions dropped
SAFE_XML = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "huge_tree": False,
    "remove_comments": True,
    "remove_pis": True,
}


def _parser(recover: bool) -> etree.XMLParser:
    return etree.XMLParser(**SAFE_XML, dtd_validation=False, recover=recover, remove_blank_text=False, strip_cdata=True)


def _clean(message: str) -> str:
    """libxml2's message without its position suffix and the text it quotes (which can be anything)."""
    first = message.strip().split("\n", 1)[0]
    first = re.sub(r",? line \d+, column \d+$", "", first)
    return first[:200]


def xml_error(exc: etree.XMLSyntaxError) -> XmlError:
    """Our error for lxml's, hostile or not."""
    msg = _clean(str(exc.msg or exc))
    line, column = exc.position if exc.position else (exc.lineno, exc.offset)
    low = msg.lower()
    if any(h in low for h in _HOSTILE_MESSAGES):
        return HostileXml(f"refused: {msg} (limits against nesting / size attacks)", line, column)
    return XmlError(msg, line, column)


def parse_xml(
    body: bytes, *, recover: bool = False, base_url: str | None = None
) -> tuple[etree._Element, list[XmlError]]:
    """The root element of ``body`` and, when recovering, what libxml2 complained about.

    Raises ``HostileXml``, or ``XmlError`` when nothing could be read. A parser
    is made per call (a few microseconds): lxml parsers must not be shared
    between threads, and the cube parses large bodies in a worker thread.
    """
    check_doctype(body)
    parser = _parser(recover)
    try:
        root = etree.fromstring(body, parser, base_url=base_url)
    except etree.XMLSyntaxError as exc:
        raise xml_error(exc) from None
    if root is None:
        raise XmlError("no root element (empty or unreadable body)", 1, 1)
    logged: list[XmlError] = []
    if recover:
        for entry in parser.error_log:
            low = entry.message.lower()
            # recovery can swallow an attack's error: refuse like the strict parser would
            if any(h in low for h in _HOSTILE_MESSAGES):
                raise HostileXml(f"refused: {_clean(entry.message)}", entry.line, entry.column)
            logged.append(XmlError(_clean(entry.message), entry.line, entry.column))
    return root, logged
