"""The feeds an HTML page names (shared/webmaster/feed_discovery.py), read as a hostile page would be written."""

from __future__ import annotations

from shared.webmaster.feed_discovery import FOUND_MAX, HTML_MAX, alternates, looks_like_html

HOME = b"""<!DOCTYPE html>
<html lang=en><head><meta charset=utf-8><title>Birds</title>
<link rel="stylesheet" href="/s.css">
<link rel="alternate" type="application/rss+xml" title="All   the news" href="/feed.xml">
<link rel="Alternate Home" type="application/atom+xml; charset=utf-8" href="https://birds.example/atom">
<link rel=alternate type=application/feed+json href=feed.json>
<link rel=alternate type=application/rss+xml href="javascript:alert(1)">
<link rel=alternate type=application/rss+xml href="/feed.xml">
<link rel=alternate hreflang=ru href="/ru/">
</head><body><p>Hello<br>
<link rel=alternate type=application/rss+xml href="/in-the-body.xml">
</body></html>"""


def test_the_head_s_feed_links_in_order_once_each_resolved_and_only_http() -> None:
    found = alternates(HOME, "https://birds.example/blog/")
    assert [(a.url, a.kind, a.title) for a in found] == [
        ("https://birds.example/feed.xml", "RSS", "All the news"),
        ("https://birds.example/atom", "Atom", ""),
        ("https://birds.example/blog/feed.json", "JSON Feed", ""),
    ]
    assert found[0].describe() == "https://birds.example/feed.xml (RSS: All the news)"


def test_a_base_href_and_a_page_without_a_url() -> None:
    page = b'<html><head><base href="https://cdn.example/x/"><link rel=alternate type=application/rss+xml href=f.xml>'
    assert [a.url for a in alternates(page, None)] == ["https://cdn.example/x/f.xml"]
    relative = b"<html><head><link rel=alternate type=application/rss+xml href=f.xml>"
    assert alternates(relative, None) == []  # nothing to resolve it against: nothing a crawler can fetch


def test_bounded_a_thousand_links_and_a_huge_page() -> None:
    many = b"<html><head>" + b"".join(
        b'<link rel=alternate type=application/rss+xml href="/c/%d.xml">' % i for i in range(1000)
    )
    assert len(alternates(many, "https://a.example/")) == FOUND_MAX
    late = b"<html><head>" + b" " * HTML_MAX + b"<link rel=alternate type=application/rss+xml href=/late.xml>"
    assert alternates(late, "https://a.example/") == []


def test_what_looks_like_an_html_page() -> None:
    for body in (HOME, b"\xef\xbb\xbf  <!-- made by hand -->\n<HTML>", b"<head><title>x", b"<body>"):
        assert looks_like_html(body), body[:30]
    for body in (b'<?xml version="1.0"?><rss/>', b"<feed xmlns='http://www.w3.org/2005/Atom'/>", b"{}", b"<htmlx>"):
        assert not looks_like_html(body), body[:30]


def test_a_hostile_prolog_of_ten_thousand_comments_is_read_once() -> None:
    # a pattern of repeated lazy comments backtracked for minutes here (the parser's hostile prolog test)
    prolog = b"<!-- c -->\n" * 10_000
    assert not looks_like_html(prolog + b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss/>')
    assert not looks_like_html(b"<!-- c -->" * 400 + b"<!--")
    assert looks_like_html(b"<!-- a --><!-- b -->\n<html><head>")
