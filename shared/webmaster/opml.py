"""A tenant's feeds as OPML 2.0, and an OPML file read back (docs/architecture.md section 10).

Feed readers (Miniflux, FreshRSS, Feedly) move subscriptions as OPML: one ``<outline type="rss"
xmlUrl="...">`` per feed, folders as nested outlines. Ours adds what a turbocubes feed is beyond
its URL, in a namespace of our own (``NAMESPACE``, prefix ``tc``): ``tc:format`` (rss, turbo, yml,
auto), ``tc:autoparser`` (true / false) and ``tc:options`` (the feed's timeout and filters as the
API takes them, JSON). Credentials (a password, header values) never leave: they are sealed in
our store and an export is a file a webmaster passes around; a feed that needs them says so in
``tc:credentials="set again after import"``.

Reading is bounded (``MAX_BYTES``, ``MAX_OUTLINES``), refuses entity declarations
(``shared/xmlguard.py``) and reads every outline with an ``xmlUrl`` wherever it is nested; an
outline without one is a folder. Each feed keeps its number in the file (``outline``) and its source
line for the import's report: the line when libxml2 can tell it -- a file of CR line ends (classic
Mac OS) is read as XML reads it, CR as a line end, and libxml2 counts lines in 16 bits, so an
outline past line 65,534 has none -- and the number, since a file written on one line (many readers
write one) has every feed on line 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from lxml import etree

from shared.stores.feeds import Feed
from shared.webmaster.feed_options import FeedOptions
from shared.xmlguard import declared_entity

__all__ = ["MAX_BYTES", "MAX_OUTLINES", "NAMESPACE", "OpmlLine", "OpmlRefused", "read_opml", "write_opml"]

NAMESPACE = "https://turbocubes.dev/ns/opml/1"
#: 40 feeds are 6 KB; a megabyte holds thousands, more than a tenant registers by hand
MAX_BYTES = 1024 * 1024
#: outlines read from one file; more are reported as not read
MAX_OUTLINES = 1000
#: libxml2 keeps an element's line in 16 bits: this one stands for "this line or any after it"
_LAST_LINE = 65_535
_TC = f"{{{NAMESPACE}}}"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


class OpmlRefused(ValueError):
    """The file as a whole cannot be read (too big, not XML, not OPML, an entity declaration)."""


@dataclass(frozen=True, slots=True)
class OpmlLine:
    """One outline with a feed URL, as the file gives it (nothing validated yet)."""

    #: its line in the file (None: past what libxml2 counts)
    line: int | None
    url: str
    #: its number among the file's feeds, from 1
    outline: int = 0
    title: str = ""
    format: str = "auto"
    autoparser: bool = False
    #: the feed's options as the API takes them (None: the file says nothing of them)
    options: dict[str, Any] | None = None
    #: what the file has that cannot be used, said in the line's result
    notes: tuple[str, ...] = field(default=())


def _options(feed: Feed) -> str | None:
    opts = FeedOptions.from_json(feed.options)
    out: dict[str, Any] = {}
    if opts.timeout_s is not None:
        out["timeout_s"] = opts.timeout_s
    if not opts.filters.empty:
        out["filters"] = opts.filters.model_dump(exclude_defaults=True)
    return orjson.dumps(out).decode() if out else None


def write_opml(feeds: Iterable[Feed], *, title: str) -> bytes:
    """An OPML 2.0 document of ``feeds`` (live ones; the caller chooses which)."""
    root = etree.Element("opml", version="2.0", nsmap={"tc": NAMESPACE})
    head = etree.SubElement(root, "head")
    etree.SubElement(head, "title").text = title
    body = etree.SubElement(root, "body")
    for feed in feeds:
        outline = etree.SubElement(body, "outline", type="rss", text=feed.url, xmlUrl=feed.url)
        outline.set(f"{_TC}format", feed.format)
        outline.set(f"{_TC}autoparser", "true" if feed.autoparser else "false")
        if (options := _options(feed)) is not None:
            outline.set(f"{_TC}options", options)
        if feed.secret is not None:
            outline.set(f"{_TC}credentials", "set again after import")
    out: bytes = etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
    return out


def _line(el: etree._Element, url: str, outline: int) -> OpmlLine:
    notes: list[str] = []
    options: dict[str, Any] | None = None
    if (raw := el.get(f"{_TC}options")) is not None:
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            options = parsed
        else:
            notes.append("tc:options is not a JSON object: the feed's options are left as they are")
    autoparser = (el.get(f"{_TC}autoparser") or "false").strip().lower() in ("true", "1", "yes")
    if el.get(f"{_TC}credentials") is not None:
        notes.append("its credentials are not in the file: set them again on the feed")
    return OpmlLine(
        line=el.sourceline if el.sourceline and el.sourceline < _LAST_LINE else None,
        url=url,
        outline=outline,
        title=(el.get("title") or el.get("text") or "")[:200],
        format=(el.get(f"{_TC}format") or "auto").strip().lower(),
        autoparser=autoparser,
        options=options,
        notes=tuple(notes),
    )


def read_opml(body: bytes) -> tuple[list[OpmlLine], int]:
    """Every outline with a feed URL, in document order, and how many more were left unread."""
    if len(body) > MAX_BYTES:
        raise OpmlRefused(f"the file is {len(body):,} bytes: at most {MAX_BYTES:,} are read")
    if not body.strip():
        raise OpmlRefused("the file is empty")
    if declared_entity(body) is not None:
        raise OpmlRefused("the file declares XML entities, which no OPML needs: refused as an attack")
    if b"\x00" not in body:  # not UTF-16 / UTF-32, where a CR byte may be half of another character
        # XML's own end-of-line handling, done before libxml2 counts lines (it counts LF only)
        body = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    try:
        root = etree.fromstring(body, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise OpmlRefused(f"not well-formed XML: {exc}") from None
    if not isinstance(root.tag, str) or root.tag.lower() != "opml":
        raise OpmlRefused(f"not an OPML file: the root element is <{root.tag}>, expected <opml>")
    lines: list[OpmlLine] = []
    more = 0
    for el in root.iter("outline"):
        url = (el.get("xmlUrl") or el.get("xmlurl") or "").strip()
        if not url:
            continue  # a folder
        if len(lines) >= MAX_OUTLINES:
            more += 1
            continue
        lines.append(_line(el, url, len(lines) + 1))
    return lines, more
