"""Every problem the parse layer finds carries a code of the table (cubes/parser/problems.py)."""

from __future__ import annotations

import pytest

from cubes.parser.documents import prepare_items
from cubes.parser.feed import Limits, parse_feed
from cubes.parser.model import ItemError
from cubes.parser.model import Severity as ItemSeverity
from cubes.parser.problems import to_problem, to_problems
from shared.problems import Severity
from shared.problems.codes import CODES


def rss(*items: str) -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://news.test/</link>'
        + "".join(items)
        + "</channel></rss>"
    ).encode()


def codes_of(body: bytes, *, host: str = "news.test", limits: Limits | None = None) -> list[str]:
    result = parse_feed(body, url="https://news.test/feed.xml", limits=limits)
    _, errs = prepare_items(result.items, feed_host=host)
    return [p.code for p in to_problems([*result.errors, *errs], feed="f1")]


def test_item_identity_problems_have_their_codes() -> None:
    body = rss(
        "<item><title>No link</title></item>",
        "<item><title>Bad</title><link>ftp://news.test/x</link></item>",
        "<item><title>Elsewhere</title><link>https://other.test/x</link></item>",
        "<item><title> </title><link>https://news.test/untitled</link></item>",
        "<item><title>A</title><link>https://news.test/a</link></item>",
        "<item><title>A again</title><link>https://news.test/a</link></item>",
    )
    assert codes_of(body) == [
        "item.no_link",
        "item.bad_link",
        "item.foreign_host",
        "item.no_title",
        "item.duplicate_link",
    ]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"   ", "feed.empty"),
        (b"<html><body><p>hello</p></body></html>", "feed.not_a_feed"),
        (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "b">]><rss><channel></channel></rss>', "xml.hostile"),
        (b"<rss><channel><item><title>broken", "xml.recovered"),
        (b"<rss><<<", "xml.malformed"),
        (b"{not json", "json.invalid"),
    ],
)
def test_feed_level_problems_have_their_codes(body: bytes, code: str) -> None:
    assert code in codes_of(body)


def test_limits_have_their_codes() -> None:
    body = rss(*(f"<item><title>{i}</title><link>https://news.test/{i}</link></item>" for i in range(3)))
    assert codes_of(body, limits=Limits(max_items=2)) == ["item.too_many"]


def test_to_problem_keeps_where_and_uses_the_tables_hint() -> None:
    err = ItemError("boom", 3, 4, 1, "https://news.test/1", ItemSeverity.warning, code="xml.recovered")
    p = to_problem(err, feed="f1")
    assert p.code == "xml.recovered"
    assert p.severity is Severity.warning
    assert (p.where.feed, p.where.item, p.where.link, p.where.line, p.where.column) == (
        "f1",
        1,
        "https://news.test/1",
        3,
        4,
    )
    assert p.hint == CODES["xml.recovered"].hint


def test_a_problem_without_a_code_is_still_reported() -> None:
    assert to_problem(ItemError("?", index=0)).code == "item.unreadable"
    assert to_problem(ItemError("?")).code == "feed.not_readable"
    assert to_problem(ItemError("?", code="made.up")).code == "feed.not_readable"


def test_capped_gives_the_report_cap_gives_building_only_the_kept_problems() -> None:
    from cubes.parser.problems import capped
    from shared.problems import cap

    errors = [
        ItemError("w", 1, None, None, None, ItemSeverity.warning, code="xml.recovered"),
        *(ItemError("e", i, None, i, f"https://news.test/{i}", code="item.no_title") for i in range(5)),
        ItemError("?", 9, None, 7, None),  # no code: reported as item.unreadable
    ]
    assert capped(errors, feed="f1", limit=3) == cap(to_problems(errors, feed="f1"), limit=3)


HOME_PAGE = (
    b"<!DOCTYPE html>\n<html><head><meta charset=utf-8><title>Birds</title>"
    b'<link rel="alternate" type="application/rss+xml" title="News" href="/feed.xml">'
    b'<link rel="alternate" type="application/atom+xml" href="/atom.xml"></head>'
    b"<body><p>Herons<br>egrets &copy; 2026</body></html>"
)


def test_a_home_page_is_not_a_feed_and_names_the_feeds_it_links() -> None:
    # it was [xml.malformed] line 1, column 2: not well-formed XML, with a hint to fix the XML
    result = parse_feed(HOME_PAGE, url="https://birds.example/")
    assert result.fatal
    [err] = result.errors
    assert err.code == "feed.not_a_feed"
    assert err.offers == ("https://birds.example/feed.xml", "https://birds.example/atom.xml")
    assert "https://birds.example/feed.xml (RSS: News)" in err.reason
    assert "Register one of those feeds" in (err.hint or "")
    p = to_problem(err)
    assert p.offers == err.offers
    assert p.as_dict()["offers"] == list(err.offers)


def test_a_page_without_feeds_is_pointed_at_the_usual_paths_and_the_autoparser() -> None:
    result = parse_feed(b"<!doctype html><html><head><title>x</title></head><body><p>a<p>b</body></html>")
    [err] = result.errors
    assert (err.code, err.offers) == ("feed.not_a_feed", ())
    assert "/rss.xml" in (err.hint or "")
    assert "autoparser" in (err.hint or "")
    assert "offers" not in to_problem(err).as_dict()  # every other problem reads as it always did


def test_a_feed_wrapped_in_html_is_still_read() -> None:
    wrapped = b"<html><body><rss version='2.0'><channel><item><title>t</title><link>https://a.example/1</link>"
    wrapped += b"</item></channel></rss></body></html>"
    assert [it.title for it in parse_feed(wrapped).items] == ["t"]
