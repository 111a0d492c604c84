"""Hostile partner content: a table of bodies that once stalled, crashed or bloated the pipeline.

Shared by the security matrix "hostile sizes" (``tests/unit/security/test_hostile_sizes.py``: every
input through every door) and ``bench/hostile.py`` (every input through the running pipeline while
``/healthz`` and the API are polled). Each ``Hostile`` builds one body in its format holding its
hostile item(s) and one ordinary item: the ordinary one must always be published (unless the body
as a whole is refused: ``whole``), the hostile ones must each be refused with one of the ``expect``
codes or published (``"published"`` in ``expect``; a code there that is a warning is the problem
it is published with).

``scale`` shrinks the expensive inputs for the unit matrix (1.0: the sizes of the findings; the
matrix runs at 0.25 with a short ``parser.item_deadline_s``).
"""

from __future__ import annotations

import gzip
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from html import escape

import orjson

from shared.problems.codes import CODES

__all__ = ["CASES", "PUBLISHED", "Built", "Hostile"]

#: an outcome: the hostile item is a page (with the case's warning, if it names one)
PUBLISHED = "published"


@dataclass(frozen=True, slots=True)
class Built:
    """A case's body for one origin: what it holds and where its items are."""

    body: bytes
    fmt: str
    content_type: str
    #: URLs of the hostile items (empty: items without a URL, counted by their code instead)
    hostile: tuple[str, ...]
    #: URL of the ordinary item
    good: str
    #: codes the run must report at least this many times (e.g. 100,000 offers without a URL)
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Hostile:
    name: str
    fmt: str
    #: (origin, tag, scale) -> (body, hostile URLs, counts); the good item is added by ``build``
    make: Callable[[str, str, float], tuple[str | bytes, list[str], dict[str, int]]]
    #: what may happen to each hostile item: problem codes (a refusal, or the warning it is published
    #: with) and ``PUBLISHED``
    expect: frozenset[str]
    #: the body as a whole is refused (an XML attack, a bomb): nothing of it is published, and this code says why
    whole: str | None = None
    #: doors the case is pushed through (a gzip bomb is an upload's; a feed is fetched plain)
    doors: tuple[str, ...] = ("upload", "feed", "check")

    def build(self, origin: str, tag: str, scale: float = 1.0) -> Built:
        good = f"{origin}/good/{tag}"
        raw, hostile, counts = self.make(origin, tag, scale)
        body = raw if isinstance(raw, bytes) else raw.encode()
        if not isinstance(raw, bytes):
            body = body.replace(b"<!--GOOD-->", _good(self.fmt, good).encode())
        content_type = {"json": "application/json", "yml": "application/xml"}.get(self.fmt, "application/rss+xml")
        return Built(body, self.fmt, content_type, tuple(hostile), good, counts)


@dataclass
class Seen:
    """What a door told about one body: its problems by code, the pages it made, each listed item's codes."""

    codes: Counter[str] = field(default_factory=Counter)
    published: set[str] = field(default_factory=set)
    #: url -> the codes of that item's problems (for the items the door lists)
    items: dict[str, set[str]] = field(default_factory=dict)


#: hostile items of one case looked at one by one (thousands alike say no more than their first ones)
LOOKED_AT = 20


def judge(case: Hostile, built: Built, seen: Seen) -> list[str]:
    """What is wrong with what a door did with ``case``'s body (empty: it kept the case's promise).

    A hostile item is published (when the case allows it; with its warning, when the case names one)
    or refused with one of the case's errors, said for that item (or, when the door lists no items,
    for the body); the ordinary item is published unless the body as a whole is refused.
    """
    problems = []
    whole = case.whole
    if whole is None and built.good not in seen.published:
        problems.append("the ordinary item was not published")
    if whole is not None and not seen.codes[whole]:
        problems.append(f"the body was not refused with {whole} (codes {dict(seen.codes)})")
    if whole is not None and built.good in seen.published:
        problems.append("a body refused as a whole published its ordinary item")
    # a body refused as a whole refuses its every item, with the code that says why
    errors = {c for c in (*case.expect, *([whole] if whole else [])) if c != PUBLISHED and CODES[c].severity == "error"}
    warnings = {c for c in case.expect if c != PUBLISHED and CODES[c].severity != "error"}
    for url in built.hostile[:LOOKED_AT]:
        said = seen.items.get(url) or set(seen.codes)
        if url in seen.published:
            if PUBLISHED not in case.expect:
                problems.append(f"{url} was published, not refused")
            elif warnings and not warnings & said:
                problems.append(f"{url} was published without its problem {sorted(warnings)} ({dict(seen.codes)})")
        elif not errors & said:
            problems.append(f"{url} neither published nor refused with {sorted(errors)} ({dict(seen.codes)})")
    for code, n in built.counts.items():
        if seen.codes[code] < n:
            problems.append(f"{code} counted {seen.codes[code]}, expected {n}")
    return problems


def _good(fmt: str, url: str) -> str:
    if fmt == "yml":
        # its own id: offers of one source under one id are one offer (a new URL moves it, removing the old)
        oid = url.rsplit("/", 1)[-1]
        return f'<offer id="good-{oid}"><url>{url}</url><name>An ordinary kettle</name><price>1990</price></offer>'
    if fmt == "json":
        return orjson.dumps({"url": url, "title": "An ordinary story", "content_html": "<p>Fine.</p>"}).decode()
    content = "<turbo:content><![CDATA[<p>Fine.</p>]]></turbo:content>" if fmt == "turbo" else ""
    return f"<item><title>An ordinary story</title><link>{url}</link><description>Fine.</description>{content}</item>"


def _rss(items: str, *, turbo: bool = False, good_first: bool = False) -> str:
    ns = ' xmlns:turbo="http://turbo.yandex.ru" xmlns:yandex="http://news.yandex.ru"' if turbo else ""
    items = f"<!--GOOD-->{items}" if good_first else f"{items}<!--GOOD-->"
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"{ns}><channel><title>T</title>{items}</channel></rss>'
    )


def _item(url: str, description: str = "<p>x</p>", *, title: str = "A story", extra: str = "") -> str:
    return (
        f"<item><title>{escape(title)}</title><link>{url}</link>"
        f"<description><![CDATA[{description}]]></description>{extra}</item>"
    )


def _turbo(url: str, content: str, *, extra: str = "") -> str:
    return (
        f'<item turbo="true"><title>A page</title><link>{url}</link>'
        f"<turbo:content><![CDATA[{content}]]></turbo:content>{extra}</item>"
    )


def _yml(offers: str, *, categories: str = '<category id="1">Kettles</category>') -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><yml_catalog date="2026-01-01 10:00"><shop><name>Shop</name>'
        f'<currencies><currency id="RUR" rate="1"/></currencies><categories>{categories}</categories>'
        f"<offers>{offers}<!--GOOD--></offers></shop></yml_catalog>"
    )


def _offer(url: str, fields: str) -> str:
    oid = url.rsplit("/", 1)[-1]
    return f'<offer id="h-{oid}"><url>{url}</url><name>A kettle</name><categoryId>1</categoryId>{fields}</offer>'


def _json(*docs: Mapping[str, object]) -> str:
    body = orjson.dumps({"documents": [*docs, {"__good__": True}]}).decode()
    return body.replace('{"__good__":true}', "<!--GOOD-->")


def _n(count: int, scale: float) -> int:
    return max(1, int(count * scale))


def _costly(count: int, scale: float) -> int:
    """A size whose cost is nh3's: never under a quarter of the finding's, so that it still costs seconds."""
    return _n(count, max(scale, 0.25))


# ------------------------------------------------------------------ the cases


def _price(value: str) -> Callable[[str, str, float], tuple[str, list[str], dict[str, int]]]:
    def make(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
        url = f"{origin}/hostile/{tag}"
        return _yml(_offer(url, f"<price>{value}</price>")), [url], {}

    return make


def _old_price(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    fields = '<price>10</price><oldprice>1e400000</oldprice><delivery-options><option cost="1e400000" days="1"/>'
    return _yml(_offer(url, fields + "</delivery-options>")), [url], {}


def _nbsp(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    return _rss(_item(url, "<p>" + "&nbsp;" * _n(170_000, scale) + "</p>")), [url], {}


def _two_nbsp(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    urls = [f"{origin}/hostile/{tag}/{i}" for i in range(2)]
    html = "<p>" + "&nbsp;" * _n(85_000, scale) + "</p>"
    return _json(*({"url": u, "title": "Spaces", "content_html": html} for u in urls)), urls, {}


def _empty_offers(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    n = _n(100_000, scale)
    return _yml("<offer/>" * n), [], {"item.no_link": n}


def _deep_divs(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    return _json({"url": url, "title": "Deep", "content_html": "<div>" * _costly(200_000, scale)}), [url], {}


def _nested_lists(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    return _rss(_turbo(url, "<ul><li>" * _costly(100_000, scale)), turbo=True), [url], {}


def _deep_xml(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    deep = "<a>" * 100_000 + "</a>" * 100_000  # libxml2's depth limit: the body is refused as a whole
    return _rss(f"<item><title>T</title><link>{url}</link><description>{deep}</description></item>"), [url], {}


def _attributes(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    attrs = " ".join(f"a{i}=1" for i in range(_costly(110_000, scale)))
    return _rss(_item(url, f"<p {attrs}>x</p>")), [url], {}


def _nbsp_chars(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    text = "<p>" + "\u00a0" * _costly(500_000, scale) + "</p>"
    return _json({"url": url, "title": "Spaces", "content_html": text}), [url], {}


def _huge_text(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    return _rss(_item(url, "x" * 2_000_000)), [url], {}  # past parser.max_item_bytes whatever the scale


def _huge_title(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    return _rss(_item(url, title="Long " * _n(200_000, scale))), [url], {}


def _rating(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    rating = (
        '<div itemscope itemtype="http://schema.org/Rating"><meta itemprop="ratingValue" content="1e999">'
        '<meta itemprop="bestRating" content="5"></div><p>Rated.</p>'
    )
    return _rss(_turbo(url, rating), turbo=True), [url], {}


def _date(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    return _rss(_item(url, extra="<pubDate>9999-12-31T23:59:59-14:00</pubDate>")), [url], {}


def _category_chain(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    n = _n(5_000, scale)
    cats = '<category id="1">C1</category>' + "".join(
        f'<category id="{i}" parentId="{i - 1}">C{i}</category>' for i in range(2, n + 1)
    )
    offer = _offer(url, "<price>10</price>").replace("<categoryId>1</categoryId>", f"<categoryId>{n}</categoryId>")
    return _yml(offer, categories=cats), [url], {}


def many_items_limit(scale: float) -> int:
    """``parser.max_items`` the "6,000 items" case is written for: Turbo's 1,000, scaled."""
    return _n(1_000, scale)


def _many_items(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    # the ordinary item first (the last would be past the limit), then the others within it, then the rest
    within = many_items_limit(scale) - 1
    urls = [f"{origin}/hostile/{tag}/{i}" for i in range(within + _n(5_000, scale))]
    return _rss("".join(_item(u) for u in urls), good_first=True), urls[within:], {}


def _related(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    links = "".join(f'<link url="{origin}/r/{i}">Also {i}</link>' for i in range(_n(10_000, scale)))
    return (
        _rss(_turbo(url, "<p>Read on.</p>", extra=f"<yandex:related>{links}</yandex:related>"), turbo=True),
        [url],
        {},
    )


def _flood(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    # hundreds of items each just under the worker-process bound: every one on the loop's side
    urls = [f"{origin}/hostile/{tag}/{i}" for i in range(_n(400, scale))]
    html = "<ul><li>" * 2_000  # 16,000 characters, nh3's worst case at that size
    return _json(*({"url": u, "title": "Lists", "content_html": html} for u in urls)), urls, {}


def _laughs(origin: str, tag: str, scale: float) -> tuple[str, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    dtd = (
        '<!DOCTYPE rss [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
    )
    return _rss(_item(url, "&c;")).replace("<rss", dtd + "<rss", 1), [url], {}


def _gzip_bomb(origin: str, tag: str, scale: float) -> tuple[bytes, list[str], dict[str, int]]:
    url = f"{origin}/hostile/{tag}"
    head = _rss(_item(url)).replace("<!--GOOD-->", _good("rss", f"{origin}/good/{tag}")).encode()
    return gzip.compress(head[: -len(b"</channel></rss>")] + b" " * (60 * 1024 * 1024) + b"</channel></rss>"), [url], {}


CASES: tuple[Hostile, ...] = (
    Hostile("price 1e2000000", "yml", _price("1e2000000"), frozenset({"item.bad_price"})),
    Hostile("price 1e400000", "yml", _price("1e400000"), frozenset({"item.bad_price"})),
    Hostile("price NaN", "yml", _price("NaN"), frozenset({"item.bad_price"})),
    Hostile("old price and delivery 1e400000", "yml", _old_price, frozenset({PUBLISHED, "item.bad_number"})),
    Hostile("1 MB of &nbsp;", "rss", _nbsp, frozenset({PUBLISHED, "item.too_complex"})),
    Hostile(
        "two 500 KB items of &nbsp;", "json", _two_nbsp, frozenset({PUBLISHED, "item.too_complex"}), doors=("upload",)
    ),
    Hostile("100,000 empty offers", "yml", _empty_offers, frozenset()),
    Hostile("200,000 nested <div>", "json", _deep_divs, frozenset({"item.too_complex"}), doors=("upload",)),
    Hostile("100,000 nested lists", "turbo", _nested_lists, frozenset({"item.too_complex"})),
    Hostile("100,000 nested XML elements", "rss", _deep_xml, frozenset(), whole="xml.hostile"),
    Hostile("110,000 attributes", "rss", _attributes, frozenset({PUBLISHED, "item.too_complex"})),
    Hostile(
        "500,000 no-break spaces", "json", _nbsp_chars, frozenset({PUBLISHED, "item.too_complex"}), doors=("upload",)
    ),
    Hostile("a 2 MB text node", "rss", _huge_text, frozenset({"item.too_large"})),
    Hostile("a 1 MB title", "rss", _huge_title, frozenset({PUBLISHED, "item.title_cut"})),
    Hostile("rating 1e999", "turbo", _rating, frozenset({PUBLISHED, "turbo.unsupported_block"})),
    Hostile("date 9999-12-31T23:59:59-14:00", "rss", _date, frozenset({PUBLISHED, "item.bad_date"})),
    Hostile("5,000-level category chain", "yml", _category_chain, frozenset({PUBLISHED, "yml.deep_categories"})),
    Hostile("6,000 items", "rss", _many_items, frozenset({"item.too_many"})),
    Hostile("10,000 related links", "turbo", _related, frozenset({PUBLISHED})),
    Hostile("400 items of 16 KB nested lists", "json", _flood, frozenset({PUBLISHED}), doors=("upload",)),
    Hostile("entity expansion", "rss", _laughs, frozenset(), whole="xml.hostile"),
    Hostile("gzip bomb (60 MB of spaces)", "rss", _gzip_bomb, frozenset(), whole="fetch.too_large", doors=("upload",)),
)
