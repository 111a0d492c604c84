"""Article-URL discovery from sitemap.xml and page links (shared/sitemaps.py)."""

from __future__ import annotations

import gzip

from shared.sitemaps import (
    discover_article_urls,
    hosts_related,
    is_sitemap,
    looks_like_article,
    page_links,
    sitemap_children,
)

SITEMAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>https://example.com/</loc></url>
  <url><loc>https://example.com/2024/05/01/older-story</loc><lastmod>2024-05-01</lastmod></url>
  <url><loc>https://example.com/2024/05/03/newer-story</loc><lastmod>2024-05-03T10:00:00Z</lastmod></url>
  <url><loc>https://example.com/tag/politics</loc></url>
  <url><loc>https://example.com/short</loc><news:news><news:title>T</news:title></news:news></url>
  <url><loc>https://elsewhere.org/2024/05/03/foreign-story-here</loc></url>
</urlset>"""


def test_sitemap_entries_newest_first_then_links() -> None:
    links = [
        "https://example.com/category/sport",
        "https://example.com/a-story-with-a-slug",
        "https://example.com/2024/05/03/newer-story#comments",
        "mailto:x@example.com",
    ]
    urls = discover_article_urls(SITEMAP, links, host="example.com")
    assert urls == [
        "https://example.com/2024/05/03/newer-story",
        "https://example.com/2024/05/01/older-story",
        "https://example.com/short",  # a news sitemap entry counts whatever its path
        "https://example.com/a-story-with-a-slug",
    ]


def test_gzipped_sitemap_index_and_junk() -> None:
    index = (
        b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<sitemap><loc>https://example.com/sitemap-1.xml</loc></sitemap></sitemapindex>"
    )
    assert sitemap_children(gzip.compress(index)) == ["https://example.com/sitemap-1.xml"]
    assert discover_article_urls(index, []) == []
    assert discover_article_urls(b"not xml at all <<<", ["https://example.com/2024/01/x"]) == [
        "https://example.com/2024/01/x"
    ]
    entity_bomb = (
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]><urlset><url><loc>&a;</loc></url></urlset>'
    )
    assert discover_article_urls(entity_bomb, []) == []


def test_article_heuristics_and_hosts() -> None:
    assert looks_like_article("https://example.com/news/123456")
    assert not looks_like_article("https://example.com/")
    assert not looks_like_article("https://example.com/about")
    assert not looks_like_article("https://example.com/img/photo-of-the-day.jpg")
    assert hosts_related("img.example.com", "www.example.com")
    assert hosts_related("example.com", "www.example.com")
    assert not hosts_related("example.org", "example.com")


def test_is_sitemap() -> None:
    assert is_sitemap(SITEMAP)
    assert is_sitemap(gzip.compress(b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>'))
    assert not is_sitemap(b"<html><body><a href='/x'>x</a></body></html>")
    assert not is_sitemap(b"")


def test_page_links_resolved_canonical_in_order() -> None:
    html = (
        b"<html><body><a href='/2024/05/03/newer-story'>a</a><a href='javascript:alert(1)'>j</a>"
        b"<a href='mailto:x@example.com'>m</a><a href='https://other.org/p'>o</a>"
        b"<a href='/2024/05/03/newer-story#c'>again</a><a>no href</a><a href='http://[bad'>bad</a></body></html>"
    )
    assert page_links(html, "https://example.com/") == [
        "https://example.com/2024/05/03/newer-story",
        "https://other.org/p",
    ]
    assert page_links(b"", "https://example.com/") == []
    assert len(page_links(b"".join(b"<a href='/p%d'>x</a>" % i for i in range(50)), "https://e.com/", limit=10)) == 10
