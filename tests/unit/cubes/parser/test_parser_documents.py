"""From items to documents: sanitizing, identity, media roles, the content hash (cubes.parser.documents)."""

from __future__ import annotations

import re

import pytest

from cubes.parser.dates import parse_date
from cubes.parser.documents import prepare_items, to_document
from cubes.parser.feed import parse_feed
from cubes.parser.identity import IdentityError, identify
from cubes.parser.sanitize import sanitize_html
from shared.clock import SystemClock
from shared.messages import SourceKind, SourceRef
from shared.webmaster.hosts import scope_for

NOW = SystemClock().now()

#: an iframe is unsafe unless it shows an allowlisted video host (shared/pages/safehtml.py)
UNSAFE = re.compile(
    r"<script|<style|<iframe(?! src=\"https://www\.youtube\.com/)|<form|<input|<object|<embed|\son\w+=|javascript:|data:",
    re.I,
)


def test_sanitize_drops_every_unsafe_thing() -> None:
    dirty = (
        '<p onclick="x()" style="color:red">hi<script>alert(1)</script></p><style>p{}</style>'
        '<a href="javascript:alert(1)">j</a><a href="JaVaScRiPt:alert(1)">k</a><img src="data:image/png;base64,AA">'
        '<iframe src="https://www.youtube.com/embed/x"></iframe><iframe src="https://evil.test/x"></iframe>'
        '<form action="/x"><input name="q"></form>'
        '<svg onload="alert(1)"><circle/></svg><object data="x.swf"></object><img src="x.png" onerror="alert(1)">'
    )
    clean = sanitize_html(dirty, "https://s.test/feed/")
    assert UNSAFE.search(clean) is None, clean
    assert '<img src="https://s.test/feed/x.png">' in clean  # relative URL resolved against the base
    assert "<p>hi</p>" in clean
    assert '<iframe src="https://www.youtube.com/embed/x"></iframe>' in clean  # an allowlisted player stays


def test_sanitize_keeps_turbo_structure() -> None:
    html = (
        '<header><h1>T</h1><figure><img src="https://s.test/c.jpg"><figcaption>c</figcaption></figure>'
        '</header><div data-block="widget-feedback"><div data-type="telegram"></div></div>'
        '<table><tr><td colspan="2">x</td></tr></table><video src="https://s.test/v.mp4" controls></video>'
    )
    clean = sanitize_html(html)
    for part in (
        "<header><h1>T</h1>",
        "<figcaption>c</figcaption>",
        'colspan="2"',
        "<video",
    ):
        assert part in clean


def test_identity_host_rule_and_canonical_url() -> None:
    assert identify("HTTPS://Site.test:443/a/../b?#f", "site.test").url == "https://site.test/b"
    # www. is an alias only for a tenant that verified both spellings (shared.webmaster.hosts)
    both = scope_for("site.test", ["site.test", "www.site.test"])
    assert identify("HTTPS://WWW.Site.test:443/a/../b?#f", both).url == "https://www.site.test/b"
    assert identify("https://site.test/x", scope_for("www.site.test", ["site.test", "www.site.test"])).host == (
        "site.test"
    )
    for alone in ("site.test", scope_for("site.test", ["site.test"]), scope_for("site.test", None)):
        with pytest.raises(IdentityError, match="two hosts: they count as one site once the same tenant") as exc:
            identify("https://www.site.test/x", alone)
        assert exc.value.code == "item.foreign_host"
    with pytest.raises(IdentityError, match="not on the feed's host") as exc:
        identify("https://evil.test/x", both)
    assert "two hosts" not in str(exc.value)
    with pytest.raises(IdentityError, match="not verified for this tenant any more") as exc:
        identify("https://site.test/x", scope_for("site.test", ["www.site.test"]))
    assert exc.value.code == "host.not_verified"
    with pytest.raises(IdentityError, match="not a usable URL"):
        identify("javascript:alert(1)", "site.test")
    with pytest.raises(IdentityError, match="no link"):
        identify(None, "site.test")


FEED = """<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>c</title>
<item><title> A  title </title><link>https://s.test/a</link><guid isPermaLink="false">g-1</guid>
<pubDate>Mon, 01 Jan 2024 10:00:00 GMT</pubDate>
<description><![CDATA[<p>Text <img src="/in-content.jpg"></p>]]></description>
<enclosure url="https://s.test/e.jpg" type="image/jpeg" length="1"/>
<enclosure url="https://s.test/e.mp3" type="audio/mpeg" length="1"/>
<media:content url="https://s.test/m.mp4" type="video/mp4"/>
<media:thumbnail url="https://s.test/t.jpg"/></item>
<item><title>Off host</title><link>https://other.test/b</link></item>
<item><link>https://s.test/no-title</link></item>
<item><title>Dup</title><link>https://s.test/a</link></item>
</channel></rss>"""


def test_prepare_items_media_roles_and_rejections() -> None:
    result = parse_feed(FEED.encode(), url="https://s.test/rss")
    [cand], errors = prepare_items(result.items, feed_host="s.test")
    assert cand.title == "A title"  # whitespace runs collapsed
    roles = [(m.role, m.url, m.kind) for m in cand.media]
    assert roles == [
        ("enclosure", "https://s.test/e.jpg", "image"),
        ("media:content", "https://s.test/m.mp4", "video"),
        ("media:thumbnail", "https://s.test/t.jpg", "image"),
        ("content", "https://s.test/in-content.jpg", "image"),
    ]
    assert len(errors) == 3
    assert any("not on the feed's host" in e.reason for e in errors)
    assert any("no title" in e.reason for e in errors)
    assert any("duplicate link" in e.reason for e in errors)
    doc = to_document(cand, source=SourceRef(kind=SourceKind.rss, id="f1"), version=3, seen_at=NOW, parsed_at=NOW)
    assert doc.url == "https://s.test/a"
    assert doc.version == 3
    assert doc.guid == "g-1"
    assert doc.published_at is not None
    assert doc.published_at.tzinfo is not None


def _hash(feed: str) -> str:
    result = parse_feed(feed.encode(), url="https://s.test/rss")
    [cand], _ = prepare_items(result.items, feed_host="s.test")
    return cand.content_hash


def test_hash_ignores_whitespace_and_dates_but_not_content() -> None:
    base = _hash(FEED)
    assert base.startswith("xxh3:")
    assert len(base) == 5 + 32
    assert _hash(FEED.replace("<p>Text ", "<p>Text\n   ")) == base
    assert _hash(FEED.replace("Mon, 01 Jan 2024", "Tue, 02 Jan 2024")) == base
    assert _hash(FEED.replace("<p>Text", "<p>Texts")) != base
    assert _hash(FEED.replace("t.jpg", "t2.jpg")) != base


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("Sun, 06 Jul 2014 12:56:00 GMT", "2014-07-06T12:56:00+00:00"),
        ("2014-07-06T12:56:00.123-07:00", "2014-07-06T12:56:00.123000-07:00"),
        ("Tue, 21 Apr 2015 14:15:00 +0300", "2015-04-21T14:15:00+03:00"),
        ("2014-07-06", "2014-07-06T00:00:00+00:00"),
        ("Sun, 06 Jul 2014 12:56:00", "2014-07-06T12:56:00+00:00"),
    ],
)
def test_dates_keep_the_source_offset(text: str, iso: str) -> None:
    """A zoneless date is UTC; a zoned one keeps its offset (the page shows it as the source wrote it)."""
    parsed = parse_date(text)
    assert parsed is not None
    assert parsed.isoformat() == iso


def test_unparseable_date_is_none() -> None:
    assert parse_date("yesterday-ish") is None
    assert parse_date("x" * 500) is None


def test_canonical_fast_path_agrees_with_shared_urls(data_dir) -> None:  # type: ignore[no-untyped-def]
    """canonical_url's shortcut for plainly canonical URLs must return exactly what the full normalization
    returns, on every link and media URL of the corpus."""
    from shared.urls import _normalize as canonical_url
    from shared.urls import canonical_url as canonical

    urls: set[str] = set()
    for path in (data_dir / "feeds").rglob("*.*"):
        if path.suffix in (".xml", ".rss", ".atom"):
            result = parse_feed(path.read_bytes(), url="https://example.com/feed/")
            for it in result.items:
                urls.update(u for u in (it.link, *(m.url for m in it.media)) if u)
    urls.update(
        {
            "https://A.test/x",
            "https://a.test",
            "https://a.test/./x",
            "http://1.2.3.4/x",
            "https://a.test:443/",
            "https://a.test/x#f",
            "https://a.test/%7e",
            "https://xn--80ak6aa92e.com/",
            "https://a.test./x",
            # ports: kept when plain, dropped when the scheme's default, refused past 65535
            "http://a.test:8080/x",
            "http://a.test:8080",
            "https://a.test:8443/?q=1",
            "http://a.test:80/x",
            "https://a.test:443",
            "http://a.test:443/x",
            "https://a.test:80/",
            "http://a.test:65535/",
            "http://a.test:65536/",
            "http://a.test:99999/",
            "http://a.test:0/",
            "http://a.test:08080/",
            # no path: the empty path is "/", before a query too
            "https://a.test?q=1",
            "http://a.test:8080?q=1",
        }
    )
    assert len(urls) > 1000
    for url in urls:
        try:
            expected = canonical_url(url)
        except ValueError:
            with pytest.raises(ValueError, match=r"."):
                canonical(url)
            continue
        assert canonical(url) == expected, url
