"""The prolog of a partner's XML, read as XML reads it: does its DOCTYPE declare entities?

(docs/architecture.md section 6, secure by default.) Entity declarations are how every XML bomb and XXE
starts -- billion laughs and quadratic blowup nest or repeat internal entities, XXE points an
external one at a file or a URL -- and no feed, catalog or sitemap needs one. Everything here that
parses partner XML asks this first: the parser refuses such a body (``cubes/parser/xmlsafe.py``),
the scheduler's sitemap and WebSub readers skip it. Even with ``resolve_entities=False`` libxml2
expands internal entities inside *attribute values* (an attribute cannot hold an entity node):
the WebSub reader returned a hub URL of a thousand "lol"s.

The DOCTYPE is found by reading the prolog as XML does (an optional BOM, the declaration,
comments, processing instructions, then the DOCTYPE or the root), however long it is -- a fixed
window was skipped by a DOCTYPE after a 70 KB comment -- and its internal subset token by token,
quoted literals honoured. UTF-16 bodies are read as UTF-8 (the markup is ASCII in either).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Declared", "NeedMore", "declared_entity"]

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


@dataclass(frozen=True, slots=True)
class Declared:
    """The first entity a DOCTYPE declares: where (1-based line and column), its name, and whether
    it is external (SYSTEM / PUBLIC: XXE) or internal (expansion: billion laughs)."""

    name: str
    external: bool
    line: int
    column: int


class NeedMore(Exception):
    """The bytes end inside the prolog: read more before deciding (``complete=False`` only)."""


def _line_col(body: bytes, offset: int) -> tuple[int, int]:
    line = body.count(b"\n", 0, offset) + 1
    return line, offset - (body.rfind(b"\n", 0, offset) + 1) + 1


def _doctype_start(body: bytes) -> int | None:
    """Offset of the DOCTYPE, or None when the prolog ends (at the root or anything else) without one."""
    i, n = (len(_BOM) if body.startswith(_BOM) else 0), len(body)
    while True:
        i = _SPACE.match(body, i).end()  # type: ignore[union-attr]  # "*" matches the empty string
        if i >= n:
            raise NeedMore
        for opener, closer in ((b"<?", b"?>"), (b"<!--", b"-->")):
            if body.startswith(opener, i):
                end = body.find(closer, i + len(opener))
                if end < 0:
                    raise NeedMore
                i = end + len(closer)
                break
        else:
            if n - i < len(_DOCTYPE_KEYWORD):
                raise NeedMore  # too short to tell a DOCTYPE, a comment or the root apart yet
            if body[i : i + len(_DOCTYPE_KEYWORD)].upper() == _DOCTYPE_KEYWORD:
                return i
            return None


def _entity_declaration(body: bytes, start: int) -> re.Match[bytes] | None:
    """The first ``<!ENTITY`` of the internal subset of the DOCTYPE at ``start``, if it has one."""
    head = _DOCTYPE_HEAD.match(body, start)
    assert head is not None  # the keyword is there: the pattern matches at least that
    i = head.end()
    if i >= len(body):
        raise NeedMore
    if body[i : i + 1] != b"[":
        return None  # ">" (no internal subset), or not well-formed: libxml2 refuses it itself
    i += 1
    while i < len(body):
        token = _SUBSET_TOKEN.match(body, i)
        if token is None:
            if body.find(b">", i) < 0:
                raise NeedMore
            return None  # not a declaration: libxml2 stops there with a syntax error
        if token.group() == b"]":
            return None
        entity = _ENTITY.match(body, i)
        if entity is not None:
            return entity
        i = token.end()
    raise NeedMore


#: byte order marks and BOM-less starts ("<?" / "<!" / "<r" in UTF-16) of the wide encodings libxml2 reads
_WIDE = ((b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"), (b"<\x00", "utf-16-le"), (b"\x00<", "utf-16-be"))


def _ascii_compatible(body: bytes) -> bytes:
    """UTF-16 bodies as UTF-8, so the prolog reads the same (the markup is ASCII in either)."""
    for start, codec in _WIDE:
        if body.startswith(start):
            usable = len(body) - len(body) % 2
            return body[:usable].decode(codec, "replace").encode("utf-8")
    return body


def declared_entity(body: bytes, *, complete: bool = True) -> Declared | None:
    """The first entity ``body``'s DOCTYPE declares, or None when it declares none (or has no DOCTYPE).

    ``complete=False``: ``body`` is the start of a stream; ``NeedMore`` when it ends inside the prolog.
    A complete body that ends inside its prolog has no root (libxml2 refuses it anyway); an entity
    declared in what there is is still reported, so the caller can name the attack.
    """
    body = _ascii_compatible(body)
    try:
        start = _doctype_start(body)
        ent = None if start is None else _entity_declaration(body, start)
    except NeedMore:
        if not complete:
            raise
        at = body.upper().find(_DOCTYPE_KEYWORD)
        ent = None if at < 0 else _ENTITY.search(body, at)
    if ent is None:
        return None
    line, column = _line_col(body, ent.start())
    return Declared(ent.group(2).decode("utf-8", "replace"), bool(ent.group(3)), line, column)
