"""The demo site's HTML pages (docs/architecture.md section 8, ``up --demo``).

The blog pages are what the autoparser reads, so they look like a real
site's: navigation, the article, a sidebar of recent posts, a footer. The
news and product pages are where the feeds' links point (a person following
"original" from a Turbo page lands on them).
"""

from __future__ import annotations

from html import escape

from demo.posts import POSTS, Post
from demo.products import CATEGORIES, Product
from demo.stories import Story

__all__ = ["blog_index", "blog_post", "home_page", "listing_page", "post_path", "product_page", "story_page"]

_STYLE = (
    "body{font:17px/1.55 Georgia,serif;margin:0;color:#222;background:#fbfaf7}"
    "header.site,footer{background:#2d3a3a;color:#eee;padding:12px 24px}"
    "header.site a,footer a{color:#eee;margin-right:16px}"
    "main{display:flex;gap:32px;max-width:1000px;margin:24px auto;padding:0 24px}"
    "article{flex:3}aside{flex:1;font-size:15px}img{max-width:100%;height:auto}"
    "figcaption{font-size:14px;color:#666}"
)


def post_path(post: Post) -> str:
    return f"/blog/{post.date[:4]}/{post.date[5:7]}/{post.slug}.html"


def _page(
    title: str,
    site: str,
    nav: list[tuple[str, str]],
    body: str,
    *,
    canonical: str = "",
    description: str = "",
    image: str = "",
) -> bytes:
    head = [
        f'<meta charset="utf-8"><title>{escape(title)} | {escape(site)}</title>',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<style>{_STYLE}</style>",
    ]
    if canonical:
        head.append(f'<link rel="canonical" href="{escape(canonical)}">')
    if description:
        head.append(f'<meta name="description" content="{escape(description)}">')
        head.append(f'<meta property="og:description" content="{escape(description)}">')
    head.append(f'<meta property="og:title" content="{escape(title)}">')
    if image:
        head.append(f'<meta property="og:image" content="{escape(image)}">')
    links = "".join(f'<a href="{escape(href)}">{escape(label)}</a>' for label, href in nav)
    return (
        '<!doctype html>\n<html lang="en"><head>' + "".join(head) + "</head><body>"
        f'<header class="site"><a class="logo" href="/">{escape(site)}</a> <nav>{links}</nav></header>'
        f"{body}"
        f"<footer><p>{escape(site)} is part of the turbocubes demo: every name and story here is invented."
        ' <a href="/">All demo sites</a></p></footer></body></html>\n'
    ).encode()


def _figure(src: str, caption: str) -> str:
    return (
        f'<figure><img src="{escape(src)}" alt="{escape(caption)}" width="480" height="270">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


_NEWS_NAV = [("Home", "/news/"), ("Town", "/news/"), ("Features", "/news/features/"), ("RSS", "/news/rss.xml")]
_SHOP_NAV = [("Shop", "/shop/"), *[(name, "/shop/") for name in CATEGORIES.values()]]
_BLOG_NAV = [("Posts", "/blog/"), ("Tools", "/blog/"), ("Projects", "/blog/"), ("Sitemap", "/blog/sitemap.xml")]


def home_page(base: str) -> bytes:
    body = (
        "<main><article><h1>The turbocubes demo sites</h1>"
        "<p>Three invented partner sites that <code>turbocubes up --demo</code> turns into Turbo pages:</p><ul>"
        f'<li><a href="/news/">Harbourview Gazette</a>: an <a href="/news/rss.xml">RSS feed</a> and a '
        f'<a href="/news/turbo.xml">Turbo RSS feed</a></li>'
        f'<li><a href="/shop/">Linn &amp; Loom</a>: a <a href="/shop/catalog.yml">YML catalog</a></li>'
        f'<li><a href="/blog/">Shavings</a>: a blog with no feed, only HTML and a '
        f'<a href="/blog/sitemap.xml">sitemap</a> (read by the autoparser)</li></ul>'
        f"<p>Base URL: <code>{escape(base)}</code></p></article></main>"
    )
    return _page("Demo sites", "turbocubes demo", [("News", "/news/"), ("Shop", "/shop/"), ("Blog", "/blog/")], body)


def story_page(story: Story, url: str, pictures: list[str], date: str) -> bytes:
    figures = [_figure(src, cap) for src, cap in zip(pictures, story.pictures, strict=True)]
    paras = [f"<p>{escape(p)}</p>" for p in story.paragraphs]
    body = (
        f"<main><article><h1>{escape(story.title)}</h1><p><em>{escape(story.lead)}</em></p>"
        f'<p><time datetime="{date}">{date[:10]}</time> · {escape(story.category)}</p>{figures[0]}'
        + "".join(paras[:2])
        + "".join(figures[1:])
        + "".join(paras[2:])
        + "</article></main>"
    )
    return _page(
        story.title, "Harbourview Gazette", _NEWS_NAV, body, canonical=url, description=story.lead, image=pictures[0]
    )


def product_page(
    product: Product,
    url: str,
    pictures: list[str],
    categories: dict[int, str] = CATEGORIES,
    *,
    currency: str = "£",
) -> bytes:
    figures = "".join(_figure(src, cap) for src, cap in zip(pictures, product.pictures, strict=True))
    params = "".join(f"<tr><th>{escape(n)}</th><td>{escape(v)} {escape(u)}</td></tr>" for n, v, u in product.params)

    def price(value: int) -> str:  # "£39", but "2 490 ₽" as roubles are written
        return f"£{value}" if currency == "£" else f"{value:,} {currency}".replace(",", "\u00a0")

    old = f" <s>{price(product.old_price)}</s>" if product.old_price else ""
    body = (
        f"<main><article><h1>{escape(product.name)}</h1><p>by {escape(product.vendor)} · "
        f"{escape(categories[product.category])}</p>{figures}<p><strong>{price(product.price)}</strong>{old}</p>"
        f"<p>{escape(product.description)}</p><table>{params}</table></article></main>"
    )
    return _page(
        product.name, "Linn & Loom", _SHOP_NAV, body, canonical=url, description=product.description, image=pictures[0]
    )


def _sidebar(current: str = "") -> str:
    items = "".join(f'<li><a href="{post_path(p)}">{escape(p.title)}</a></li>' for p in POSTS if p.slug != current)
    return (
        f"<aside><h3>Recent posts</h3><ul>{items}</ul><h3>About</h3><p>Shavings is a workshop diary: "
        "hand tools, small projects and honest mistakes.</p></aside>"
    )


def blog_post(post: Post, url: str, pictures: list[str]) -> bytes:
    figures = [_figure(src, cap) for src, cap in zip(pictures, post.pictures, strict=True)]
    paras = [f"<p>{escape(p)}</p>" for p in post.paragraphs]
    body = (
        f"<main><article><h1>{escape(post.title)}</h1>"
        f'<p class="meta">Posted on <time datetime="{post.date}">{post.date}</time> by Sam Ashdown</p>'
        f"{figures[0]}"
        + "".join(paras[:3])
        + "".join(figures[1:])
        + "".join(paras[3:])
        + '<p class="tags">Filed under: <a href="/blog/">workshop</a></p></article>'
        f"{_sidebar(post.slug)}</main>"
    )
    return _page(
        post.title, "Shavings", _BLOG_NAV, body, canonical=url, description=post.paragraphs[0][:150], image=pictures[0]
    )


def _list(entries: list[tuple[str, str, str]]) -> str:
    return (
        "<ul>"
        + "".join(
            f'<li><a href="{escape(href)}">{escape(title)}</a><br>{escape(blurb)}</li>'
            for title, href, blurb in entries
        )
        + "</ul>"
    )


def blog_index() -> bytes:
    entries = [(p.title, post_path(p), f"{p.date}: {p.paragraphs[0][:140]}…") for p in POSTS]
    body = f"<main><article><h1>Shavings: all posts</h1>{_list(entries)}</article>{_sidebar()}</main>"
    return _page("All posts", "Shavings", _BLOG_NAV, body)


def listing_page(title: str, site: str, entries: list[tuple[str, str, str]]) -> bytes:
    """A section front: (title, path, blurb) per entry; the news and shop front pages."""
    nav = _SHOP_NAV if site == "Linn & Loom" else _NEWS_NAV
    return _page(title, site, nav, f"<main><article><h1>{escape(title)}</h1>{_list(entries)}</article></main>")
