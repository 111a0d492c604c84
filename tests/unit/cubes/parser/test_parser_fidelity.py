"""Parser fidelity: each defect the audit found, with the feed that showed it."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest

from cubes.parser.documents import prepare_items
from cubes.parser.fallback import parse_with_feedparser
from cubes.parser.feed import parse_feed, yml_source
from cubes.parser.parse_file import parse_command
from cubes.parser.turbo import Limits
from shared.config import Settings

ATOM = "http://www.w3.org/2005/Atom"


def _atom(entries: str, extra_ns: str = "") -> bytes:
    return (f'<?xml version="1.0"?><feed xmlns="{ATOM}"{extra_ns}><title>t</title><id>f</id>{entries}</feed>').encode()


def test_xhtml_text_that_is_escaped_stays_text() -> None:
    body = _atom(
        '<entry><title>A</title><link href="https://s.test/a"/><id>1</id>'
        '<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Use the &lt;b&gt; tag, '
        'not &lt;img src="https://s.test/x.png"&gt;</div></content></entry>'
    )
    [cand], errors = prepare_items(parse_feed(body, url="https://s.test/feed").items, feed_host="s.test")
    assert errors == []
    assert cand.content_html == 'Use the &lt;b&gt; tag, not &lt;img src="https://s.test/x.png"&gt;'
    assert cand.media == []  # an escaped <img> is text, not an image to cache


def test_xhtml_with_a_prefix_keeps_its_lists_and_links() -> None:
    body = _atom(
        '<entry><title>B</title><link href="https://s.test/b"/><id>2</id><content type="xhtml">'
        '<h:div><h:p>Read <h:a href="/more">more</h:a>:</h:p><h:ul><h:li>one</h:li><h:li>two</h:li></h:ul>'
        "</h:div></content></entry>",
        extra_ns=' xmlns:h="http://www.w3.org/1999/xhtml"',
    )
    [cand], _ = prepare_items(parse_feed(body, url="https://s.test/feed").items, feed_host="s.test")
    assert "<ul><li>one</li><li>two</li></ul>" in cand.content_html
    assert '<a href="https://s.test/more"' in cand.content_html


RSS_NS = (
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml"'
)


@pytest.mark.parametrize(
    ("element", "body"),
    [
        ("<dc:description>Only in Dublin Core</dc:description>", "Only in Dublin Core"),
        ("<itunes:summary>Show notes</itunes:summary>", "Show notes"),
        ("<xhtml:body><xhtml:p>In <xhtml:b>XHTML</xhtml:b></xhtml:p></xhtml:body>", "<p>In <b>XHTML</b></p>"),
    ],
)
def test_content_only_in_other_elements_is_the_body(element: str, body: str) -> None:
    feed = (
        f'<rss version="2.0" {RSS_NS}><channel><title>t</title><item><title>A</title>'
        f"<link>https://s.test/a</link>{element}</item></channel></rss>"
    ).encode()
    [item] = parse_feed(feed, url="https://s.test/feed").items
    assert item.content_html == body


def test_bare_fragment_links_resolve_against_the_item() -> None:
    feed = (
        b'<rss version="2.0"><channel><title>t</title><item><title>A</title><link>https://s.test/2026/a</link>'
        b'<description><![CDATA[<p>See <a href="#part-2">below</a>.</p><h2 id="part-2">Part 2</h2>]]></description>'
        b"</item></channel></rss>"
    )
    [cand], _ = prepare_items(parse_feed(feed, url="https://s.test/feed.xml").items, feed_host="s.test")
    assert '<a href="https://s.test/2026/a#part-2"' in cand.content_html
    assert '<h2 id="c-part-2">' in cand.content_html


TWO_DATES = _atom(
    '<entry><title>A</title><link href="https://s.test/a"/><id>1</id>'
    "<updated>2024-01-01T00:00:00Z</updated><updated>2025-01-01T00:00:00Z</updated>"
    "<published>2023-01-01T00:00:00Z</published><published>2022-01-01T00:00:00Z</published></entry>"
)


def test_first_of_several_dates_wins_on_both_paths() -> None:
    fast = parse_feed(TWO_DATES, url="https://s.test/feed").items[0]
    loose = parse_with_feedparser(TWO_DATES, "https://s.test/feed", None).items[0]
    for item in (fast, loose):
        assert item.updated is not None
        assert item.published is not None
        assert (item.updated.year, item.published.year) == (2024, 2023)


def test_items_inside_an_atom_feed_are_read_with_a_warning() -> None:
    body = _atom(
        "<item><title>A</title><link>https://s.test/a</link><guid>1</guid><description>Hello</description>"
        "<pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>"
    )
    result = parse_feed(body, url="https://s.test/feed")
    assert [(i.title, i.link, i.content_html) for i in result.items] == [("A", "https://s.test/a", "Hello")]
    assert [(e.code, e.severity.value) for e in result.errors] == [("feed.misplaced_items", "warning")]


RSS = (
    '<?xml version="1.0" encoding="UTF-16"?><rss version="2.0"><channel><title>t</title>'
    "<item><title>Привет</title><link>https://s.test/a</link></item></channel></rss>"
)


def test_a_gzipped_feed_is_read() -> None:
    result = parse_feed(gzip.compress(RSS.replace(' encoding="UTF-16"', "").encode()), url="https://s.test/feed")
    assert [i.title for i in result.items] == ["Привет"]
    assert result.errors == []


def test_a_gzipped_catalog_is_streamed() -> None:
    yml = b'<yml_catalog><shop><offers><offer id="1"><name>N</name><url>https://s.test/1</url></offer></offers></shop></yml_catalog>'
    found = yml_source(gzip.compress(yml))
    assert found is not None
    assert found[0] == yml


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (gzip.compress(b"<rss>" + b" " * 100_000 + b"</rss>"), "fetch.too_large"),  # a bomb costs the limit
        (gzip.compress(RSS.encode())[:-12], "feed.not_readable"),
    ],
)
def test_a_bad_gzip_is_refused_with_its_reason(body: bytes, code: str) -> None:
    result = parse_feed(body, limits=Limits(max_body_bytes=10_000))
    assert result.fatal
    assert [e.code for e in result.errors] == [code]


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_bom_is_read(encoding: str) -> None:
    result = parse_feed(RSS.encode(encoding), url="https://s.test/feed")
    assert [i.title for i in result.items] == ["Привет"]
    assert result.encoding == encoding


RELATIVE = b"""<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>t</title>
SELF
<item><title>A</title><link>/posts/a</link><description><![CDATA[<p><img src="img/a.jpg"></p>]]></description></item>
</channel></rss>"""


async def _parse_file(tmp_path: Path, body: bytes, **kw: object) -> tuple[int, list[dict[str, object]], str]:
    path = tmp_path / "feed.xml"
    path.write_bytes(body)
    out, err = io.StringIO(), io.StringIO()
    code = await parse_command(Settings(), str(path), out=out, err=err, **kw)  # type: ignore[arg-type]
    return code, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


async def test_parse_takes_a_base_url_for_a_file(tmp_path: Path) -> None:
    code, docs, err = await _parse_file(tmp_path, RELATIVE.replace(b"SELF", b""), base_url="https://blog.test/feed.xml")
    assert (code, err) == (0, "")
    assert [d["url"] for d in docs] == ["https://blog.test/posts/a"]
    assert docs[0]["media"][0]["url"] == "https://blog.test/img/a.jpg"  # type: ignore[index]


async def test_parse_resolves_against_rel_self_without_a_base_url(tmp_path: Path) -> None:
    own = b'<atom:link rel="self" href="https://blog.test/feed.xml"/>'
    code, docs, err = await _parse_file(tmp_path, RELATIVE.replace(b"SELF", own))
    assert (code, err) == (0, "")
    assert [d["url"] for d in docs] == ["https://blog.test/posts/a"]


async def test_parse_says_how_to_give_a_file_an_address(tmp_path: Path) -> None:
    code, docs, err = await _parse_file(tmp_path, RELATIVE.replace(b"SELF", b""))
    assert (code, docs) == (0, [])
    assert "give --base-url" in err
