"""Recovered XML keeps its text; undeclared prefixes are read (cubes/parser/repair.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from cubes.parser.documents import prepare_items
from cubes.parser.feed import parse_feed
from cubes.parser.model import DetectedFormat
from cubes.parser.parse_file import parse_command
from cubes.parser.repair import repair_xml
from shared.config import Settings

AMP = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Birds &amp; more</title>
<item><title>herons & egrets&nbsp;&mdash; a field guide</title><link>https://s.test/a?x=1&y=2</link>
<description><![CDATA[<p>Tom & Jerry</p>]]></description></item>
<item><title>clean</title><link>https://s.test/b</link><description>fine</description></item>
</channel></rss>"""


def test_a_bare_ampersand_stays_and_the_item_is_marked() -> None:
    result = parse_feed(AMP, url="https://s.test/feed")
    assert [i.title for i in result.items] == ["herons & egrets — a field guide", "clean"]
    assert result.items[0].link == "https://s.test/a?x=1&y=2"
    assert result.items[0].content_html == "<p>Tom & Jerry</p>"  # CDATA: untouched
    marks = [(e.code, e.index, e.link, e.line, e.severity.value) for e in result.errors]
    assert marks == [
        ("xml.bare_ampersand", 0, "https://s.test/a?x=1&y=2", 2, "warning"),
        ("xml.html_entity", 0, "https://s.test/a?x=1&y=2", 2, "warning"),
    ]
    assert "2 bare & kept as &" in result.errors[0].reason  # the title's and the link's
    assert "&mdash;" in result.errors[1].reason
    cands, refused = prepare_items(result.items, feed_host="s.test")
    assert refused == []
    assert cands[0].title == "herons & egrets — a field guide"


TURBO_NO_NS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>News</title><link>https://s.test/</link>
<item turbo="true"><title>One</title><link>https://s.test/1</link>
<turbo:content><![CDATA[<header><h1>One</h1></header><p>first</p>]]></turbo:content></item>
<item turbo="true"><title>Two</title><link>https://s.test/2</link><yandex:related></yandex:related>
<turbo:content><![CDATA[<p>second</p>]]></turbo:content></item>
</channel></rss>"""


def test_a_turbo_feed_without_xmlns_turbo_is_read_with_a_warning() -> None:
    """Every item was refused ("turbo item has no <turbo:content>") and the feed said 0 documents."""
    result = parse_feed(TURBO_NO_NS, url="https://s.test/turbo.xml")
    assert result.format is DetectedFormat.turbo
    assert [i.content_html for i in result.items] == ["<header><h1>One</h1></header><p>first</p>", "<p>second</p>"]
    assert [(e.code, e.index, e.line) for e in result.errors] == [
        ("xml.undeclared_prefix", None, 4),
        ("xml.undeclared_prefix", None, 5),
    ]
    assert {e.reason.split(":")[0] for e in result.errors} == {"prefix turbo", "prefix yandex"}


def test_an_unknown_prefix_is_read_in_a_placeholder_namespace() -> None:
    body = b'<rss version="2.0"><channel><item><title>A</title><link>https://s.test/a</link><x:y>z</x:y></item></channel></rss>'
    result = parse_feed(body, url="https://s.test/feed")
    assert [i.title for i in result.items] == ["A"]
    assert [e.code for e in result.errors] == ["xml.undeclared_prefix"]


def test_repair_keeps_lines_and_leaves_cdata_and_comments_alone() -> None:
    body = b"<!-- a & b --><rss>\n<t>a & b</t>\n<![CDATA[c & d &nbsp;]]><u>&amp; &#38; &lt;</u></rss>"
    fixed = repair_xml(body)
    assert fixed.body == b"<!-- a & b --><rss>\n<t>a &amp; b</t>\n<![CDATA[c & d &nbsp;]]><u>&amp; &#38; &lt;</u></rss>"
    assert [(f.kind.value, f.offset) for f in fixed.fixes] == [("ampersand", body.index(b"a & b</t>") + 2)]


async def test_the_cli_prints_the_documents_of_a_feed_without_xmlns_turbo(tmp_path: Path) -> None:
    path = tmp_path / "turbo.xml"
    path.write_bytes(TURBO_NO_NS)
    out, err = io.StringIO(), io.StringIO()
    code = await parse_command(Settings(), str(path), out=out, err=err)
    assert code == 0
    assert [json.loads(line)["url"] for line in out.getvalue().splitlines()] == ["https://s.test/1", "https://s.test/2"]
    assert "warning: prefix turbo: is used without its xmlns:turbo declaration" in err.getvalue()


NUL = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
<item><title>One\x00</title><link>https://s.test/1</link>
<description>before\x00after, and the rest of the text</description></item>
<item><title>Two</title><link>https://s.test/2?a=1&b=2</link>
<description><![CDATA[<p>in cdata\x01 too</p>]]></description></item>
</channel></rss>"""


def test_a_nul_byte_loses_no_text_and_is_reported_where_it_was() -> None:
    """Recovery cut the text at the NUL ("before", the rest gone) under a mere xml.recovered."""
    result = parse_feed(NUL, url="https://s.test/feed")
    assert [(i.title, i.content_html) for i in result.items] == [
        ("One", "beforeafter, and the rest of the text"),
        ("Two", "<p>in cdata too</p>"),
    ]
    assert result.items[1].link == "https://s.test/2?a=1&b=2"
    marks = [(e.code, e.index, e.line, e.column) for e in result.errors]
    # positions are the webmaster's own: the & after a dropped character is still found at its column
    assert marks == [
        ("xml.control_character", 0, 2, 17),
        ("xml.bare_ampersand", 1, 4, 51),
        ("xml.control_character", 1, 5, 34),
    ]
    assert "2 control characters XML forbids (U+0000) dropped" in result.errors[0].reason  # title, text
    assert "(U+0001) dropped" in result.errors[2].reason
    assert NUL.splitlines()[3][50:51] == b"&"


def test_control_characters_are_dropped_even_in_cdata_and_offsets_map_back() -> None:
    body = b"<a>\x00x&y\x0b<![CDATA[\x1f]]>&</a>"
    repaired = repair_xml(body)
    assert repaired.body == b"<a>x&amp;y<![CDATA[]]>&amp;</a>"
    assert [(f.kind.value, f.offset, body[f.offset : f.offset + 1]) for f in repaired.fixes] == [
        ("control", 3, b"\x00"),
        ("ampersand", 5, b"&"),
        ("control", 7, b"\x0b"),
        ("control", 17, b"\x1f"),
        ("ampersand", 21, b"&"),
    ]
    assert repair_xml(b"<a>\t\n\r ok</a>").fixes == []  # tab and newlines are XML
