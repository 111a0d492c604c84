"""The demo site's feeds: RSS 2.0, Yandex Turbo RSS, YML and sitemaps (docs/architecture.md section 8, ``up --demo``).

Built with lxml, so every document is well-formed and every text is escaped;
dates are fixed (never "now"), so the same base URL always gives the same bytes
and a second ``up --demo`` finds nothing changed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from html import escape

from lxml import etree

from demo.columns import COLUMNS
from demo.features import FEATURES
from demo.posts import POSTS
from demo.products import CATEGORIES, PRODUCTS, Product
from demo.russian import RU_CATEGORIES, RU_NEWS, RU_PRODUCTS
from demo.stories import NEWS, Story

__all__ = [
    "CONTENT_NS",
    "NEWS_EPOCH",
    "TURBO_NS",
    "column_path",
    "columns_feed",
    "feature_date",
    "news_date",
    "product_path",
    "rss_feed",
    "ru_product_path",
    "ru_turbo_feed",
    "ru_yml_catalog",
    "sitemap",
    "sitemap_index",
    "story_html",
    "turbo_feed",
    "yml_catalog",
]

CONTENT_NS = "http://purl.org/rss/1.0/modules/content/"
TURBO_NS = "http://turbo.yandex.ru"
YANDEX_NS = "http://news.yandex.ru"
MEDIA_NS = "http://search.yahoo.com/mrss/"
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: the fixed "now" of the demo's news desk: news are 3 h apart before it, features a day apart
NEWS_EPOCH = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)

#: picture URL for (prefix, slug, index) -> absolute URL; passed in so feeds and pages agree
PictureUrl = Callable[[str, str, int], str]


def news_date(index: int) -> datetime:
    return NEWS_EPOCH - timedelta(hours=3 * index)


def feature_date(index: int) -> datetime:
    return NEWS_EPOCH - timedelta(days=index + 1, hours=2)


def _figure(src: str, caption: str) -> str:
    return (
        f'<figure><img src="{escape(src)}" alt="{escape(caption)}"/><figcaption>{escape(caption)}</figcaption></figure>'
    )


def story_html(story: Story, pictures: list[str], *, turbo: bool) -> str:
    """The story's body as HTML: the Turbo form has a ``<header>`` with h1 and the cover figure."""
    parts: list[str] = []
    if turbo:
        parts.append(
            f"<header><h1>{escape(story.title)}</h1><h2>{escape(story.lead)}</h2>"
            f"{_figure(pictures[0], story.pictures[0])}</header>"
        )
    else:
        # no lead paragraph here: the item's <description> carries it, and readers show both
        parts.append(_figure(pictures[0], story.pictures[0]))
    for i, para in enumerate(story.paragraphs):
        parts.append(f"<p>{escape(para)}</p>")
        if i == 1 and len(pictures) > 1:
            parts.append(_figure(pictures[1], story.pictures[1]))
    return "".join(parts)


def _text(parent: etree._Element, tag: str, text: str, **attrs: str) -> etree._Element:
    el = etree.SubElement(parent, tag, **attrs)
    el.text = text
    return el


def _serialize(root: etree._Element) -> bytes:
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))


def _channel(root: etree._Element, title: str, link: str, description: str, lang: str = "en") -> etree._Element:
    channel = etree.SubElement(root, "channel")
    _text(channel, "title", title)
    _text(channel, "link", link)
    _text(channel, "description", description)
    _text(channel, "language", lang)
    return channel


def rss_feed(base: str, picture_url: PictureUrl) -> bytes:
    """RSS 2.0 with the full text in ``content:encoded`` and the cover as an enclosure."""
    root = etree.Element("rss", version="2.0", nsmap={"content": CONTENT_NS, "media": MEDIA_NS})
    channel = _channel(
        root,
        "Harbourview Gazette",
        f"{base}/news/",
        "News from Harbourview, a small (and entirely invented) coastal town.",
    )
    for i, story in enumerate(NEWS):
        pictures = [picture_url("news", story.slug, n) for n in range(len(story.pictures))]
        item = _rss_item(channel, story.title, f"{base}/news/2026/11/{story.slug}.html", news_date(i))
        _text(item, "category", story.category)
        _text(item, "description", story.lead)
        etree.SubElement(item, "enclosure", url=pictures[0], type="image/jpeg", length="0")
        encoded = etree.SubElement(item, f"{{{CONTENT_NS}}}encoded")
        encoded.text = etree.CDATA(story_html(story, pictures, turbo=False))
    return _serialize(root)


def columns_feed(base: str) -> bytes:
    """RSS 2.0 with summaries only: each column's lead and "Read more" (``columns.py`` says why)."""
    root = etree.Element("rss", version="2.0")
    channel = _channel(root, "Harbourview Gazette: columns", f"{base}/news/columns/", "What our columnists think.")
    for i, story in enumerate(COLUMNS):
        item = _rss_item(channel, story.title, f"{base}{column_path(story)}", feature_date(i))
        _text(item, "description", f"{story.lead} Read more…")
    return _serialize(root)


def _rss_item(channel: etree._Element, title: str, link: str, when: datetime) -> etree._Element:
    """An RSS item with its title, link (its permalink guid too) and date."""
    item = etree.SubElement(channel, "item")
    _text(item, "title", title)
    _text(item, "link", link)
    _text(item, "guid", link, isPermaLink="true")
    _text(item, "pubDate", format_datetime(when))
    return item


def column_path(story: Story) -> str:
    return f"/news/columns/{story.slug}.html"


def turbo_feed(base: str, picture_url: PictureUrl) -> bytes:
    """Yandex Turbo RSS: each item's page in ``turbo:content`` (header with h1 and a cover figure)."""
    channel = ("Harbourview Gazette: features", "Longer reads about the people and places of Harbourview.")
    return _turbo(base, "/news/features/", channel, FEATURES, "feature", feature_date, picture_url, "en")


def ru_turbo_feed(base: str, picture_url: PictureUrl) -> bytes:
    """The Russian news desk's Turbo RSS feed (``russian.py``): ``<language>ru</language>``, dated like the news."""
    channel = ("Приморские вести", "Новости Приморска, выдуманного приморского города.")
    return _turbo(base, "/ru/news/", channel, RU_NEWS, "ru-news", news_date, picture_url, "ru")


def _turbo(
    base: str,
    path: str,
    channel_text: tuple[str, str],
    stories: tuple[Story, ...],
    prefix: str,
    date: Callable[[int], datetime],
    picture_url: PictureUrl,
    lang: str,
) -> bytes:
    root = etree.Element("rss", version="2.0", nsmap={"yandex": YANDEX_NS, "media": MEDIA_NS, "turbo": TURBO_NS})
    channel = _channel(root, channel_text[0], f"{base}{path}", channel_text[1], lang)
    for i, story in enumerate(stories):
        pictures = [picture_url(prefix, story.slug, n) for n in range(len(story.pictures))]
        item = etree.SubElement(channel, "item", turbo="true")
        _text(item, "title", story.title)
        _text(item, "link", f"{base}{path}{story.slug}.html")
        _text(item, "pubDate", format_datetime(date(i)))
        _text(item, "author", channel_text[0])
        content = etree.SubElement(item, f"{{{TURBO_NS}}}content")
        content.text = etree.CDATA(story_html(story, pictures, turbo=True))
    return _serialize(root)


def yml_catalog(base: str, picture_url: PictureUrl) -> bytes:
    """A YML catalog: shop, currencies, categories and one offer per product."""
    shop = ("Linn & Loom", "Linn & Loom Home Goods (a demo shop)")
    return _yml(base, "/shop/", shop, "GBP", CATEGORIES, PRODUCTS, "shop", picture_url, product_path)


def ru_yml_catalog(base: str, picture_url: PictureUrl) -> bytes:
    """The Russian shop's YML catalog (``russian.py``), priced in roubles."""
    shop = ("Дом и сад", "ООО «Дом и сад» (выдуманный магазин)")
    return _yml(base, "/ru/shop/", shop, "RUR", RU_CATEGORIES, RU_PRODUCTS, "ru-shop", picture_url, ru_product_path)


def product_path(p: Product) -> str:
    return f"/shop/p/{p.offer_id}-{p.slug}.html"


def ru_product_path(p: Product) -> str:
    # the offer id alone: a Cyrillic slug would be percent-encoded in every link and log line
    return f"/ru/shop/p/{p.offer_id}.html"


def _yml(
    base: str,
    path: str,
    names: tuple[str, str],
    currency: str,
    categories_by_id: dict[int, str],
    products: tuple[Product, ...],
    prefix: str,
    picture_url: PictureUrl,
    page_path: Callable[[Product], str],
) -> bytes:
    root = etree.Element("yml_catalog", date=NEWS_EPOCH.strftime("%Y-%m-%dT%H:%M+00:00"))
    shop = etree.SubElement(root, "shop")
    _text(shop, "name", names[0])
    _text(shop, "company", names[1])
    _text(shop, "url", f"{base}{path}")
    currencies = etree.SubElement(shop, "currencies")
    etree.SubElement(currencies, "currency", id=currency, rate="1")
    categories = etree.SubElement(shop, "categories")
    for cid, name in categories_by_id.items():
        _text(categories, "category", name, id=str(cid))
    offers = etree.SubElement(shop, "offers")
    for p in products:
        offer = etree.SubElement(offers, "offer", id=p.offer_id, available="true")
        _text(offer, "url", base + page_path(p))
        _text(offer, "price", str(p.price))
        if p.old_price is not None:
            _text(offer, "oldprice", str(p.old_price))
        _text(offer, "currencyId", currency)
        _text(offer, "categoryId", str(p.category))
        for n in range(len(p.pictures)):
            _text(offer, "picture", picture_url(prefix, p.offer_id, n))
        _text(offer, "name", p.name)
        _text(offer, "vendor", p.vendor)
        _text(offer, "description", p.description)
        for name, value, unit in p.params:
            attrs = {"name": name, **({"unit": unit} if unit else {})}
            _text(offer, "param", value, **attrs)
    return _serialize(root)


def sitemap_index(base: str) -> bytes:
    """The site's ``/sitemap.xml``: an index of one sitemap, the blog's (where the scheduler looks first)."""
    root = etree.Element("sitemapindex", nsmap={None: SITEMAP_NS})
    entry = etree.SubElement(root, f"{{{SITEMAP_NS}}}sitemap")
    _text(entry, f"{{{SITEMAP_NS}}}loc", f"{base}/blog/sitemap.xml")
    return _serialize(root)


def sitemap(base: str) -> bytes:
    """The blog's sitemap: every post with its date as ``lastmod``."""
    root = etree.Element("urlset", nsmap={None: SITEMAP_NS})
    for post in POSTS:
        url = etree.SubElement(root, f"{{{SITEMAP_NS}}}url")
        _text(url, f"{{{SITEMAP_NS}}}loc", f"{base}/blog/{post.date[:4]}/{post.date[5:7]}/{post.slug}.html")
        _text(url, f"{{{SITEMAP_NS}}}lastmod", post.date)
    return _serialize(root)
