"""XML parsing that cannot be turned against us (DESIGN.md section 6, secure by default).

* no entity expansion, no DTD loading, no network: ``resolve_entities=False``,
  ``load_dtd=False``, ``no_network=True``;
* ``huge_tree=False`` keeps libxml2's own limits: nesting depth 256, a text
  node of 10 MB, bounded attribute values -- a deeply nested or huge-attribute
  document fails fast instead of eating memory;
* a DOCTYPE with an internal subset that declares entities is refused before
  parsing, with a reason that names the attack (billion laughs when the
  entities nest, XXE when one is SYSTEM/PUBLIC). Real feeds never need that.

A refusal is ``HostileXml``; every other syntax error is an ``XmlError`` with
line and column, which the caller may try to recover from.
"""

from __future__ import annotations

import re

from lxml import etree

__all__ = ["SAFE_XML", "HostileXml", "XmlError", "check_doctype", "parse_xml", "xml_error"]

#: the DOCTYPE, when there is one, sits before the root element; 64 KB is generous for any prolog
_PROLOG_BYTES = 64 * 1024
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.I)
_ENTITY = re.compile(rb"<!ENTITY\s+(%\s+)?([^\s]+)\s+(SYSTEM|PUBLIC)?", re.I)

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


def _line_col(body: bytes, offset: int) -> tuple[int, int]:
    line = body.count(b"\n", 0, offset) + 1
    return line, offset - (body.rfind(b"\n", 0, offset) + 1) + 1


def check_doctype(body: bytes) -> None:
    """Refuse a DOCTYPE that declares entities (billion laughs, XXE)."""
    prolog = body[:_PROLOG_BYTES]
    dt = _DOCTYPE.search(prolog)
    if dt is None:
        return
    ent = _ENTITY.search(body, dt.end(), dt.end() + _PROLOG_BYTES)
    if ent is None:
        return
    line, col = _line_col(body, ent.start())
    if ent.group(3):
        raise HostileXml(
            f"DOCTYPE declares an external entity {ent.group(2).decode('utf-8', 'replace')!r} "
            "(XXE: reading local files or URLs); external entities are refused",
            line,
            col,
        )
    raise HostileXml(
        "DOCTYPE declares entities (entity expansion, e.g. billion laughs); entity declarations are refused",
        line,
        col,
    )


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
