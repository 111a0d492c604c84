"""shared.images.parked: a parked document's template releases to the bytes ``MediaDoc.rewrite`` gives, with no
parse."""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime

import pytest

import shared.images.parked
from shared.images.media import MediaDoc
from shared.images.parked import MAGIC, ParkedPayloadError, park_payload, parked_document, release
from shared.messages import Document, Media, MediaKind, SourceKind, SourceRef
from shared.stores import ImageRecord, ImageStatus

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
NOW = datetime(2026, 1, 2, 3, 9, 0, tzinfo=UTC)
BENCH_HTML = (
    '<figure><img src="https://img.test/1-a.jpg" alt="a"><figcaption>Photo 1</figcaption></figure>'
    "<p>The council met on Monday to discuss the bridge &amp; the budget.</p>"
    '<figure><img src="https://img.test/1-b.jpg" alt="b"></figure>'
)


def doc(html: str, media: list[Media] | None = None) -> Document:
    return Document(
        url="https://news.test/a/b/post.html",
        host="news.test",
        source=SourceRef(kind=SourceKind.rss, id="f1"),
        title="t",
        content_html=html,
        media=media or [],
        content_hash="h",
        version=3,
        seen_at=T0,
        parsed_at=T0,
    )


class Registry:
    """An image registry in memory: canonical URL -> CDN URL (ok) or None (failed for good)."""

    def __init__(self, records: dict[str, str | None]) -> None:
        self.records = {
            url: ImageRecord(url=url, status=ImageStatus.ok, cdn_url=cdn)
            if cdn
            else ImageRecord(url=url, status=ImageStatus.failed)
            for url, cdn in records.items()
        }
        self.queries = 0

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        self.queries += 1
        return {u: self.records[u] for u in urls if u in self.records}


def rewritten(d: Document, registry: Registry) -> Document:
    """What releasing ``d`` gives by the book: a fresh parse and ``MediaDoc.rewrite``."""
    cdn = {u: r.cdn_url for u, r in registry.records.items() if r.cdn_url}
    return MediaDoc(d).rewrite(cdn, media_ready_at=NOW)


@pytest.fixture
def no_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail if the release parses the HTML (builds a ``MediaDoc``) instead of filling the template."""

    def parse(_: Document) -> MediaDoc:
        raise AssertionError("the release parsed the document")

    monkeypatch.setattr(shared.images.parked, "MediaDoc", parse)


def all_cached(d: Document, cdn: str = "/cdn/img/{i:02x}/{i}.jpg") -> Registry:
    return Registry({u: cdn.format(i=i) for i, u in enumerate(MediaDoc(d).refs)})


async def test_all_cached_fills_the_template_without_parsing(no_parse: None) -> None:
    d = doc(BENCH_HTML, media=[Media(url="https://img.test/1-a.jpg"), Media(url="https://img.test/1-b.jpg")])
    registry = all_cached(d)
    payload = park_payload(MediaDoc(d))
    want = rewritten(d, registry)
    got = (await release(payload, registry, NOW)).doc
    assert got.model_dump_json() == want.model_dump_json()
    assert got.content_html == (
        '<figure><img src="/cdn/img/00/0.jpg" alt="a"><figcaption>Photo 1</figcaption></figure>'
        "<p>The council met on Monday to discuss the bridge &amp; the budget.</p>"
        '<figure><img src="/cdn/img/01/1.jpg" alt="b"></figure>'
    )
    assert [m.cdn_url for m in got.media] == ["/cdn/img/00/0.jpg", "/cdn/img/01/1.jpg"]
    assert got.media_ready_at == NOW
    assert registry.queries == 1


async def test_every_kind_of_reference_is_filled_like_the_rewrite(no_parse: None) -> None:
    html = (
        '<p>x</p><img src="a.jpg" srcset="a.jpg 1x, /a2.jpg 2x" alt="A"><img srcset="s1.jpg, s2.jpg 2x">'
        '<picture><source srcset="p.webp" type="image/webp"><img src="p.jpg"></picture>'
        '<video poster="poster.jpg" src="v.webm"><source src="v.mp4" type="video/mp4"></video>'
        '<img src="data:image/png;base64,AAAA"><audio><source src="a.mp3"></audio> tail'
    )
    d = doc(html, media=[Media(url="/m.mp4", kind=MediaKind.video), Media(url="data:x")])
    # every character a verbatim CDN URL may hold: the serializer must write them all unchanged
    registry = all_cached(d, cdn="https://cdn.test/~a-b_c.d/{i}:x?q=1;r=2,3+4@!$()*[]#f%20")
    got = (await release(park_payload(MediaDoc(d)), registry, NOW)).doc
    assert got.model_dump_json() == rewritten(d, registry).model_dump_json()
    assert "data:" not in got.content_html
    assert "a.mp3" not in got.content_html


async def test_a_failed_image_falls_back_to_the_rewrite_and_is_removed() -> None:
    d = doc(BENCH_HTML, media=[Media(url="https://img.test/1-a.jpg"), Media(url="https://img.test/1-b.jpg")])
    registry = Registry({"https://img.test/1-a.jpg": "/cdn/a.jpg", "https://img.test/1-b.jpg": None})
    got = (await release(park_payload(MediaDoc(d)), registry, NOW)).doc
    assert got.model_dump_json() == rewritten(d, registry).model_dump_json()
    assert "1-b.jpg" not in got.content_html
    assert got.content_html.count("<figure>") == 1  # the figure of the failed image went with it
    assert [m.cdn_url for m in got.media] == ["/cdn/a.jpg"]


async def test_a_release_names_what_the_page_goes_without_and_why() -> None:
    """An image that answered 404 was removed from the page and reported nowhere."""
    d = doc(BENCH_HTML, media=[Media(url="https://img.test/1-a.jpg"), Media(url="https://img.test/1-b.jpg")])
    registry = Registry({"https://img.test/1-a.jpg": "/cdn/a.jpg"})
    registry.records["https://img.test/1-b.jpg"] = ImageRecord(
        url="https://img.test/1-b.jpg", status=ImageStatus.failed, reason="http_404"
    )
    done = await release(park_payload(MediaDoc(d)), registry, NOW)
    assert done.lost == {"https://img.test/1-b.jpg": "http_404"}
    # at the deadline, an image still not cached is "late"
    late = await release(park_payload(MediaDoc(d)), Registry({"https://img.test/1-a.jpg": "/cdn/a.jpg"}), NOW)
    assert late.lost == {"https://img.test/1-b.jpg": "late"}
    # all cached: nothing lost
    assert (await release(park_payload(MediaDoc(d)), all_cached(d), NOW)).lost == {}


@pytest.mark.parametrize("cdn", ["/cdn/a.jpg?x=1&y=2", "/cdn/it's.jpg", '/cdn/"q".jpg', "/cdn/a b.jpg", "/cdn/é.jpg"])
async def test_a_cdn_url_the_serializer_would_escape_is_rewritten_not_filled(cdn: str) -> None:
    d = doc('<img src="a.jpg" srcset="a.jpg 1x" alt="say &quot;hi&quot;"><video poster="a.jpg"></video>')
    registry = all_cached(d, cdn=cdn)
    got = (await release(park_payload(MediaDoc(d)), registry, NOW)).doc
    assert got.content_html == rewritten(d, registry).content_html


async def test_a_document_parked_before_templates_is_released_the_old_way() -> None:
    d = doc(BENCH_HTML, media=[Media(url="https://img.test/1-a.jpg")])
    legacy = d.model_dump_json().encode()
    assert not legacy.startswith(MAGIC)
    assert parked_document(legacy) == d
    for registry in (all_cached(d), Registry({"https://img.test/1-a.jpg": "/cdn/a.jpg"})):
        got = (await release(legacy, registry, NOW)).doc
        assert got.model_dump_json() == rewritten(d, registry).model_dump_json()


@pytest.mark.parametrize(
    "html",
    [
        "<p>plain &nbsp; text<wbr></p><p>unclosed <b>bold</p>",  # lxml's normalization is kept
        "",
        "   ",
        "<FIGURE><figcaption>no media left</figcaption></FIGURE><p>x</p>",  # upper case: still a figure
    ],
)
async def test_documents_without_media_release_as_rewritten(html: str, no_parse: None) -> None:
    d = doc(html)
    assert MediaDoc(d).refs == {}
    registry = Registry({})
    got = (await release(park_payload(MediaDoc(d)), registry, NOW)).doc
    assert got.model_dump_json() == rewritten(d, registry).model_dump_json()
    if html.startswith("<FIGURE>"):
        assert got.content_html == "<p>x</p>"


async def test_the_template_equals_the_rewrite_on_generated_documents() -> None:
    """Random mixes of every construct the rewrite treats, each image cached or not."""
    rnd = random.Random(9)
    urls = ["a.jpg", "/b.png", "https://img.test/c.jpg", "//cdn.p.test/d.jpg", "data:x", "", "../e.webp"]

    def attr(name: str) -> str:
        if rnd.random() < 0.4:
            return ""
        if name == "srcset":
            value = ", ".join(f"{rnd.choice(urls)} {rnd.choice(['1x', '2x', ''])}".strip() for _ in range(2))
        else:
            value = rnd.choice(urls)
        return f' {name}="{value}"'

    def node(depth: int) -> str:
        kids = "".join(node(depth + 1) for _ in range(rnd.randint(0, 3))) if depth < 3 else ""
        return rnd.choice(
            [
                "text &amp; more",
                f"<img{attr('src')}{attr('srcset')}>",
                f"<p>{kids}</p>",
                f"<figure>{kids}<figcaption>c</figcaption></figure>",
                f"<picture><source{attr('srcset')}>{kids}</picture>",
                f"<video{attr('src')}{attr('poster')}>{kids}</video>",
                f'<source{attr("src")} type="video/mp4">',
                "</body><p>after</p>",
            ]
        )

    filled = 0
    for _ in range(300):
        d = doc("".join(node(0) for _ in range(4)), media=[Media(url=rnd.choice(urls) or "x.jpg")])
        refs = list(MediaDoc(d).refs)
        failed = set() if rnd.random() < 0.6 else {u for u in refs if rnd.random() < 0.3}
        registry = Registry({u: None if u in failed else f"/cdn/{i}.jpg" for i, u in enumerate(refs)})
        got = (await release(park_payload(MediaDoc(d)), registry, NOW)).doc
        assert got.model_dump_json() == rewritten(d, registry).model_dump_json(), d.content_html
        filled += not failed
    assert filled > 100


async def test_the_token_prefix_never_occurs_in_the_document(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = iter(["0000000000000000", "1111111111111111"])
    monkeypatch.setattr(secrets, "token_hex", lambda _: next(drawn))
    d = doc('<p>tcm0000000000000000-0-</p><img src="a.jpg">')  # the first draw is in the text
    registry = all_cached(d)
    got = (await release(park_payload(MediaDoc(d)), registry, NOW)).doc
    assert got.content_html == '<p>tcm0000000000000000-0-</p><img src="/cdn/img/00/0.jpg">'


@pytest.mark.parametrize(
    "payload",
    [
        MAGIC + b"not json\n{}",
        MAGIC + b'{"prefix": "p", "refs": {}, "html": null}\n{}',
        MAGIC + b'{"prefix": 1, "refs": {}, "html": null, "media": []}\n{}',
        MAGIC + b'{"prefix": "", "refs": {}, "html": "x", "media": []}\n{}',
        MAGIC + b'{"prefix": "p", "refs": {"u": "audio"}, "html": null, "media": []}\n{}',
    ],
)
async def test_a_corrupt_payload_raises_a_named_error(payload: bytes) -> None:
    with pytest.raises(ParkedPayloadError):
        await release(payload, Registry({}), NOW)
