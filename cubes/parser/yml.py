"""YML (Yandex Market Language) catalogs, streamed (docs/architecture.md section 3, parser).

``yml_catalog / shop / currencies / categories / offers / offer``. A catalog
can hold hundreds of thousands of offers (a full tree of 100,000 needs about
1 GB), so it is read with ``lxml.etree.iterparse``: each ``<offer>`` is turned
into a ``ParsedItem`` at its end tag, then cleared and unlinked together with
the offers before it, so memory stays bounded by one offer plus the category
table. The parser options are the same safe ones as ``xmlsafe`` (no entities,
no network, libxml2's size limits).

Offer fields: ``id``, ``available``, ``type`` (``vendor.model`` titles are
``typePrefix vendor model`` when there is no ``name``), ``url``, ``price``,
``oldprice``, ``currencyId``, ``categoryId`` (resolved through ``parentId`` to
the path from the root: the page's breadcrumbs, each with its listing page),
``picture`` x N, ``name`` (``artist`` + ``title`` for ``artist.title``), ``vendor``,
``vendorCode``, ``model``, ``description`` (HTML), ``param name= unit=``,
``sales_notes``, ``delivery`` / ``pickup`` / ``store`` and ``delivery-options``
(the offer's, else the shop's). The shop's ``<name>`` goes with every offer, for
the page's "buy" button. Its numbers are checked as they are read (``bounds.py``):
an offer whose price is not a price is refused, an old price or a delivery option
that is not a number is left out with a warning.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO
from urllib.parse import quote, urlsplit

from lxml import etree

from cubes.parser.bounds import Refused, delivery_options, product_numbers
from cubes.parser.model import ItemError, MediaRef, Note, ParsedItem
from cubes.parser.xmlsafe import SAFE_XML, XmlError, check_doctype_stream, xml_error
from cubes.parser.xmltext import absolute, inner_html
from shared.pages.turbo_links import CATEGORY_PARAM

__all__ = ["CATEGORY_PARAM", "MAX_DEPTH", "Catalog", "category_url", "iter_yml"]


def _text(el: etree._Element) -> str:
    return (el.text or "").strip()


#: offer children read as plain text (the last one wins); picture / description / param are special
_TEXT_FIELDS = frozenset(
    {
        "url", "price", "oldprice", "currencyId", "categoryId", "name", "vendor", "model", "typePrefix", "title",
        "artist", "vendorCode", "sales_notes", "delivery", "pickup", "store",
    }
)  # fmt: skip
#: YML name -> Product field, taken as text
_PRODUCT_FIELDS = (
    ("price", "price"),
    ("oldprice", "old_price"),
    ("currencyId", "currency"),
    ("vendor", "vendor"),
    ("vendorCode", "vendor_code"),
    ("model", "model"),
    ("sales_notes", "sales_notes"),
)
#: YML name -> Product field, taken as a boolean ("true" / "false")
_FLAGS = (("delivery", "delivery"), ("pickup", "pickup"), ("store", "store"))
#: levels of a category path kept (the ones nearest the offer): Yandex Market's own tree is 6-7 deep;
#: a deeper one is a hostile chain whose every offer would carry a crumb per level
MAX_DEPTH = 32


def category_url(site: str, category_id: str) -> str:
    """The Turbo page listing a category: on the shop's own site (``site``: its origin)."""
    return f"{site}/?{CATEGORY_PARAM}={quote(category_id, safe='')}"


def _site(url: str | None) -> str | None:
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else None


@dataclass(slots=True)
class Catalog:
    """What the catalog says before its offers: the category tree and the shop."""

    #: category id -> (name, parent id)
    categories: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    shop: str | None = None
    #: the origin category pages live under (the shop's <url>, else the feed's)
    site: str | None = None
    delivery_options: list[dict[str, str | None]] = field(default_factory=list)
    #: what the catalog held that is left out (a delivery option that is not a number, category levels
    #: past ``MAX_DEPTH``): told once, with the next offer read
    notes: list[Note] = field(default_factory=list)
    #: category id -> its path from the root, each step {id, name, url}: built once per category
    _paths: dict[str, list[dict[str, str | None]]] = field(default_factory=dict)
    _cut: bool = False

    def path(self, category_id: str) -> list[dict[str, str | None]]:
        """The categories from the root to ``category_id`` (a loop in ``parentId`` ends the walk).

        At most ``MAX_DEPTH`` of them, the nearest to ``category_id``; a deeper tree is told once.
        """
        found = self._paths.get(category_id)
        if found is not None:
            return found
        steps: list[dict[str, str | None]] = []
        seen: set[str] = set()
        at: str | None = category_id
        while at and at in self.categories and at not in seen:
            if len(steps) == MAX_DEPTH:
                self._too_deep()
                break
            seen.add(at)
            name, parent = self.categories[at]
            steps.append({"id": at, "name": name, "url": category_url(self.site, at) if self.site else None})
            at = parent
        steps.reverse()
        self._paths[category_id] = steps
        return steps

    def _too_deep(self) -> None:
        if self._cut:
            return
        self._cut = True
        self.notes.append(
            Note(
                "yml.deep_categories",
                f"the category tree is deeper than {MAX_DEPTH} levels (parentId): pages show the {MAX_DEPTH} "
                "levels nearest each offer",
            )
        )


def _options(el: etree._Element) -> list[dict[str, str | None]]:
    return [
        {"cost": (o.get("cost") or "").strip(), "days": (o.get("days") or "").strip() or None}
        for o in el.iter("option")
        if (o.get("cost") or "").strip()
    ]


def _shop_header(offer: etree._Element, catalog: Catalog, base: str | None) -> None:
    """The shop's name, site and delivery options: complete in the tree when the first offer ends."""
    offers = offer.getparent()
    shop = offers.getparent() if offers is not None else None
    if shop is None:
        catalog.site = _site(base)
        return
    catalog.shop = (shop.findtext("name") or shop.findtext("company") or "").strip() or None
    own = _site((shop.findtext("url") or "").strip())
    catalog.site = own if own and own == _site(base) else _site(base) or own
    options = shop.find("delivery-options")
    if options is not None:
        kept, note = delivery_options(_options(options))
        catalog.delivery_options = kept
        catalog.notes.extend([note] if note is not None else [])


def _offer(el: etree._Element, index: int, catalog: Catalog, base: str | None) -> ParsedItem:
    # the hot loop of a catalog: one set lookup per child, text fields gathered first, mapped after
    oid = (el.get("id") or "").strip()
    it = ParsedItem(index=index, kind="product", base=base, line=el.sourceline)
    it.guid = f"offer:{oid}" if oid else None
    product: dict[str, object] = {
        "offer_id": oid,
        "available": (el.get("available") or "true").strip().lower() != "false",
    }
    params: list[dict[str, str | None]] = []
    options: list[dict[str, str | None]] | None = None
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
        elif tag == "delivery-options":
            options = _options(c)
    if "url" in f:
        it.link = absolute(f["url"], base)
    for src, dst in _PRODUCT_FIELDS:
        if f.get(src):
            product[dst] = f[src]
    for src, dst in _FLAGS:
        if src in f:
            product[dst] = f[src].lower() == "true"
    if "categoryId" in f:
        path = catalog.path(f["categoryId"])
        product["category"] = path[-1]["name"] if path else f["categoryId"]
        if path:
            product["category_path"] = path
    if params:
        product["params"] = params
    if options or catalog.delivery_options:
        product["delivery_options"] = options if options is not None else catalog.delivery_options
    if catalog.shop:
        product["shop"] = catalog.shop
    it.notes = product_numbers(product)  # Refused: a price that is not one (bounds.py)
    name, title, model = f.get("name"), f.get("title"), f.get("model")
    if name:
        it.title = name
    elif title:  # type="artist.title" (music, films)
        it.title = f"{f['artist']} — {title}" if f.get("artist") else title
    elif el.get("type") == "vendor.model" or model:
        it.title = " ".join(p for p in (f.get("typePrefix"), f.get("vendor"), model) if p) or None
    it.product = product
    return it


def iter_yml(
    source: IO[bytes], *, base: str | None = None, catalog: Catalog | None = None
) -> Iterator[ParsedItem | ItemError]:
    """Offers one at a time; an ``ItemError`` for a broken offer, or (last) for a broken file.

    ``catalog`` is filled with the category tree and the shop as they are read (for the category
    listing pages, ``categories.py``).
    """
    check_doctype_stream(source)  # reads the prolog only, and rewinds
    catalog = catalog if catalog is not None else Catalog()
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
                parent = (el.get("parentId") or "").strip() or None
                catalog.categories[(el.get("id") or "").strip()] = (_text(el), parent)
                continue
            if index == 0:
                _shop_header(el, catalog, base)
            try:
                offer = _offer(el, index, catalog, base)
                if catalog.notes:  # what the shop's header lost is told once, with the first offer read
                    offer.notes.extend(catalog.notes)
                    catalog.notes = []
                yield offer
            except Refused as exc:
                link = absolute((el.findtext("url") or "").strip(), base)
                yield ItemError(exc.reason, el.sourceline, None, index, link, code=exc.code)
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
