"""Which format a body is in, and which charset it is written in (docs/architecture.md section 3, parser).

Format: sniffed from the root element (and ``xmlns:turbo`` for Turbo RSS),
never from the file name. Charset, in order: a BOM, UTF-16 without one (told
by its zero bytes), the XML declaration, the
HTTP ``charset``, valid UTF-8, and only then ``charset_normalizer`` -- the
last step is what decodes a windows-1251 or KOI8-R feed that declares
nothing (the common way Russian feeds break). A body decoded that way is
re-encoded as UTF-8 with its declaration removed, so lxml and feedparser
read the same text.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from cubes.parser.model import DetectedFormat

__all__ = ["Prepared", "detect_format", "prepare_xml", "stream_encoding", "utf16_without_bom"]

#: how far into the body the root element is looked for; comments and a
#: DOCTYPE can come first, 8 KB covers every real feed header we have seen
_SNIFF_BYTES = 8192
#: charset_normalizer reads this much; its verdict does not improve past it, its cost does
_DETECT_BYTES = 64 * 1024

#: tie-breaking order for detected charsets (the most used single-byte ones of the web first)
_PREFERRED = ("utf_8", "cp1251", "koi8_r", "cp1252", "iso8859_1", "iso8859_15", "cp1250", "iso8859_2")

_DECL = re.compile(rb"^\s*<\?xml[^>]*?\?>", re.S)
_DECL_ENC = re.compile(rb"""encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_ROOT = re.compile(rb"<([A-Za-z_][\w.:-]*)")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.I)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(slots=True)
class Prepared:
    #: bytes lxml / feedparser should read (the original unless transcoded)
    body: bytes
    encoding: str
    #: how the encoding was learned: bom, declaration, http, utf-8, detected
    how: str


def utf16_without_bom(body: bytes) -> str | None:
    """``utf-16-le`` / ``utf-16-be`` when ``body`` is UTF-16 that starts without a BOM, else None.

    XML's first character is ``<`` or a blank (XML 1.0 appendix F); in UTF-16 its second byte (LE)
    or first byte (BE) is zero, which no ASCII-compatible charset ever has there.
    """
    if len(body) < 2:
        return None
    if body[1] == 0 and body[0] in b"< \t\r\n":
        return "utf-16-le"
    if body[0] == 0 and body[1] in b"< \t\r\n":
        return "utf-16-be"
    return None


def _strip_leading(body: bytes) -> bytes:
    for bom, _ in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].lstrip()
    return body.lstrip()


def _root_name(head: bytes) -> str:
    # comments, processing instructions and the DOCTYPE are stripped first (see _strip_comments)
    m = _ROOT.search(head)
    return m.group(1).decode("ascii", "replace") if m else ""


def _strip_comments(head: bytes) -> bytes:
    return re.sub(rb"<!--.*?-->|<\?.*?\?>|<!DOCTYPE[^>\[]*(\[.*?\])?\s*>", b"", head, flags=re.S)


def detect_format(body: bytes, declared: str | None = None) -> DetectedFormat:
    """The body's format; ``declared`` (the feed's registered format) only breaks a tie."""
    head = _strip_leading(body[:_SNIFF_BYTES])
    if head[:1] in (b"{", b"["):
        # JSON Feed says so in "version" (1.0/1.1 URLs); some write just "1.1" but still have "items"
        if b"jsonfeed.org" in head[:2048] or (
            head[:1] == b"{" and b'"items"' in body and b'"documents"' not in body[:_SNIFF_BYTES]
        ):
            return DetectedFormat.jsonfeed
        return DetectedFormat.json
    utf16 = next((enc for bom, enc in _BOMS[1:] if body.startswith(bom)), None) or utf16_without_bom(body)
    if utf16 is not None:
        head = body[:_SNIFF_BYTES].decode(utf16, "replace").encode("utf-8")
    name = _root_name(_strip_comments(head)).lower()
    local = name.rsplit(":", 1)[-1]
    if local == "rss":
        return DetectedFormat.turbo if b"turbo.yandex.ru" in head else DetectedFormat.rss
    if local == "rdf":
        return DetectedFormat.rdf
    if local == "feed":
        return DetectedFormat.atom
    if local == "yml_catalog":
        return DetectedFormat.yml
    if local == "channel":  # a bare <channel> (seen in the wild, RSS 0.9x fragments)
        return DetectedFormat.rss
    if declared:
        try:
            return DetectedFormat(declared)
        except ValueError:
            pass
    return DetectedFormat.unknown


def _http_charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = _CHARSET.search(content_type)
    return m.group(1).lower() if m else None


def _known(enc: str) -> str | None:
    try:
        return codecs.lookup(enc).name
    except LookupError:
        return None


def _transcode(body: bytes, encoding: str, how: str) -> Prepared:
    text = body.decode(encoding, "replace")
    m = _DECL.match(text.encode("utf-8", "surrogatepass")[:512])
    out = text.encode("utf-8")
    if m is not None:
        # the old declaration would tell lxml the wrong charset; keep the version only
        out = b'<?xml version="1.0" encoding="utf-8"?>' + out[m.end() :]
    return Prepared(out, encoding, how)


def prepare_xml(body: bytes, content_type: str | None = None) -> Prepared:
    """Work out the charset and return bytes that lxml reads correctly."""
    for bom, enc in _BOMS:
        if body.startswith(bom):
            return Prepared(body, enc, "bom")
    utf16 = utf16_without_bom(body)
    if utf16 is not None:
        # libxml2 needs a BOM to read UTF-16 ("Document is empty" without one): hand it UTF-8
        return _transcode(body, utf16, "utf-16 without a BOM")
    m = _DECL.match(body[:512])
    if m is not None:
        em = _DECL_ENC.search(m.group(0))
        if em is not None:
            declared = _known(em.group(1).decode("ascii"))
            if declared is not None:
                if declared == "utf-8" and not _valid_utf8(body):
                    # declared UTF-8 but is not: a few stray bytes are replaced, a lie is detected
                    return _mostly_utf8(body) or _detected(body)
                return Prepared(body, declared, "declaration")
    http = _known(_http_charset(content_type) or "")
    if http is not None and http not in ("utf-8", "ascii"):
        return _transcode(body, http, "http")
    if _valid_utf8(body):
        return Prepared(body, "utf-8", "utf-8")
    return _detected(body)


def stream_encoding(head: bytes) -> str | None:
    """The charset of a body judged by its first bytes only, when they settle it; else None.

    For a body read as a stream (a catalog too big to hold, ``catalog_file.py``), which lxml then
    decodes itself: a BOM, an XML declaration naming a known charset (a head that says UTF-8 must
    be UTF-8), or no declaration over a head that is UTF-8 (XML's default). Everything
    ``prepare_xml`` would have to re-encode (UTF-16 without a BOM, a charset only in the HTTP
    header, a mislabelled body) answers None.
    """
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return enc
    if utf16_without_bom(head) is not None:
        return None
    m = _DECL.match(head[:512])
    em = _DECL_ENC.search(m.group(0)) if m is not None else None
    if em is not None:
        declared = _known(em.group(1).decode("ascii"))
        if declared is None or (declared == "utf-8" and not _utf8_head(head)):
            return None
        return declared
    return "utf-8" if _utf8_head(head) else None


def _utf8_head(head: bytes) -> bool:
    """``head`` is UTF-8, allowing a character cut in two at its very end."""
    for cut in range(4):
        try:
            head[: len(head) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return True
    return False


def _valid_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _mostly_utf8(body: bytes) -> Prepared | None:
    """UTF-8 with a few broken bytes (a truncated character, one pasted byte) -> replaced, not re-detected."""
    text = body.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    # under 2 % of the non-ASCII characters broken: UTF-8 it is (a real cp1251 body is ~100 % broken)
    if bad * 50 < non_ascii:
        return _transcode(body, "utf-8", "utf-8-repaired")
    return None


def _detected(body: bytes) -> Prepared:
    from charset_normalizer import from_bytes  # imported late: rarely needed, slow to import

    sample = body[:_DETECT_BYTES]
    # the markup is ASCII and dilutes the signal; the text between tags is what tells charsets apart
    text_only = re.sub(rb"<[^>]*>", b" ", sample)
    matches = list(from_bytes(text_only or sample))
    if not matches:
        return _transcode(body, "windows-1252", "detected")
    best = matches[0]
    # ties are common between single-byte Western charsets (cp1250 / cp1252 / cp1258 read
    # Portuguese equally well); the more widespread charset wins a tie, as in browsers
    tied = [m for m in matches if m.chaos == best.chaos and abs(m.coherence - best.coherence) < 1e-9]
    for preferred in _PREFERRED:
        for m in tied:
            if preferred in m.could_be_from_charset:
                return _transcode(body, preferred, "detected")
    return _transcode(body, best.encoding, "detected")
