"""YML (Yandex Market Language) catalogs, streamed (DESIGN.md section 3, parser).

``yml_catalog / shop / currencies / categories / offers / offer``. A catalog
can hold hundreds of thousands of offers (a full tree of 100,000 needs about
1 GB), so it is read with ``lxml.etree.iterparse``: each ``<offer>`` is turned
into a ``ParsedItem`` at its end tag, then cleared and unlinked together with
the offers before it, so memory stays bounded by one offer plus the category
table. The parser options are the same safe ones as ``xmlsafe`` (no entities,
no network, libxml2's size limits).

Offer fields: ``id``, ``available``, ``type`` (``vendor.model`` titles are
``typePrefix vendor model`` when there is no ``name``), ``url``, ``price``,
``oldprice``, ``currencyId``, ``categoryId`` (resolved to the category name),
``picture`` x N, ``name`` (``artist`` + ``title`` for ``artist.title``), ``vendor``, ``model``,
``description`` (HTML),
``param name= unit=``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from lxml import etree

from cubes.parser.model import ItemError, MediaRef, ParsedItem
from cubes.parser.xmlsafe import SAFE_XML, XmlError, check_doctype_stream, xml_error
from cubes.parser.xmltext import absolute, inner_html

__all__ = ["iter_yml"]


def _text(el: etree._Element) -> str:
    return (el.text or "").strip()


#: offer children read as plain text (the last one wins); picture / description / param are special
_TEXT_FIELDS = frozenset(
    {"url", "price", "oldprice", "currencyId", "categoryId", "name", "vendor", "model", "typePrefix", "title", "artist"}
)
#: YML name -> Product field
_PRODUCT_FIELDS = (
    ("price", "price"),
    ("oldprice", "old_price"),
    ("currencyId", "currency"),
    ("vendor", "vendor"),
    ("model", "model"),
)


def _offer(el: etree._Element, index: int, categories: dict[str, str], base: str | None) -> ParsedItem:
    # the hot loop of a catalog: one set lookup per child, text fields gathered first, mapped after
    oid = (el.get("id") or "").strip()
    it = ParsedItem(index=index, kind="product", base=base, line=el.sourceline)
    it.guid = f"offer:{oid}" if oid else None
    product: dict[str, object] = {
        "offer_id": oid,
        "available": (el.get("available") or "true").strip().lower() != "false",
    }
    params: list[dict[str, str | None]] = []
    f: dict[str, str] = {}
    for c in el:
        tag = c.tag
        if tag in _TEXT_FIELDS:
            f[tag] = (c.text or "").strip()
        elif tag == "picture":
            if url := absolute((c.text or "").strip(), base):
                it.media.append(MediaRef(url, "image", "picture"))
        elif tag == "description":
            it.content_html = inner_html(c).strip()
        elif tag == "param" and c.get("name"):
            params.append({"name": c.get("name", "").strip(), "value": (c.text or "").strip(), "unit": c.get("unit")})
    if "url" in f:
        it.link = absolute(f["url"], base)
    for src, dst in _PRODUCT_FIELDS:
        if f.get(src):
            product[dst] = f[src]
    if "categoryId" in f:
        product["category"] = categories.get(f["categoryId"], f["categoryId"])
    if params:
        product["params"] = params
    name, title, model = f.get("name"), f.get("title"), f.get("model")
    if name:
        it.title = name
    elif title:  # type="artist.title" (music, films)
        it.title = f"{f['artist']} — {title}" if f.get("artist") else title
    elif el.get("type") == "vendor.model" or model:
        it.title = " ".join(p for p in (f.get("typePrefix"), f.get("vendor"), model) if p) or None
    it.product = product
    return it


def iter_yml(source: IO[bytes], *, base: str | None = None) -> Iterator[ParsedItem | ItemError]:
    """Offers one at a time; an ``ItemError`` for a broken offer, or (last) for a broken file."""
    check_doctype_stream(source)  # reads the prolog only, and rewinds
    categories: dict[str, str] = {}
    index = 0
    context = etree.iterparse(
        source,
        events=("end",),
        tag=("category", "offer"),
        **SAFE_XML,
    )
    try:
        for _event, el in context:
            if el.tag == "category":
                categories[(el.get("id") or "").strip()] = _text(el)
                continue
            try:
                yield _offer(el, index, categories, base)
            except (ValueError, TypeError) as exc:  # pragma: no cover - defensive: one offer never stops the rest
                yield ItemError(f"offer could not be read: {exc}", el.sourceline, None, index, code="item.unreadable")
            index += 1
            # free the offer and everything before it: bounded memory on any catalog size
            el.clear(keep_tail=False)
            parent = el.getparent()
            if parent is not None:
                while el.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError as exc:
        err: XmlError = xml_error(exc)
        yield ItemError(
            f"catalog is not well-formed XML: {err.reason}", err.line, err.column, None, code="xml.malformed"
        )
