"""Reading HTML bytes into an lxml tree with the right encoding (docs/architecture.md section 3, autoparser).

The encoding is, in order: the caller's (the HTTP ``charset``), UTF-8 when the bytes decode as
UTF-8 (whatever the page declares, when they hold any non-ASCII byte), a ``<meta charset>`` /
``http-equiv`` declaration in the first 4 KB, else libxml2's guess. Comments and processing
instructions are dropped while parsing: nothing downstream reads them.
"""

from __future__ import annotations

import codecs
import re
import threading
from typing import Any

from lxml import etree

__all__ = ["parse_html"]

_CHARSET_DECL = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_-]+)""", re.I)
#: lxml parsers must not be shared between threads (the cube reads big pages in a worker thread)
_local = threading.local()


def _parser(encoding: str | None) -> Any:
    # a plain etree parser, not lxml.html's: lxml.html looks up a Python element class for
    # every element touched, which alone cost a third of the segmentation time
    parsers: dict[str, Any] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    key = encoding or ""
    parser = parsers.get(key)
    if parser is None:
        parser = parsers[key] = etree.HTMLParser(encoding=encoding, remove_comments=True, remove_pis=True)
    return parser


def _parse(data: bytes, encoding: str | None) -> Any:
    root = etree.fromstring(data, _parser(encoding))
    if root is None:  # an empty or whitespace-only document
        root = etree.fromstring(b"<html><body></body></html>", _parser(None))
    return root


def parse_html(html: bytes | str, encoding: str | None = None) -> Any:
    """lxml root of ``html``.

    The encoding is, in order: ``encoding`` (e.g. the HTTP charset), UTF-8 when the bytes decode
    as UTF-8 (see the module docstring), a ``<meta charset>`` in the first 4 KB, else lxml's guess.
    """
    if isinstance(html, str):
        return _parse(html.encode("utf-8", "surrogatepass"), "utf-8")
    if encoding:
        try:
            return _parse(html, encoding.lower())
        except LookupError:
            pass  # an unknown charset name in a header: fall through to the page's own declaration
    m = _CHARSET_DECL.search(html[:4096])
    declared = _known_encoding(m.group(1).decode("ascii")) if m else None
    # bytes that decode as UTF-8 are UTF-8: pages declaring latin-1 / cp1252 while serving UTF-8 are
    # common, and so are pages converted to UTF-8 that kept their old gb2312 / Shift_JIS / cp1251
    # declaration (a Chinese page read as gb2312 came out with no text at all); the reverse almost
    # never happens with real text, whose multi-byte legacy sequences are not valid UTF-8
    try:
        html.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        if declared in (None, "utf-8", *_SINGLE_BYTE) or not html.isascii():
            return _parse(html, "utf-8")
    if declared is not None and m is not None:
        # an explicit encoding: libxml2's own detection misses declarations it does not expect
        # (an http-equiv after other tags) and then reads the page as latin-1
        try:
            return _parse(html, m.group(1).decode("ascii").lower())
        except LookupError:
            pass  # a name Python knows and libxml2 does not: let libxml2 guess
    return _parse(html, None)


_SINGLE_BYTE = frozenset({"latin-1", "iso8859-1", "cp1252", "iso8859-15", "ascii"})


def _known_encoding(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None
