"""Everything the demo site serves, built once at start (docs/architecture.md section 8, ``up --demo``).

``draw_pictures()`` draws every picture (independent of the address, so it
can run before the port is known); ``build_site(base, pictures)`` renders the
feeds and pages for the site's base URL and lists the six *sources* the
progress display follows, each with the canonical URLs of its pages.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from demo import feeds, pages
from demo.columns import COLUMNS
from demo.features import FEATURES
from demo.pictures import MIME, draw_picture
from demo.posts import POSTS
from demo.products import PRODUCTS
from demo.russian import RU_CATEGORIES, RU_NEWS, RU_PRODUCTS
from demo.stories import NEWS
from shared.urls import canonical_url

__all__ = ["Resource", "Site", "Source", "build_site", "draw_pictures", "picture_path"]

_HTML = "text/html; charset=utf-8"
_XML = "application/xml; charset=utf-8"
_RSS = "application/rss+xml; charset=utf-8"
_EXT = {
    "news": "jpg",
    "feature": "jpg",
    "column": "jpg",
    "shop": "jpg",
    "blog": "png",
    "ru-news": "jpg",
    "ru-shop": "jpg",
}
#: picture sizes per kind: product shots square-ish, the rest 16:9
_SIZE = {"shop": (360, 300), "ru-shop": (360, 300)}


@dataclass(frozen=True, slots=True)
class Resource:
    body: bytes
    content_type: str

    @property
    def etag(self) -> str:
        # a strong validator from the bytes: the crawler's conditional GET then gets 304 on a re-run
        return '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'


@dataclass(frozen=True, slots=True)
class Source:
    """One way content enters the pipeline, as the progress display shows it."""

    key: str
    label: str
    #: the feed's path on the site and its format; None for the autoparsed blog (no feed)
    feed_path: str | None
    format: str
    services: tuple[str, ...]
    #: canonical URLs of the Turbo pages this source should produce
    pages: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Site:
    base: str
    resources: dict[str, Resource]
    sources: tuple[Source, ...]

    def feed_url(self, source: Source) -> str:
        if source.feed_path is None:
            raise ValueError(f"source {source.key} has no feed")
        return canonical_url(self.base + source.feed_path)


def picture_path(prefix: str, slug: str, index: int) -> str:
    return f"/img/{prefix}-{slug}-{index + 1}.{_EXT[prefix]}"


def _captions() -> dict[str, str]:
    out: dict[str, str] = {}
    for prefix, items in (
        ("news", NEWS),
        ("feature", FEATURES),
        ("column", COLUMNS),
        ("blog", POSTS),
        ("ru-news", RU_NEWS),
    ):
        for item in items:
            for i, caption in enumerate(item.pictures):
                out[picture_path(prefix, item.slug, i)] = caption
    for prefix, products in (("shop", PRODUCTS), ("ru-shop", RU_PRODUCTS)):
        for p in products:
            for i, caption in enumerate(p.pictures):
                out[picture_path(prefix, p.offer_id, i)] = caption
    return out


def draw_pictures() -> dict[str, Resource]:
    """Every picture the site serves, by path (~70 small images; about a second of CPU)."""
    out: dict[str, Resource] = {}
    for path in _captions():  # the captions are the pages' (pictures.py paints no text)
        name = path.removeprefix("/img/")
        prefix = next(p for p in sorted(_EXT, key=len, reverse=True) if name.startswith(p + "-"))
        ext = _EXT[prefix]
        body = draw_picture(path, ext=ext, size=_SIZE.get(prefix, (480, 270)))
        out[path] = Resource(body, MIME[ext])
    return out


def build_site(base: str, pictures: dict[str, Resource]) -> Site:
    """The site at ``base`` (``http://127.0.0.1:PORT``): every path it serves and the sources."""
    base = base.rstrip("/")

    def pic(prefix: str, slug: str, index: int) -> str:
        return base + picture_path(prefix, slug, index)

    res: dict[str, Resource] = dict(pictures)
    res["/robots.txt"] = Resource(
        f"User-agent: *\nAllow: /\n\nSitemap: {base}/sitemap.xml\nSitemap: {base}/blog/sitemap.xml\n".encode(),
        "text/plain; charset=utf-8",
    )
    res["/"] = Resource(pages.home_page(base), _HTML)
    res["/news/rss.xml"] = Resource(feeds.rss_feed(base, pic), _RSS)
    res["/news/turbo.xml"] = Resource(feeds.turbo_feed(base, pic), _RSS)
    res["/news/columns.xml"] = Resource(feeds.columns_feed(base), _RSS)
    res["/shop/catalog.yml"] = Resource(feeds.yml_catalog(base, pic), _XML)
    res["/ru/news/turbo.xml"] = Resource(feeds.ru_turbo_feed(base, pic), _RSS)
    res["/ru/shop/catalog.yml"] = Resource(feeds.ru_yml_catalog(base, pic), _XML)
    # the scheduler reads <origin>/sitemap.xml of an autoparser host: an index leading to the blog's
    res["/sitemap.xml"] = Resource(feeds.sitemap_index(base), _XML)
    res["/blog/sitemap.xml"] = Resource(feeds.sitemap(base), _XML)
    res["/blog/"] = Resource(pages.blog_index(), _HTML)

    news_urls, feature_urls, shop_urls, blog_urls, ru_news_urls, ru_shop_urls = [], [], [], [], [], []
    column_urls = []
    for i, story in enumerate(COLUMNS):
        path = feeds.column_path(story)
        pics = [pic("column", story.slug, n) for n in range(len(story.pictures))]
        res[path] = Resource(pages.story_page(story, base + path, pics, feeds.feature_date(i).isoformat()), _HTML)
        column_urls.append(canonical_url(base + path))
    for i, story in enumerate(NEWS):
        path = f"/news/2026/11/{story.slug}.html"
        pics = [pic("news", story.slug, n) for n in range(len(story.pictures))]
        res[path] = Resource(pages.story_page(story, base + path, pics, feeds.news_date(i).isoformat()), _HTML)
        news_urls.append(canonical_url(base + path))
    for i, story in enumerate(FEATURES):
        path = f"/news/features/{story.slug}.html"
        pics = [pic("feature", story.slug, n) for n in range(len(story.pictures))]
        res[path] = Resource(pages.story_page(story, base + path, pics, feeds.feature_date(i).isoformat()), _HTML)
        feature_urls.append(canonical_url(base + path))
    for p in PRODUCTS:
        path = f"/shop/p/{p.offer_id}-{p.slug}.html"
        pics = [pic("shop", p.offer_id, n) for n in range(len(p.pictures))]
        res[path] = Resource(pages.product_page(p, base + path, pics), _HTML)
        shop_urls.append(canonical_url(base + path))
    for i, story in enumerate(RU_NEWS):
        path = f"/ru/news/{story.slug}.html"
        pics = [pic("ru-news", story.slug, n) for n in range(len(story.pictures))]
        res[path] = Resource(pages.story_page(story, base + path, pics, feeds.news_date(i).isoformat()), _HTML)
        ru_news_urls.append(canonical_url(base + path))
    for p in RU_PRODUCTS:
        path = feeds.ru_product_path(p)
        pics = [pic("ru-shop", p.offer_id, n) for n in range(len(p.pictures))]
        res[path] = Resource(pages.product_page(p, base + path, pics, RU_CATEGORIES, currency="₽"), _HTML)
        ru_shop_urls.append(canonical_url(base + path))
    for post in POSTS:
        path = pages.post_path(post)
        pics = [pic("blog", post.slug, n) for n in range(len(post.pictures))]
        res[path] = Resource(pages.blog_post(post, base + path, pics), _HTML)
        blog_urls.append(canonical_url(base + path))

    res["/news/"] = Resource(
        pages.listing_page(
            "Latest news", "Harbourview Gazette", [(s.title, f"/news/2026/11/{s.slug}.html", s.lead) for s in NEWS]
        ),
        _HTML,
    )
    res["/news/features/"] = Resource(
        pages.listing_page(
            "Features", "Harbourview Gazette", [(s.title, f"/news/features/{s.slug}.html", s.lead) for s in FEATURES]
        ),
        _HTML,
    )
    res["/news/columns/"] = Resource(
        pages.listing_page(
            "Columns", "Harbourview Gazette", [(s.title, feeds.column_path(s), s.lead) for s in COLUMNS]
        ),
        _HTML,
    )
    res["/shop/"] = Resource(
        pages.listing_page(
            "Linn & Loom: everything in the shop",
            "Linn & Loom",
            [(p.name, f"/shop/p/{p.offer_id}-{p.slug}.html", f"£{p.price}. {p.description}") for p in PRODUCTS],
        ),
        _HTML,
    )

    res["/ru/news/"] = Resource(
        pages.listing_page(
            "Приморские вести", "Приморские вести", [(s.title, f"/ru/news/{s.slug}.html", s.lead) for s in RU_NEWS]
        ),
        _HTML,
    )
    res["/ru/shop/"] = Resource(
        pages.listing_page(
            "Дом и сад: все товары",
            "Дом и сад",
            [(p.name, feeds.ru_product_path(p), f"{p.price} ₽. {p.description}") for p in RU_PRODUCTS],
        ),
        _HTML,
    )

    sources = (
        Source("news-rss", "news RSS", "/news/rss.xml", "rss", ("news",), tuple(news_urls)),
        Source("news-turbo", "news Turbo", "/news/turbo.xml", "turbo", ("news",), tuple(feature_urls)),
        Source("columns-rss", "columns (summaries only)", "/news/columns.xml", "rss", ("news",), tuple(column_urls)),
        Source("shop-yml", "shop YML", "/shop/catalog.yml", "yml", ("market",), tuple(shop_urls)),
        Source("blog", "blog (autoparser)", None, "autoparser", (), tuple(blog_urls)),
        Source("ru-news-turbo", "Russian news Turbo", "/ru/news/turbo.xml", "turbo", ("news",), tuple(ru_news_urls)),
        Source("ru-shop-yml", "Russian shop YML", "/ru/shop/catalog.yml", "yml", ("market",), tuple(ru_shop_urls)),
    )
    return Site(base, res, sources)
