"""XML parsing that cannot be turned against us (DESIGN.md section 6, secure by default).

* no entity expansion, no DTD loading, no network: ``resolve_entities=False``,
  ``load_dtd=False``, ``no_network=True``;
* ``huge_tree=False`` keeps libxml2's own limits: nesting depth 256, a text
  node of 10 MB, bounded attribute values -- a deeply nested or huge-attribute
  document fails fast instead of eating memory;
* a DOCTYPE with an internal subset that declares entities is refused before
  parsing, with a reason that names the attack (billion laughs when the
  entities nest, XXE when one is SYSTEM/PUBLIC). Real feeds never need that.
  The DOCTYPE is found by reading the prolog as XML does (declaration,
  comments, processing instructions, then the DOCTYPE or the root), however
  long it is: a fixed-size window was skipped by a DOCTYPE placed after a
  70 KB comment (issue 18).

A refusal is ``HostileXml``; every other syntax error is an ``XmlError`` with
line and column, which the caller may try to recover from.
"""

from __future__ import annotations

import re
from typing import IO

from lxml import etree

__all__ = ["SAFE_XML", "HostileXml", "XmlError", "check_doctype", "check_doctype_stream", "parse_xml", "xml_error"]

#: what may come before the DOCTYPE (XML 1.0 "prolog"): whitespace, the declaration, comments and
#: processing instructions; ``find`` skips each at C speed, whatever its length
_SPACE = re.compile(rb"[ \t\r\n]*")
_BOM = b"\xef\xbb\xbf"
_DOCTYPE_KEYWORD = b"<!DOCTYPE"
#: the DOCTYPE up to its internal subset ("[") or its end (">"); quoted literals may hold either
_DOCTYPE_HEAD = re.compile(rb"""<!DOCTYPE(?:[^\[>"']|"[^"]*"|'[^']*')*""", re.I)
#: one token of an internal subset: space, comment, PI, a markup declaration (quotes honoured), a
#: parameter-entity reference, or the closing "]"; the alternatives start differently, so no backtracking
_SUBSET_TOKEN = re.compile(rb"""\s+|<!--.*?-->|<\?.*?\?>|<!(?:[^>"']|"[^"]*"|'[^']*')*>|%[^;\s]*;|\]""", re.S)
_ENTITY = re.compile(rb"<!ENTITY\s+(%\s+)?([^\s]+)\s+(SYSTEM|PUBLIC)?", re.I)
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


def _line_col(body: bytes, offset: int) -> tuple[int, int]:
    line = body.count(b"\n", 0, offset) + 1
    return line, offset - (body.rfind(b"\n", 0, offset) + 1) + 1


class _Incomplete(Exception):
    """The bytes end inside the prolog: more are needed to decide."""


def _doctype_start(body: bytes) -> int | None:
    """Offset of the DOCTYPE, or None when the prolog ends (at the root or anything else) without one."""
    i, n = (len(_BOM) if body.startswith(_BOM) else 0), len(body)
    while True:
        i = _SPACE.match(body, i).end()  # type: ignore[union-attr]  # "*" matches the empty string
        if i >= n:
            raise _Incomplete
        for opener, closer in ((b"<?", b"?>"), (b"<!--", b"-->")):
            if body.startswith(opener, i):
                end = body.find(closer, i + len(opener))
                if end < 0:
                    raise _Incomplete
                i = end + len(closer)
                break
        else:
            if n - i < len(_DOCTYPE_KEYWORD):
                raise _Incomplete  # too short to tell a DOCTYPE, a comment or the root apart yet
            if body[i : i + len(_DOCTYPE_KEYWORD)].upper() == _DOCTYPE_KEYWORD:
                return i
            return None


def _entity_declaration(body: bytes, start: int) -> re.Match[bytes] | None:
    """The first ``<!ENTITY`` of the internal subset of the DOCTYPE at ``start``, if it has one."""
    head = _DOCTYPE_HEAD.match(body, start)
    assert head is not None  # the keyword is there: the pattern matches at least that
    i = head.end()
    if i >= len(body):
        raise _Incomplete
    if body[i : i + 1] != b"[":
        return None  # ">" (no internal subset), or not well-formed: libxml2 refuses it itself
    i += 1
    while i < len(body):
        token = _SUBSET_TOKEN.match(body, i)
        if token is None:
            if body.find(b">", i) < 0:
                raise _Incomplete
            return None  # not a declaration: libxml2 stops there with a syntax error
        if token.group() == b"]":
            return None
        entity = _ENTITY.match(body, i)
        if entity is not None:
            return entity
        i = token.end()
    raise _Incomplete


def _refuse(body: bytes, ent: re.Match[bytes]) -> HostileXml:
    line, col = _line_col(body, ent.start())
    if ent.group(3):
        return HostileXml(
            f"DOCTYPE declares an external entity {ent.group(2).decode('utf-8', 'replace')!r} "
            "(XXE: reading local files or URLs); external entities are refused",
            line,
            col,
        )
    return HostileXml(
        "DOCTYPE declares entities (entity expansion, e.g. billion laughs); entity declarations are refused",
        line,
        col,
    )


#: byte order marks and BOM-less starts ("<?" / "<!" / "<r" in UTF-16) of the wide encodings libxml2 reads
_WIDE = ((b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"), (b"<\x00", "utf-16-le"), (b"\x00<", "utf-16-be"))


def _ascii_compatible(body: bytes) -> bytes:
    """UTF-16 bodies as UTF-8, so the prolog reads the same (the markup is ASCII in either)."""
    for start, codec in _WIDE:
        if body.startswith(start):
            usable = len(body) - len(body) % 2
            return body[:usable].decode(codec, "replace").encode("utf-8")
    return body


def _check(body: bytes, *, complete: bool) -> bool:
    """Raise ``HostileXml`` for entity declarations; False when ``body`` ends before that is known."""
    body = _ascii_compatible(body)
    try:
        start = _doctype_start(body)
        ent = None if start is None else _entity_declaration(body, start)
    except _Incomplete:
        if not complete:
            return False
        # the body ends inside its prolog, so it has no root and libxml2 refuses it anyway; an entity
        # declared in what there is is still named as the attack it is
        at = body.upper().find(_DOCTYPE_KEYWORD)
        ent = None if at < 0 else _ENTITY.search(body, at)
    if ent is not None:
        raise _refuse(body, ent)
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
