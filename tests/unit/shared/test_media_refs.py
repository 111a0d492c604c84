"""shared.images.media: finding a document's media and rewriting it to CDN URLs (nothing hotlinked)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shared.images.media import MediaDoc, parse_srcset
from shared.messages import Document, Media, MediaKind, SourceKind, SourceRef

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def doc(html: str = "", media: list[Media] | None = None, url: str = "https://news.test/a/b/post.html") -> Document:
    return Document(
        url=url,
        host="news.test",
        source=SourceRef(kind=SourceKind.rss, id="f1"),
        title="t",
        content_html=html,
        media=media or [],
        content_hash="h",
        version=1,
        seen_at=NOW,
        parsed_at=NOW,
    )


def cdn_for(urls: list[str]) -> dict[str, str]:
    return {u: f"/cdn/img/{i}.jpg" for i, u in enumerate(urls)}


@pytest.mark.parametrize(
    ("srcset", "expected"),
    [
        ("a.jpg 1x, b.jpg 2x", [("a.jpg", "1x"), ("b.jpg", "2x")]),
        ("a.jpg 100w,b.jpg 200w", [("a.jpg", "100w"), ("b.jpg", "200w")]),
        ("a.jpg, b.jpg 2x", [("a.jpg", ""), ("b.jpg", "2x")]),
        # a comma inside a URL is part of it (CDNs with transformations use them)
        ("https://c.test/w_100,h_50/a.jpg 1x", [("https://c.test/w_100,h_50/a.jpg", "1x")]),
        ("  ", []),
    ],
)
def test_parse_srcset(srcset: str, expected: list[tuple[str, str]]) -> None:
    assert parse_srcset(srcset) == expected


def test_refs_cover_every_kind_of_reference_and_resolve_relative_urls() -> None:
    html = """
    <p>intro</p>
    <figure><img src="/img/a.jpg" srcset="a-2x.jpg 2x, //cdn.partner.test/a-3x.jpg 3x">
      <figcaption>c</figcaption></figure>
    <picture><source srcset="../b.webp" type="image/webp"><img src="b.jpg"></picture>
    <video poster="poster.jpg" src="clip.webm"><source src="clip.mp4" type="video/mp4"></video>
    <img src="data:image/png;base64,AAAA"><img src="javascript:alert(1)">
    """
    d = doc(
        html,
        media=[
            Media(url="https://news.test/enclosure.jpg", role="enclosure"),
            Media(url="/movie.mp4", mime="video/mp4", role="enclosure"),
            Media(url="https://shop.test/p.png", role="picture"),
        ],
    )
    refs = MediaDoc(d).refs
    assert refs == {
        "https://news.test/img/a.jpg": MediaKind.image,
        "https://news.test/a/b/a-2x.jpg": MediaKind.image,
        "https://cdn.partner.test/a-3x.jpg": MediaKind.image,
        "https://news.test/a/b.webp": MediaKind.image,
        "https://news.test/a/b/b.jpg": MediaKind.image,
        "https://news.test/a/b/poster.jpg": MediaKind.image,
        "https://news.test/a/b/clip.webm": MediaKind.video,
        "https://news.test/a/b/clip.mp4": MediaKind.video,
        "https://news.test/enclosure.jpg": MediaKind.image,
        "https://news.test/movie.mp4": MediaKind.video,
        "https://shop.test/p.png": MediaKind.image,
    }


def test_rewrite_points_everything_at_the_cdn_when_all_is_cached() -> None:
    html = '<p>x &amp; y</p><img src="a.jpg" srcset="a.jpg 1x, a2.jpg 2x" alt="A"> tail'
    m = MediaDoc(doc(html, media=[Media(url="https://news.test/cover.jpg", role="cover")]))
    cdn = {
        "https://news.test/a/b/a.jpg": "https://cdn.test/img/1.jpg",
        "https://news.test/a/b/a2.jpg": "https://cdn.test/img/2.jpg",
        "https://news.test/cover.jpg": "https://cdn.test/img/3.jpg",
    }
    out = m.rewrite(cdn, media_ready_at=NOW)
    assert out.content_html == (
        '<p>x &amp; y</p><img src="https://cdn.test/img/1.jpg"'
        ' srcset="https://cdn.test/img/1.jpg 1x, https://cdn.test/img/2.jpg 2x" alt="A"> tail'
    )
    assert [x.cdn_url for x in out.media] == ["https://cdn.test/img/3.jpg"]
    assert out.media_ready_at == NOW
    assert out.version == 1
    assert out.title == "t"


def test_rewrite_removes_what_is_not_cached_and_never_hotlinks() -> None:
    html = (
        "<p>a</p>"
        '<figure><img src="gone.jpg"><figcaption>only a caption left</figcaption></figure>'
        '<img src="gone.jpg" srcset="gone.jpg 1x, ok2x.jpg 2x">'
        '<picture><source srcset="gone.webp"><img src="gone.jpg"></picture>'
        '<video poster="ok.jpg"><source src="gone.mp4"></video>'
        '<video src="ok.mp4" poster="gone.jpg"></video>'
        '<img src="data:image/png;base64,AAAA">'
        "<p>b</p>"
    )
    media = [Media(url="https://news.test/gone.jpg"), Media(url="https://news.test/a/b/ok.jpg")]
    m = MediaDoc(doc(html, media=media))
    cdn = {
        "https://news.test/a/b/ok2x.jpg": "/cdn/img/ok2x.jpg",
        "https://news.test/a/b/ok.jpg": "/cdn/img/ok.jpg",
        "https://news.test/a/b/ok.mp4": "/cdn/vid/ok.mp4",
    }
    out = m.rewrite(cdn)
    assert "gone" not in out.content_html
    assert "news.test" not in out.content_html
    assert "data:" not in out.content_html
    assert "figcaption" not in out.content_html  # a figure left without media goes
    assert "<picture" not in out.content_html
    # the img whose src failed shows its cached 2x candidate instead
    assert '<img srcset="/cdn/img/ok2x.jpg 2x" src="/cdn/img/ok2x.jpg">' in out.content_html
    # a video whose only source failed goes even though its poster is cached
    assert out.content_html.count("<video") == 1
    assert '<video src="/cdn/vid/ok.mp4"></video>' in out.content_html
    assert out.content_html.startswith("<p>a</p>")
    assert out.content_html.endswith("<p>b</p>")
    assert [x.cdn_url for x in out.media] == ["/cdn/img/ok.jpg"]


def test_document_without_media_is_unchanged_apart_from_the_stamp() -> None:
    d = doc("<p>plain</p>")
    m = MediaDoc(d)
    assert m.refs == {}
    out = m.rewrite({}, media_ready_at=NOW)
    assert out.content_html == "<p>plain</p>"
    assert out.media_ready_at == NOW


def test_a_url_used_as_image_and_video_is_ordered_as_video() -> None:
    d = doc('<img src="/x.mp4">', media=[Media(url="https://news.test/x.mp4", kind=MediaKind.video)])
    assert MediaDoc(d).refs == {"https://news.test/x.mp4": MediaKind.video}


@pytest.mark.parametrize(
    "url",
    [
        "https://img.test/a/b.jpg",
        "http://img.test/a.jpg?w=100&h=50",
        "https://IMG.test/a.jpg",
        "https://img.test",
        "https://img.test:443/a.jpg",
        "https://img.test:8443/a.jpg",
        "https://img.test/a/../b.jpg",
        "https://img.test/./b.jpg",
        "https://img.test/.well-known/x.png",
        "https://img.test/%7Euser/a%2fb.jpg",
        "https://img.test/a b.jpg",
        "https://img.test/a.jpg#frag",
        "https://img.test/a.jpg?",
        "https://xn--e1afmkfd.xn--p1ai/a.jpg",
        "https://127.0.0.1/a.jpg",
        "https://0x7f.1/a.jpg",
        "https://1.2.3/a.jpg",
        "https://img.test./a.jpg",
        "https://user:pw@img.test/a.jpg",
        "https://img.test/caf\u00e9.jpg",
        "https://img.test/a.jpg?q=\u00e9",
        "https://img_1.test/a-b_c~d.jpg;v=1",
        "https://img.test//double//slash.jpg",
        "https://img.test?q=1",
    ],
)
def test_the_plain_url_shortcut_agrees_with_canonical_url(url: str) -> None:
    from shared.urls import _normalize as canonical_url
    from shared.urls import canonical_url as _canonical

    try:
        expected = canonical_url(url)
    except ValueError:
        with pytest.raises(ValueError, match=r"."):
            _canonical(url)
        return
    assert _canonical(url) == expected


def test_audio_is_neither_ordered_nor_hotlinked() -> None:
    m = MediaDoc(doc('<audio controls><source src="https://news.test/a.mp3"></audio><p>x</p>'))
    assert m.refs == {}
    assert "a.mp3" not in m.rewrite({}).content_html


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>a<br>b</p><!-- <img src=x.jpg> -->", "<p>a<br>b</p><!-- <img src=x.jpg> -->"),
        # tag names are case-insensitive: these are media elements, and go when left empty
        ("<FIGURE><figcaption>c</figcaption></FIGURE><p>x</p>", "<p>x</p>"),
        ('<Picture><SOURCE srcset="a.jpg"></Picture><p>y</p>', "<p>y</p>"),
    ],
)
def test_html_with_and_without_media_elements(html: str, expected: str) -> None:
    m = MediaDoc(doc(html))
    assert m.refs == ({"https://news.test/a/b/a.jpg": MediaKind.image} if "SOURCE" in html else {})
    assert m.rewrite({}).content_html == expected
