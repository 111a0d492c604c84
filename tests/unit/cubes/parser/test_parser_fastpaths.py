"""The parser's shortcuts give exactly what the long way gives (sanitize, canonical URLs, dates, threads)."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.parser import dates, documents, handler, preparing
from cubes.parser.model import MediaRef
from cubes.parser.sanitize import _plain, sanitize_html
from shared import urls
from shared.blobs import open_blobs
from shared.blobs.base import BlobStore
from shared.messages import CrawlKind, CrawlResult, DocKind, Document, FetchStatus, MediaKind, SourceKind, SourceRef
from shared.offload import OFFLOAD_CHARS
from shared.runtime.cube import Context
from shared.stores import Feed, open_stores
from shared.urls import canonical_url
from shared.webmaster.feed_options import FeedOptions, FullText

T0 = datetime(2026, 3, 1, tzinfo=UTC)

#: the one-regex definition of "plain" text that ``sanitize._plain`` replaced: the oracle
_PLAIN = re.compile(
    r"(?:[^<&]|&(?:[a-zA-Z]{2,8}|#[0-9]{1,6}|#x[0-9a-fA-F]{1,6});"
    r"|</?(?:p|b|i|em|strong|br|ul|ol|li|h[1-6]|blockquote|sub|sup|s|u|small)\s*/?>)*"
)

_PIECES = [
    "text ",
    "Совет ",
    "\n",
    "  ",
    "<",
    ">",
    "&",
    ";",
    "/",
    "=",
    '"',
    "#",
    "x",
    "<p>",
    "</p>",
    "<br/>",
    "<br >",
    "<h1>",
    "</h6>",
    "<h7>",
    "<P>",
    "<p class=x>",
    "<img src=x>",
    "<sub>",
    "<span>",
    "<b/>",
    "< p>",
    "&amp;",
    "&nbsp;",
    "&a;",
    "&abcdefghi;",
    "&#1234;",
    "&#1234567;",
    "&#x1F;",
    "&#xZ;",
    "&#;",
    "&amp",
    "<!-- c -->",
    "<script>x</script>",
    "<\n>",
    "<small\t/>",
]


def _samples(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 12))) for _ in range(n)]


def test_plain_agrees_with_the_one_regex() -> None:
    samples = _samples(20_000, 7)
    plain = [s for s in samples if _plain(s)]
    assert len(plain) > 1000  # both answers are well represented
    assert len(samples) - len(plain) > 1000
    for s in samples:
        assert _plain(s) == bool(_PLAIN.fullmatch(s)), s
    long_plain = "<p>" + "a" * 5000 + "</p>"
    assert _PLAIN.fullmatch(long_plain)
    assert not _plain(long_plain)  # plain but too long: nh3 reads it, as before


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://s.test/a.jpg", "https://s.test/a.jpg"),
        ("http://s.test/a.jpg", "http://s.test/a.jpg"),
        ("/root.jpg", "https://s.test/root.jpg"),
        ("rel/a.jpg", "https://s.test/feed/rel/a.jpg"),
        ("../up.jpg", "https://s.test/up.jpg"),
        ("//cdn.test/a.jpg", "https://cdn.test/a.jpg"),
        ("?q=1&amp;b=2", "https://s.test/feed/?q=1&amp;b=2"),
        ("HTTP://S.TEST/x", "http://S.TEST/x"),
        ("a.jpg?x=1&y=2", "https://s.test/feed/a.jpg?x=1&amp;y=2"),
        ("http:x", None),
        ("", None),
    ],
)
@pytest.mark.parametrize("attr", ["src", "href", "poster"])
def test_sanitize_resolves_relative_urls(attr: str, value: str, expected: str | None) -> None:
    tag = {"src": "img", "href": "a", "poster": "video"}[attr]
    html = f'<p>x="y" said <b>z</b></p><{tag} {attr}="{value}" title="t">v</{tag}>'
    out = sanitize_html(html, "https://s.test/feed/")
    found = re.search(f' {attr}="([^"]*)"', out)
    assert (found.group(1) if found else None) == expected, out


@pytest.mark.parametrize("value", ["mailto:a@s.test", "tel:+1"])
def test_sanitize_keeps_call_and_mail_links(value: str) -> None:
    assert f'<a href="{value}"' in sanitize_html(f'<a href="{value}">x</a>', "https://s.test/feed/")
    assert "<img" not in sanitize_html(f'<img src="{value}">', "https://s.test/feed/")


def test_plain_text_skips_the_cleaner() -> None:
    text = "<p>Plain <b>words</b> &amp; entities</p>"
    assert _plain(text)
    assert sanitize_html(f"  {text} ") == text


@pytest.mark.parametrize(
    "url",
    [
        "http://a.test:8080/x",
        "http://a.test:8080",
        "https://a.test:8443/?q=1",
        "http://a.test:65535/",
        "https://www.a.test/x/y?z=1",
        "http://a.test:443/x",
    ],
)
def test_canonical_fast_path_takes_plain_ports(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = canonical_url(url)

    def no_slow_path(u: str) -> str:
        raise AssertionError(f"slow path for {u}")

    monkeypatch.setattr(urls, "_normalize", no_slow_path)
    urls._canonical_url_cached.cache_clear()
    assert canonical_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://a.test:80/x",
        "https://a.test:443/",
        "http://a.test:65536/",
        "http://a.test:08080/",
        "http://A.test:8080/",
    ],
)
def test_canonical_slow_path_for_ports_it_rewrites(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    normalize = urls._normalize

    def slow(u: str) -> str:
        seen.append(u)
        return normalize(u)

    monkeypatch.setattr(urls, "_normalize", slow)
    urls._canonical_url_cached.cache_clear()
    try:
        result: str | None = canonical_url(url)
    except ValueError:
        result = None
    assert seen == [url]
    assert result == (None if url.endswith(":65536/") else normalize(url))


def test_canonical_caches_short_urls_only() -> None:
    urls._canonical_url_cached.cache_clear()
    url = "https://s.test/story/1"
    assert canonical_url(url) == canonical_url(url) == url
    assert urls._canonical_url_cached.cache_info().hits == 1
    long_url = "https://s.test/" + "a" * 3000
    assert canonical_url(long_url) == long_url
    assert urls._canonical_url_cached.cache_info().currsize == 1
    with pytest.raises(ValueError, match="scheme"):
        canonical_url("ftp://s.test/x")  # errors are raised every time, never cached
    with pytest.raises(ValueError, match="scheme"):
        canonical_url("ftp://s.test/x")


def test_dates_cached_by_text_and_long_text_not_kept() -> None:
    dates._parse_cached.cache_clear()
    first = dates.parse_date("Mon, 30 Nov 2026 05:05:00 GMT")
    assert first is not None
    assert first.isoformat() == "2026-11-30T05:05:00+00:00"
    assert dates.parse_date("Mon, 30 Nov 2026 05:05:00 GMT") is first
    assert dates._parse_cached.cache_info().hits == 1
    padded = " " * 500 + "2026-11-30T05:05:00Z" + " " * 500
    assert dates.parse_date(padded) == first  # still read
    assert dates._parse_cached.cache_info().currsize == 1  # but not kept
    assert dates.parse_date("not a date") is None
    assert dates.parse_date("not a date") is None


def test_document_kinds_from_their_values() -> None:
    cand = documents.Candidate(
        url="https://s.test/p",
        host="s.test",
        title="P",
        content_hash="xxh3:0",
        index=0,
        kind="product",
        media=[MediaRef("https://s.test/v.mp4", "video")],
    )
    ref = SourceRef(kind=SourceKind.yml, id="f1")
    doc = documents.to_document(cand, source=ref, version=1, seen_at=T0, parsed_at=T0)
    assert doc.kind is DocKind.product
    assert doc.media[0].kind is MediaKind.video
    cand.media[0].kind = "audio"
    with pytest.raises(ValueError, match="audio"):
        documents.to_document(cand, source=ref, version=1, seen_at=T0, parsed_at=T0)


# --------------------------------------------------------------------------- where the handler prepares items


@pytest.fixture
async def parser(tmp_path: Path) -> AsyncIterator[handler.ParserHandler]:
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    blobs = await open_blobs(f"file://{tmp_path}/blobs")
    # the items' own text is their page: where they are prepared is the question (cubes/parser/fulltext.py)
    never = FeedOptions(full_text=FullText.never).to_json()
    feed = Feed(feed_id="f1", url="https://news.test/f1.xml", host="news.test", format="rss", options=never)
    await stores.feeds.upsert_feed(feed)

    async def get_blobs() -> BlobStore:
        return blobs

    try:
        yield handler.ParserHandler(stores, get_blobs)
    finally:
        await stores.close()
        await blobs.close()


def _rss(count: int, paragraph_bytes: int) -> bytes:
    text = "<p>" + "word " * (paragraph_bytes // 5) + "</p>"
    items = "".join(
        f"<item><title>Story {n}</title><link>https://news.test/story/{n}</link>"
        f'<description><![CDATA[{text}<img src="/img/{n}.jpg">]]></description></item>'
        for n in range(count)
    )
    return f'<rss version="2.0"><channel><title>News</title>{items}</channel></rss>'.encode()


@pytest.mark.parametrize(
    ("count", "paragraph_bytes", "off_loop"),
    [
        (100, 1000, False),  # an ordinary news feed: on the loop
        (300, 100, True),  # many items
        (5, 80_000, True),  # few items, but a big body: sanitizing costs by the byte
    ],
)
async def test_where_items_are_prepared(
    parser: handler.ParserHandler, monkeypatch: pytest.MonkeyPatch, count: int, paragraph_bytes: int, off_loop: bool
) -> None:
    threads: list[int] = []
    sizes: list[int] = []
    real = documents.prepare_items

    def spy(*args, **kw):  # type: ignore[no-untyped-def]
        threads.append(threading.get_ident())
        sizes.append(sum(preparing.weight(it) for it in args[0]))
        return real(*args, **kw)

    monkeypatch.setattr(preparing, "prepare_items", spy)
    body = _rss(count, paragraph_bytes)
    assert (len(body) > handler._THREAD_BYTES) == (paragraph_bytes > 1000)
    msg = CrawlResult(
        kind=CrawlKind.feed,
        url="https://news.test/f1.xml",
        host="news.test",
        status=FetchStatus.ok,
        body=body,
        feed_id="f1",
        content_type="application/rss+xml",
        fetched_at=T0,
    )
    out = await parser.handle(
        msg, Context(topic="crawl.feeds", partition=0, offset=0, key=None, attempt=1, received_at=T0)
    )
    # on the loop, in chunks of at most 16 KB of HTML with a turn of the loop between them; off it, at once
    assert all((t != threading.get_ident()) is off_loop for t in threads)
    if off_loop:
        assert len(threads) == 1
    else:
        assert len(threads) > 1
        assert max(sizes) <= OFFLOAD_CHARS
    docs = [o.message for o in out if isinstance(o.message, Document)]
    assert len(docs) == count
    assert [m.url for m in docs[-1].media] == [f"https://news.test/img/{count - 1}.jpg"]


#: the case-insensitive regex ``blocks._has_marker`` replaced: the oracle
_MARKERS_REGEX = re.compile(r"data-block=|<button|<menu|itemscope|<form|<iframe|<video|data-turbo-ad-id", re.I)
_MARKER_PIECES = [
    *("data-block=", "<button", "<menu", "itemscope", "<form", "<iframe", "<video", "data-turbo-ad-id"),
    *("DATA-BLOCK=", "<IFrame", "<VIDEO", "ItemScope", "Data-Turbo-Ad-Id", "<Form"),
    *("<p>", "text ", "Совет ", "data-", "<butto", "<men", "item", "scope", "<i", "frame", "<", "=", "\n"),
]


def test_block_markers_agree_with_the_one_regex() -> None:
    from cubes.parser.blocks import _has_marker

    rnd = random.Random(7)
    for _ in range(3000):
        fragment = "".join(rnd.choice(_MARKER_PIECES) for _ in range(rnd.randint(0, 8)))
        assert _has_marker(fragment) is (_MARKERS_REGEX.search(fragment) is not None), fragment


@pytest.mark.parametrize(
    "params",
    [
        [{"name": "Color", "value": "red", "unit": None}, {"name": "Weight", "value": "9.5", "unit": "kg"}],
        [{"name": "Color", "value": None, "unit": None}],
        [{"name": "Color", "value": "red"}],
        [{"name": "Color", "unit": "kg"}],
        [{"name": "Color", "value": "red", "unit": None}, {"name": "Size", "value": "", "unit": None}],
        [],
        None,
    ],
)
def test_product_params_taken_as_they_are_when_in_shape(params: list[dict[str, str | None]] | None) -> None:
    from shared.messages import Product

    data: dict[str, object] = {"offer_id": "o1", "price": "10"}
    if params is not None:
        data["params"] = params
    slow = {
        **{k: v for k, v in data.items() if k != "params"},
        "params": [{"name": p["name"], "value": p.get("value") or "", "unit": p.get("unit")} for p in params or ()],
    }
    shaped = documents._product(data)
    assert shaped is not None
    assert Product.model_validate(shaped) == Product.model_validate(slow)


async def test_a_gzip_body_is_inflated_and_parsed_off_the_loop(
    parser: handler.ParserHandler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A gzip bomb is a small body: it was inflated (up to parser.max_body_bytes) on the loop, ~0.4 s of it
    held for 60 MB of spaces (bench/hostile.py); zlib lets the GIL go, so a thread keeps the loop free."""
    import gzip

    from cubes.parser import feed

    threads: list[int] = []
    real = feed.parse_feed

    def spy(*args, **kw):  # type: ignore[no-untyped-def]
        threads.append(threading.get_ident())
        return real(*args, **kw)

    monkeypatch.setattr(handler, "parse_feed", spy)
    plain = _rss(3, 100)
    for body, off_loop in ((plain, False), (gzip.compress(plain), True)):
        assert len(body) < handler._THREAD_BYTES
        msg = CrawlResult(
            kind=CrawlKind.feed,
            url="https://news.test/f1.xml",
            host="news.test",
            status=FetchStatus.ok,
            body=body,
            feed_id="f1",
            content_type="application/rss+xml",
            fetched_at=T0,
        )
        ctx = Context(topic="crawl.feeds", partition=0, offset=0, key=None, attempt=1, received_at=T0)
        out = await parser.handle(msg, ctx)
        assert len([o for o in out if o.topic == "documents.parsed"]) == 3, off_loop  # the same feed, read
        assert (threads.pop() != threading.get_ident()) is off_loop
