"""Formats: Turbo RSS, YML catalogs, Atom 0.3, JSON documents, charsets (cubes.parser.feed)."""

from __future__ import annotations

import io
import json
from datetime import UTC
from pathlib import Path

import feedparser
import orjson
import pytest

from cubes.parser.detect import detect_format, prepare_xml
from cubes.parser.documents import prepare_items
from cubes.parser.feed import Limits, parse_feed
from cubes.parser.jsondoc import PARTNER_SCHEMA_PATH, partner_schema
from cubes.parser.model import DetectedFormat, Severity
from cubes.parser.yml import iter_yml
from shared.webmaster.hosts import scope_for

TURBO = """<?xml version="1.0" encoding="UTF-8"?>
<rss xmlns:yandex="http://news.yandex.ru" xmlns:media="http://search.yahoo.com/mrss/"
     xmlns:turbo="http://turbo.yandex.ru" version="2.0">
  <channel>
    <title>Site</title><link>https://www.site.test/</link>
    <item turbo="true">
      <link>https://site.test/a</link>
      <turbo:source>https://site.test/a?src=turbo</turbo:source>
      <turbo:topic>Topic A</turbo:topic>
      <pubDate>Sun, 26 Jun 2022 00:00:00 +0300</pubDate>
      <turbo:content><![CDATA[
        <header><h1>Heading A</h1><h2>Sub</h2>
          <figure><img src="/img/cover.jpg"></figure></header>
        <p>Body <b>bold</b></p><script>alert(1)</script>
      ]]></turbo:content>
      <yandex:related><link url="https://site.test/b" img="https://site.test/b.jpg">B</link></yandex:related>
    </item>
    <item turbo="false"><link>https://site.test/gone</link></item>
  </channel>
</rss>"""


def test_turbo_items_content_and_deletions() -> None:
    result = parse_feed(TURBO.encode(), url="https://site.test/turbo.xml")
    assert result.format is DetectedFormat.turbo
    assert [d.link for d in result.deletions] == ["https://site.test/gone"]
    [it] = result.items
    assert it.title == "Heading A"  # no <title>: the header's h1
    assert "<h2>Sub</h2>" in it.content_html
    assert "<p>Body <b>bold</b></p>" in it.content_html
    assert it.extra["turbo:source"] == "https://site.test/a?src=turbo"
    assert it.extra["turbo:topic"] == "Topic A"
    assert it.extra["yandex:related"] == ["https://site.test/b"]
    assert it.media[0].role == "cover"
    assert it.media[0].url == "https://site.test/img/cover.jpg"
    assert it.published is not None
    assert it.published is not None
    offset = it.published.utcoffset()
    assert offset is not None
    assert offset.total_seconds() == 3 * 3600  # the source's +0300, kept for the page
    assert it.published.astimezone(UTC).hour == 21  # 00:00 +03:00 is 21:00 UTC the day before
    # www. is the same site only for a tenant that verified both (shared.webmaster.hosts)
    [cand], errors = prepare_items(result.items, feed_host=scope_for("www.site.test", ["site.test", "www.site.test"]))
    assert errors == []
    assert "<script>" not in cand.content_html
    assert "alert" not in cand.content_html
    assert '<header class="tc-head"><h1>Heading A</h1>' in cand.content_html
    # <yandex:related> becomes cards below the content (titles and pictures kept)
    assert cand.content_html.endswith(
        '<aside class="tc-related"><p class="tc-cap">Read also</p><div class="tc-cards">'
        '<a class="tc-card" href="https://site.test/b" rel="noopener noreferrer nofollow ugc">'
        '<img src="https://site.test/b.jpg" alt=""><span>B</span></a></div></aside>'
    )


def test_turbo_samples_keep_content_whole(data_dir: Path) -> None:
    """turbo:content as feedparser keeps it (the oracle), before sanitizing."""
    checked = 0
    for path in sorted((data_dir / "feeds" / "turbo").glob("*.xml")):
        body = path.read_bytes()
        result = parse_feed(body)
        assert not result.fatal, path.name
        oracle = feedparser.parse(io.BytesIO(body))
        if oracle.bozo:
            continue  # the not-well-formed sample: checked below
        refused = sum(e.index is not None for e in result.errors)
        assert len(result.items) + len(result.deletions) + refused == len(oracle.entries), path.name
        for it, e in zip(result.items, oracle.entries, strict=False):
            if e.get("turbo_content"):
                assert " ".join(it.content_html.split()) == " ".join(e["turbo_content"].split()), path.name
                checked += 1
    assert checked >= 4  # the blog's four pages: none of the comparisons may silently vanish


def test_not_well_formed_turbo_sample_is_recovered_with_position(data_dir: Path) -> None:
    body = (data_dir / "feeds" / "turbo" / "turbocubes__soft__undeclared-prefix.xml").read_bytes()
    result = parse_feed(body, url="https://soft.example/turbo.xml")
    assert not result.fatal
    warning = result.feed_error
    assert warning is not None
    assert warning.severity is Severity.warning
    assert (warning.line, warning.column) == (10, 1)  # where <sy:updatePeriod> starts
    assert warning.code == "xml.undeclared_prefix"
    assert "sy" in warning.reason
    assert len(result.items) == 3
    assert all(
        "\u0421\u043a\u0430\u0447\u0430\u0442\u044c" in it.content_html or it.content_html for it in result.items
    )
    assert "Скачать" in result.items[0].content_html  # Cyrillic decoded, not mojibake
    # the file is cut off inside item 4: that item is refused with its line
    [cut] = [e for e in result.errors if e.index is not None]
    assert cut.index == 3
    assert cut.line is not None


def test_turbo_item_without_content_uses_description(data_dir: Path) -> None:
    body = (data_dir / "feeds" / "turbo" / "turbocubes__clinic__no-content.xml").read_bytes()
    result = parse_feed(body)
    assert len(result.items) == 2
    assert all(it.content_html for it in result.items)


def test_limits_refuse_items_with_reasons() -> None:
    items = "".join(
        f"<item><title>T{i}</title><link>https://s.test/{i}</link><description>{'x' * (50 if i else 500)}"
        "</description></item>"
        for i in range(5)
    )
    body = f'<rss version="2.0"><channel><title>c</title>{items}</channel></rss>'.encode()
    result = parse_feed(body, limits=Limits(max_items=3, max_item_bytes=100))
    assert [it.index for it in result.items] == [1, 2]
    reasons = {e.index: e.reason for e in result.errors}
    assert "500 bytes, over the limit of 100" in reasons[0]
    assert "past the limit of 3 items" in reasons[3]
    assert 4 in reasons


YML = """<?xml version="1.0" encoding="windows-1251"?>
<yml_catalog date="2024-01-01 10:00"><shop><name>Shop</name><url>https://shop.test</url>
<currencies><currency id="RUR" rate="1"/></currencies>
<categories><category id="1">Книги</category><category id="2" parentId="1">Детективы</category></categories>
<offers>
<offer id="a1" available="false"><url>https://shop.test/a1</url><price>100</price><oldprice>120</oldprice>
<currencyId>RUR</currencyId><categoryId>2</categoryId><picture>https://shop.test/1.jpg</picture>
<picture>https://shop.test/2.jpg</picture><name>Книга</name><description><![CDATA[<p>Хорошая</p>]]></description>
<param name="Вес" unit="кг">1.5</param></offer>
<offer id="v1" type="vendor.model"><url>https://shop.test/v1</url><price>5</price><currencyId>RUR</currencyId>
<categoryId>1</categoryId><typePrefix>Принтер</typePrefix><vendor>Brother</vendor><model>HL-1110</model></offer>
</offers></shop></yml_catalog>"""


def test_yml_offers_become_products() -> None:
    result = parse_feed(YML.encode("cp1251"))
    assert result.format is DetectedFormat.yml
    a, v = result.items
    assert a.kind == "product"
    assert a.title == "Книга"
    assert a.product == {
        "offer_id": "a1",
        "available": False,
        "price": "100",
        "old_price": "120",
        "currency": "RUR",
        "category": "Детективы",
        # the breadcrumbs: categoryId through parentId, each with its listing page on the shop's site
        "category_path": [
            {"id": "1", "name": "Книги", "url": "https://shop.test/?turbo_category=1"},
            {"id": "2", "name": "Детективы", "url": "https://shop.test/?turbo_category=2"},
        ],
        "params": [{"name": "Вес", "value": "1.5", "unit": "кг"}],
        "shop": "Shop",
    }
    assert [m.url for m in a.media] == ["https://shop.test/1.jpg", "https://shop.test/2.jpg"]
    assert {m.role for m in a.media} == {"picture"}
    assert a.content_html == "<p>Хорошая</p>"
    assert v.title == "Принтер Brother HL-1110"
    assert v.product is not None
    assert v.product["category"] == "Книги"
    assert v.product["vendor"] == "Brother"


def test_yml_samples(data_dir: Path) -> None:
    expected = {
        "stefanitsky": 8,
        "Zverushko": 3,
        "turbocubes": 21,  # ours: 20 offers in windows-1251 (tools) + 1 in a .yml file (soft)
    }
    counted: dict[str, int] = {}
    for path in sorted((data_dir / "feeds" / "yml").glob("*.*ml")):
        result = parse_feed(path.read_bytes())
        assert not result.fatal, path.name
        owner = path.name.split("__")[0]
        counted[owner] = counted.get(owner, 0) + len(result.items)
        assert all(it.product and it.product["offer_id"] for it in result.items)
        assert all(it.title for it in result.items), path.name
    assert counted == expected


def test_yml_is_streamed_with_cleared_elements() -> None:
    offers = "".join(f'<offer id="{i}"><url>https://s.test/{i}</url><name>N{i}</name></offer>' for i in range(50))
    body = f"<yml_catalog><shop><categories/><offers>{offers}</offers></shop></yml_catalog>".encode()
    seen = []
    for item in iter_yml(io.BytesIO(body)):
        assert not isinstance(item, Exception)
        seen.append(item.title)  # type: ignore[union-attr]
    assert seen == [f"N{i}" for i in range(50)]


def test_yml_broken_catalog_keeps_offers_before_the_error() -> None:
    body = (
        b'<yml_catalog><shop><offers><offer id="1"><url>https://s.test/1</url><name>A</name></offer>'
        b'<offer id="2"><url>https://s.test/2</url><name>B</nam></offer></offers></shop></yml_catalog>'
    )
    result = parse_feed(body)
    assert [it.title for it in result.items] == ["A"]
    err = result.feed_error
    assert err is not None
    assert err.line == 1
    assert err.column is not None
    assert "well-formed" in err.reason


ATOM03 = b"""<?xml version="1.0" encoding="utf-8"?>
<feed version="0.3" xmlns="http://purl.org/atom/ns#" xml:base="https://a.test/blog/">
  <title>Atom 0.3</title>
  <link rel="alternate" type="text/html" href="https://a.test/"/>
  <entry>
    <title>First</title>
    <link rel="alternate" type="text/html" href="posts/1"/>
    <id>tag:a.test,2004:1</id>
    <issued>2004-05-01T12:00:00+02:00</issued>
    <modified>2004-05-02T12:00:00Z</modified>
    <author><name>Ann</name></author>
    <content type="text/html" mode="escaped">&lt;p&gt;Hello&lt;/p&gt;</content>
  </entry>
</feed>"""


def test_atom03() -> None:
    result = parse_feed(ATOM03, url="https://a.test/feed")
    assert result.format is DetectedFormat.atom
    assert result.meta.version == "atom03"
    [it] = result.items
    assert it.link == "https://a.test/blog/posts/1"  # xml:base applied
    assert it.published is not None
    assert it.published.isoformat() == "2004-05-01T12:00:00+02:00"  # the same instant, at the source's offset
    assert it.updated is not None
    assert it.updated.isoformat() == "2004-05-02T12:00:00+00:00"
    assert it.author == "Ann"
    assert it.content_html == "<p>Hello</p>"
    assert it.guid == "tag:a.test,2004:1"


RUSSIAN = """<rss version="2.0"><channel><title>Новости города</title><link>http://example.ru/</link>
<item><title>Мэрия объявила о ремонте дорог на центральных улицах</title><link>http://example.ru/1</link>
<description>Ремонт начнётся в понедельник и продлится две недели. Жителей просят объезжать
перекрытые участки.</description></item></channel></rss>"""


@pytest.mark.parametrize("encoding", ["windows-1251", "koi8-r"])
def test_cyrillic_without_declaration_is_detected(encoding: str) -> None:
    body = RUSSIAN.encode(encoding)
    assert prepare_xml(body).how == "detected"
    result = parse_feed(body)
    assert result.items[0].title == "Мэрия объявила о ремонте дорог на центральных улицах"
    assert "понедельник" in result.items[0].content_html


def test_declared_charset_is_used() -> None:
    body = ('<?xml version="1.0" encoding="koi8-r"?>' + RUSSIAN).encode("koi8-r")
    assert (parse_feed(body).items[0].title or "").startswith("Мэрия")


def test_format_detection() -> None:
    assert detect_format(b"\xef\xbb\xbf  <?xml version='1.0'?><!-- c --><rss/>") is DetectedFormat.rss
    assert detect_format(b'<rdf:RDF xmlns:rdf="x"/>') is DetectedFormat.rdf
    assert detect_format(b"<feed/>") is DetectedFormat.atom
    assert detect_format(b'{"version": "https://jsonfeed.org/version/1.1"}') is DetectedFormat.jsonfeed
    assert detect_format(b'{"documents": []}') is DetectedFormat.json
    assert detect_format(b"<html/>") is DetectedFormat.unknown


def test_json_documents_one_bad_one_good() -> None:
    body = orjson.dumps(
        {
            "documents": [
                {
                    "url": "https://p.test/1",
                    "title": "One",
                    "content_html": "<p>x</p>",
                    "product": {"offer_id": "7", "price": "10"},
                },
                {"url": "ftp://p.test/2", "title": "Two"},
                {"url": "https://p.test/3", "action": "delete"},
            ]
        }
    )
    result = parse_feed(body)
    assert [it.link for it in result.items] == ["https://p.test/1"]
    assert result.items[0].kind == "product"
    assert [d.link for d in result.deletions] == ["https://p.test/3"]
    [err] = result.errors
    assert err.index == 1
    assert "url" in err.reason


def test_json_syntax_error_has_position() -> None:
    result = parse_feed(b'{"documents": [\n  {"url": }]}')
    assert result.fatal
    assert result.errors[0].line == 2


def test_partner_schema_file_is_generated_from_the_model() -> None:
    on_disk = json.loads(PARTNER_SCHEMA_PATH.read_text())
    assert on_disk == partner_schema()
    assert "url" in on_disk["required"]


def test_feed_wrapped_in_html_is_read_from_the_inner_root(data_dir: Path) -> None:
    body = (data_dir / "feeds" / "feedjira" / "sample_feeds" / "DuplicateContentAtomFeed.xml").read_bytes()
    result = parse_feed(body)
    assert result.meta.parser == "lxml"
    assert result.format is DetectedFormat.atom
    assert len(result.items) == 10


def test_blank_lines_before_the_declaration_keep_line_numbers() -> None:
    body = (
        b'\n\n<?xml version="1.0"?>\n<rss><channel>\n<item><title>a</title><link>https://a.test/1</link></item>\n'
        b"<item><title>b</title><link>https://a.test/2</link><bad></item>\n</channel></rss>"
    )
    result = parse_feed(body)
    err = result.feed_error
    assert err is not None
    assert err.line == 6  # the line of the mismatched tag in the body as sent
    assert [it.line for it in result.items][:1] == [5]


def test_websub_hub_and_self_link() -> None:
    body = (
        b'<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>t</title>'
        b'<atom:link rel="hub" href="https://hub.test/"/><atom:link rel="self" href="https://a.test/rss"/>'
        b"</channel></rss>"
    )
    meta = parse_feed(body).meta
    assert meta.hub == "https://hub.test/"
    assert meta.self_url == "https://a.test/rss"


def test_json_feed(data_dir: Path) -> None:
    body = (data_dir / "feeds" / "gofeed" / "parser" / "universal" / "json11_feed.json").read_bytes()
    result = parse_feed(body)
    assert result.format is DetectedFormat.jsonfeed
    assert result.items
    assert all(it.link or it.guid for it in result.items)
