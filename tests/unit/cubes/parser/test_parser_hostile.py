"""Hostile XML is refused in bounded time and memory, with a reason that names the attack (xmlsafe)."""

from __future__ import annotations

import io

import pytest

from cubes.parser.feed import parse_feed
from cubes.parser.xmlsafe import HostileXml
from cubes.parser.yml import iter_yml

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<rss><channel><item><title>&lol9;</title><link>https://a.test/1</link></item></channel></rss>"""


def _xxe(target: str) -> bytes:
    return (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "{target}">]>'
        "<rss><channel><item><title>&x;</title><link>https://a.test/1</link></item></channel></rss>"
    ).encode()


HOSTILE = {
    "billion laughs": (LAUGHS, "entity expansion"),
    "xxe file": (_xxe("file:///etc/passwd"), "XXE"),
    "xxe http": (_xxe("http://127.0.0.1:9/evil.dtd"), "XXE"),
    "parameter entity": (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x">%p;]><rss/>',
        "XXE",
    ),
    "deep nesting": (
        b"<rss><channel><item><title>t</title><description>"
        + b"<a>" * 100_000
        + b"</a>" * 100_000
        + b"</description></item></channel></rss>",
        "depth",
    ),
    "deep and broken": (b"<rss><channel><item><description>" + b"<a>" * 100_000, "depth"),
    "huge attribute": (
        b'<rss><channel><item a="' + b"x" * (11 * 1024 * 1024) + b'"><title>t</title></item></channel></rss>',
        "limit",
    ),
    "huge text": (
        b"<rss><channel><item><title>" + b"x" * (11 * 1024 * 1024) + b"</title></item></channel></rss>",
        "limit",
    ),
}


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.timeout(30)  # a bomb that expanded would run for minutes: the bound, not a speed target
def test_hostile_feed_is_refused_before_it_expands(name: str) -> None:
    body, word = HOSTILE[name]
    result = parse_feed(body, url="https://a.test/feed")
    assert result.fatal
    assert result.items == []
    [err] = result.errors
    assert word.lower() in err.reason.lower()
    assert err.line is not None
    assert "root:" not in repr(result)  # nothing of /etc/passwd anywhere


def test_hostile_yml_is_refused() -> None:
    with pytest.raises(HostileXml, match="XXE"):
        list(iter_yml(io.BytesIO(_xxe("file:///etc/passwd").replace(b"rss", b"yml_catalog"))))


def test_undeclared_entities_are_recovered_not_expanded() -> None:
    body = b"<rss><channel><item><title>A&nbsp;B &foo;</title><link>https://a.test/x</link></item></channel></rss>"
    result = parse_feed(body)
    assert not result.fatal
    assert result.items[0].link == "https://a.test/x"
    # &nbsp; is HTML's: read as its character; &foo; is nobody's: its & is kept, as text, never expanded
    assert result.items[0].title == "A B &foo;"
    assert [e.code for e in result.errors] == ["xml.html_entity", "xml.bare_ampersand"]


_LONG_COMMENT = b"<!-- " + b"padding " * 9_000 + b"-->\n"  # 72 KB: past any fixed prolog window
_LONG_PI = b"<?generator " + b"x" * 80_000 + b"?>\n"

#: (body, word the reason must name, line of the refused declaration): the DOCTYPE wherever it is
LATE_DOCTYPES = {
    "after a 72 KB comment": (b'<?xml version="1.0"?>\n' + _LONG_COMMENT + LAUGHS.split(b"\n", 1)[1], "expansion", 4),
    "xxe after a 72 KB comment": (_LONG_COMMENT + _xxe("file:///etc/passwd"), "XXE", 2),
    "after a long processing instruction": (_LONG_PI + _xxe("file:///etc/passwd"), "XXE", 2),
    "after many comments": (b"<!-- c -->\n" * 10_000 + _xxe("file:///etc/passwd"), "XXE", 10_001),
    "entity after a quoted ]>": (
        b'<!DOCTYPE r [<!ATTLIST r a CDATA "]>">\n<!ENTITY x SYSTEM "file:///etc/passwd">]><rss>&x;</rss>',
        "XXE",
        2,
    ),
    "utf-16 after a comment": (
        ("\ufeff" + _LONG_COMMENT.decode() + LAUGHS.decode()).encode("utf-16-le"),
        "expansion",
        4,
    ),
}


@pytest.mark.parametrize("name", list(LATE_DOCTYPES))
def test_doctype_after_a_long_prolog_is_still_refused(name: str) -> None:
    body, word, line = LATE_DOCTYPES[name]
    result = parse_feed(body, url="https://a.test/feed")
    assert result.fatal
    assert result.items == []
    [err] = result.errors
    assert word.lower() in err.reason.lower()
    assert err.line == line


def test_yml_doctype_after_a_long_comment_is_refused() -> None:
    body = _LONG_COMMENT + _xxe("file:///etc/passwd").replace(b"rss", b"yml_catalog")
    with pytest.raises(HostileXml, match="XXE"):
        list(iter_yml(io.BytesIO(body)))


@pytest.mark.parametrize(
    "body",
    [
        # RSS 0.91's public DTD (no internal subset), and an article about XXE in a CDATA section
        b'<?xml version="1.0"?>\n<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"\n'
        b' "http://my.netscape.com/publish/formats/rss-0.91.dtd">\n<rss version="0.91"><channel><title>t</title>'
        b"<item><title>XXE explained</title><link>https://a.test/xxe</link><description><![CDATA["
        b'<pre>&lt;!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]&gt;</pre>]]></description></item>'
        b"</channel></rss>",
        # an entity declaration inside a comment of the subset declares nothing
        b'<!DOCTYPE rss [<!-- <!ENTITY x SYSTEM "file:///etc/passwd"> -->]>'
        b"<rss><channel><item><title>a</title><link>https://a.test/1</link></item></channel></rss>",
    ],
    ids=["rss-0.91 dtd", "entity in a subset comment"],
)
def test_doctypes_without_entity_declarations_are_read(body: bytes) -> None:
    result = parse_feed(body, url="https://a.test/feed")
    assert not result.fatal
    assert len(result.items) == 1
