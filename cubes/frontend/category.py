"""A shop category's page: ``/turbo/shop/<host>/category/<id>`` (docs/architecture.md section 3, frontend).

The offers a YML catalog's category holds itself, from the page store (``stores.shop``, over the page
table: only the live pages of the shop that published the category's listing, on that host), paged
``PER_PAGE`` at a time, sorted by name or price and filtered by vendor and parameters:

* ``page=N`` (1 to ``_PAGE_MAX``; past the last page: a 404 that links the first and the last);
* ``sort=price_asc`` cheapest first, ``price_desc`` dearest first (an offer without a price last either
  way), ``name`` (the default);
* ``vendor=V`` (repeatable: any of them) and ``param.<name>=<value>`` (each must hold);

the pager's, sort's and filters' links keep the rest. Every value is bounded (``_CHOICES`` filters of
``_VALUE_MAX`` characters); a value out of its rules is a 400 that names its parameter
(``BadParameter``); a parameter we do not know (``utm_source``) is ignored, as a shop's page would.

The page's words are its listing's language (``shared/pages/i18n.py``), its title and subcategories the
listing's (the parser's ``cubes/parser/categories.py``), its "Original" the shop's own site, its cards'
pictures the CDN copies the offers' pages show. The store reads and counts on its own thread, the filter
choices are reused for a minute (``FacetCache``); what is left here (24 cards into HTML) is well under a
millisecond.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import orjson
from markupsafe import Markup

from cubes.frontend.jinja import render
from shared.pages.i18n import format_price, label
from shared.pages.style import FIRST_PAINT_CSS, STYLESHEET_PATH
from shared.pages.turbo_links import category_path, turbo_path
from shared.stores import CategoryFacets, OfferCard, Sort

__all__ = [
    "PER_PAGE",
    "BadParameter",
    "CategoryQuery",
    "CategoryView",
    "FacetCache",
    "Listing",
    "category_html",
    "category_view",
]

#: offers a page (a phone scrolls through two dozen cards comfortably)
PER_PAGE = 24
#: filters a query may name (vendors and parameters together), and the characters of each name and value
_CHOICES = 10
_VALUE_MAX = 200
#: the highest page a query may ask for (10,000 offers are 417 pages)
_PAGE_MAX = 10_000
_PARAM = "param."
#: the sort a page shows without ``sort=``
DEFAULT_SORT = Sort.name


#: how long a category's filter choices are reused: a page of it is cached that long (``Cache-Control``)
FACETS_TTL_S = 60.0
#: categories whose choices are kept (a few KB each)
_FACETS_KEPT = 512


class FacetCache:
    """The filter choices of the categories read lately: counting them reads every offer of the category
    (tens of milliseconds at 10,000), and they change only when the catalog does, so paging and sorting
    reuse them for ``FACETS_TTL_S``."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._kept: OrderedDict[tuple[str, str, str], tuple[float, CategoryFacets]] = OrderedDict()

    async def get(self, key: tuple[str, str, str], read: Callable[[], Awaitable[CategoryFacets]]) -> CategoryFacets:
        now = self._now()
        hit = self._kept.get(key)
        if hit is not None and now - hit[0] < FACETS_TTL_S:
            return hit[1]
        facets = await read()
        self._kept[key] = (now, facets)
        self._kept.move_to_end(key)
        while len(self._kept) > _FACETS_KEPT:
            self._kept.popitem(last=False)
        return facets


class BadParameter(ValueError):
    """A query parameter out of its rules: ``name`` is the parameter, the message what it may be."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


def _one(query: Any, name: str) -> str | None:
    values = query.getall(name, [])
    if len(values) > 1:
        raise BadParameter(name, "give it once")
    return values[0] if values else None


def _value(name: str, value: str) -> str:
    value = value.strip()
    if not value or len(value) > _VALUE_MAX:
        raise BadParameter(name, f"a value of 1 to {_VALUE_MAX} characters")
    return value


@dataclass(frozen=True, slots=True)
class CategoryQuery:
    """What the visitor asked: a page, an order, filters (bounded, see the module docstring)."""

    page: int = 1
    sort: Sort = DEFAULT_SORT
    vendors: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, query: Any) -> CategoryQuery:
        """The query of ``query`` (a multidict); ``BadParameter`` for a value out of its rules."""
        raw = _one(query, "page")
        page = 1
        if raw is not None:
            if not raw.isdigit() or len(raw) > 5 or not 1 <= int(raw) <= _PAGE_MAX:
                raise BadParameter("page", f"a whole number from 1 to {_PAGE_MAX:,}")
            page = int(raw)
        raw = _one(query, "sort")
        try:
            sort = Sort(raw) if raw else DEFAULT_SORT
        except ValueError:
            raise BadParameter("sort", "one of " + ", ".join(s.value for s in Sort)) from None
        vendors = tuple(dict.fromkeys(_value("vendor", v) for v in query.getall("vendor", [])))
        params: list[tuple[str, str]] = []
        for key in dict.fromkeys(k for k in query if k.startswith(_PARAM)):
            name = key[len(_PARAM) :]
            if not name or len(name) > _VALUE_MAX:
                raise BadParameter(key[:_VALUE_MAX], f"param.<name> with a name of 1 to {_VALUE_MAX} characters")
            params += [(name, _value(key, v)) for v in dict.fromkeys(query.getall(key))]
        if len(vendors) + len(params) > _CHOICES:
            raise BadParameter("vendor" if len(vendors) > len(params) else "param", f"at most {_CHOICES} filters")
        return cls(page, sort, vendors, tuple(params))

    def pairs(self, **change: Any) -> list[tuple[str, str]]:
        """The query's parameters with ``change`` (page, sort, vendors, params), in a stable order."""
        v = {"page": self.page, "sort": self.sort, "vendors": self.vendors, "params": self.params, **change}
        pairs: list[tuple[str, str]] = [] if v["sort"] is DEFAULT_SORT else [("sort", v["sort"].value)]
        pairs += [("vendor", x) for x in v["vendors"]]
        pairs += [(_PARAM + n, x) for n, x in v["params"]]
        if v["page"] > 1:
            pairs.append(("page", str(v["page"])))
        return pairs


@dataclass(frozen=True, slots=True)
class Card:
    link: str
    title: str
    price: str
    picture: str


@dataclass(frozen=True, slots=True)
class Choice:
    name: str  # the form's field
    value: str
    count: int
    chosen: bool


@dataclass(slots=True)
class CategoryView:
    """What ``category.html`` shows, every word in the listing's language."""

    title: str
    action: str  # the category's own path, the filters form's action
    listing: str  # the listing's Turbo page
    original: str  # the shop's site
    host: str
    lang: str | None
    total: int
    page: int
    pages: int
    cards: list[Card]
    sorts: list[tuple[str, str, bool]]  # (words, link, chosen)
    sort: str  # the chosen sort's value, for the form ("" for the default)
    vendors: list[Choice]
    params: list[tuple[str, list[Choice]]]
    subcategories: list[tuple[str, str]]  # (words, link)
    clear: str | None  # the page without filters, when some are set
    prev: str | None = None
    next: str | None = None
    words: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Listing:
    """What the category's page takes from its listing page: title, language, subcategories, the shop's site."""

    url: str
    host: str
    category: str
    title: str
    lang: str | None
    subcategories: list[tuple[str, str, int]]  # (id, name, offers)

    @classmethod
    def of(cls, url: str, host: str, category: str, doc_json: bytes, lang: str) -> Listing:
        doc = orjson.loads(doc_json) if doc_json else {}
        extra = doc.get("extra") or {} if isinstance(doc, dict) else {}
        subs = []
        for raw in extra.get("turbo:subcategories") or ():
            sub = orjson.loads(raw) if isinstance(raw, str) else None
            if isinstance(sub, list) and len(sub) == 3:
                subs.append((str(sub[0]), str(sub[1]), int(sub[2])))
        declared = extra.get("language")
        page_lang = declared if isinstance(declared, str) and declared else ("ru" if lang == "ru" else None)
        return cls(url, host, category, str(doc.get("title") or ""), page_lang, subs)

    @property
    def site(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}/"


def _choices(field_: str, counted: Sequence[tuple[str, int]], chosen: Sequence[str]) -> list[Choice]:
    # a chosen value stays on the form even when it is not among the most frequent
    shown = list(counted) + [(c, 0) for c in chosen if c not in dict(counted)]
    return [Choice(field_, value, n, value in chosen) for value, n in shown]


def category_view(
    listing: Listing, q: CategoryQuery, total: int, offers: Sequence[OfferCard], facets: CategoryFacets
) -> CategoryView:
    """The view of page ``q.page`` of ``listing``'s category: ``total`` offers pass ``q``'s filters, ``offers``
    are this page's."""
    lang = listing.lang
    pages = max(1, -(-total // PER_PAGE))

    def path(**change: Any) -> str:
        return category_path(listing.host, listing.category, q.pairs(**change))

    cards = [
        Card(
            link=turbo_path(o.url),
            title=o.title,
            price=format_price(o.offer.price_text, o.offer.currency or None, lang) if o.offer.price_text else "",
            picture=o.offer.picture,
        )
        for o in offers
    ]
    sorts = [
        (label(words, lang), path(sort=sort, page=1), q.sort is sort)
        for words, sort in (("sort_name", Sort.name), ("sort_cheap", Sort.price_asc), ("sort_dear", Sort.price_desc))
    ]
    chosen_params = {n: [v for m, v in q.params if m == n] for n, _ in facets.params}
    params = [(n, _choices(_PARAM + n, vs, chosen_params[n])) for n, vs in facets.params]
    params += [
        (n, _choices(_PARAM + n, [], [v for m, v in q.params if m == n]))
        for n in dict.fromkeys(m for m, _ in q.params)
        if n not in chosen_params
    ]
    return CategoryView(
        title=listing.title,
        action=category_path(listing.host, listing.category),
        listing=turbo_path(listing.url),
        original=listing.site,
        host=listing.host,
        lang=lang,
        total=total,
        page=q.page,
        pages=pages,
        cards=cards,
        sorts=sorts,
        sort="" if q.sort is DEFAULT_SORT else q.sort.value,
        vendors=_choices("vendor", facets.vendors, q.vendors),
        params=params,
        subcategories=[(f"{name} ({n})", category_path(listing.host, cid)) for cid, name, n in listing.subcategories],
        clear=path(vendors=(), params=(), page=1) if q.vendors or q.params else None,
        prev=path(page=q.page - 1) if q.page > 1 else None,
        next=path(page=q.page + 1) if q.page < pages else None,
        words={
            k: label(k, lang)
            for k in ("vendor", "filter", "prev_page", "next_page", "nothing_found", "original", "subcategories")
        }
        | {
            "clear_filters": label("clear_filters", lang),
            "page_of": label("page_of", lang, n=str(q.page), of=str(pages)),
            "found": label("found", lang, n=str(total)),
            "no_such_page": label("no_such_page", lang, of=str(pages)),
            "first": path(page=1),
            "last": path(page=pages),
        },
    )


def category_html(view: CategoryView) -> str:
    """The page of ``view`` (``html/category.html``), in the Turbo pages' look: their first-paint rules inline,
    their shared stylesheet linked."""
    css = Markup(FIRST_PAINT_CSS)  # noqa: S704 - our own stylesheet, a constant
    return render("category.html", v=view, css=css, stylesheet=STYLESHEET_PATH)
