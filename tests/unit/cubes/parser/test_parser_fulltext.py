"""Which items wait for their page's article, and which are checked against it (cubes/parser/fulltext.py).

A summary-only item was published as a one-sentence page with no problem; now its document rides
a page request (the autoparser publishes it with the page's article), per the feed's full_text.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cubes.parser.documents import Candidate, prepare_items, to_document
from cubes.parser.feed import parse_feed
from cubes.parser.fulltext import PageOrders, looks_like_summary
from shared.messages import CrawlRequest, Document, SourceKind, SourceRef
from shared.webmaster.feed_options import FullText

T = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
LONG = " ".join(f"Sentence {i} of a long article tells the story in full detail." for i in range(40))


def _rss(*items: str) -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">'
        f"<channel><title>T</title><link>https://town.example/</link>{''.join(items)}</channel></rss>"
    ).encode()


def _item(n: int, description: str, encoded: str | None = None) -> str:
    body = f"<content:encoded><![CDATA[{encoded}]]></content:encoded>" if encoded else ""
    return f"<item><title>Item {n}</title><link>https://town.example/{n}</link><description>{description}</description>{body}</item>"


def _cands(*items: str) -> list[Candidate]:
    cands, _ = prepare_items(parse_feed(_rss(*items), url="https://town.example/rss").items, feed_host="town.example")
    return cands


def _doc(c: Candidate) -> Document:
    return to_document(c, source=SourceRef(kind=SourceKind.rss, id="f1"), version=1, seen_at=T, parsed_at=T)


def _route(mode: FullText, *items: str) -> list[tuple[str, str]]:
    orders = PageOrders("f1", mode, T)
    out = []
    for c in _cands(*items):
        for o in orders.route(c, _doc(c)):
            msg = o.message
            assert isinstance(msg, CrawlRequest | Document)
            out.append((msg.url, msg.requesters[0] if isinstance(msg, CrawlRequest) else "published"))
    return out


def test_summaries_and_teasers_are_told_from_articles() -> None:
    summary, read_more, article = _cands(
        _item(1, "The council voted to rebuild the bridge."),
        _item(2, "Short", f"<p>{LONG[:200]} [&#8230;]</p>"),
        _item(3, "Short", f"<p>{LONG}</p>"),
    )
    assert summary.summary_only
    assert looks_like_summary(summary)
    assert looks_like_summary(read_more)  # content:encoded, but it ends the way teasers end
    assert not article.summary_only
    assert not looks_like_summary(article)


def test_auto_sends_a_summary_for_its_page_and_checks_one_published_item() -> None:
    routed = _route(
        FullText.auto,
        _item(1, "The council voted to rebuild the bridge."),
        _item(2, "Short", f"<p>{LONG}</p>"),
        _item(3, "Short", f"<p>{LONG}</p>"),
    )
    assert routed == [
        ("https://town.example/1", "fulltext:f1"),  # not published: its page completes it
        ("https://town.example/2", "published"),
        ("https://town.example/2", "parity:f1"),  # the fetch's one parity check
        ("https://town.example/3", "published"),
    ]


def test_the_request_carries_the_items_document_through_the_hosts_lane() -> None:
    (c,) = _cands(_item(1, "The council voted to rebuild the bridge."))
    (out,) = PageOrders("f1", FullText.auto, T).route(c, doc := _doc(c))
    assert out.topic == "crawl.requests"
    assert out.key == "town.example"  # the host's polite lane
    req = out.message
    assert isinstance(req, CrawlRequest)
    assert (req.kind.value, req.url, req.feed_id, req.document) == ("page", doc.url, "f1", doc)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (FullText.never, ["published", "published"]),
        (FullText.always, ["fulltext:f1", "fulltext:f1"]),
    ],
)
def test_never_and_always(mode: FullText, expected: list[str]) -> None:
    routed = _route(mode, _item(1, "A summary."), _item(2, "Short", f"<p>{LONG}</p>"))
    assert [what for _, what in routed] == expected


def test_a_turbo_items_content_is_its_page() -> None:
    (c,) = _cands(_item(1, "The council voted to rebuild the bridge."))
    orders = PageOrders("f1", FullText.auto, T, turbo=True)
    assert [o.topic for o in orders.route(c, _doc(c))] == ["documents.parsed", "crawl.requests"]  # checked only


def test_an_items_page_on_the_feeds_origin_is_fetched_with_the_feeds_credentials() -> None:
    # a staging site behind a password has its pages behind it too; another origin never gets them
    fields = {"credentials": "sealed-token", "timeout_s": 30.0}
    orders = PageOrders("f1", FullText.always, T, fetch_fields=fields, feed_origin="https://town.example")
    home, away = _cands(
        _item(1, "A summary."), _item(2, "A summary.").replace("https://town.example/2", "http://town.example:8080/2")
    )
    (at_home,) = orders.route(home, _doc(home))
    (elsewhere,) = orders.route(away, _doc(away))
    assert isinstance(at_home.message, CrawlRequest)
    assert isinstance(elsewhere.message, CrawlRequest)
    assert (at_home.message.credentials, at_home.message.timeout_s) == ("sealed-token", 30.0)
    assert (elsewhere.message.credentials, elsewhere.message.timeout_s) == (None, None)
