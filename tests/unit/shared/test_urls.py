"""``canonical_url``: a table of tricky URLs (docs/architecture.md section 5: one key per document)."""

from __future__ import annotations

import pytest

from shared.urls import MAX_URL_LENGTH, canonical_host, canonical_url, host_of, resolve_url, try_canonical_url

CASES = [
    # scheme and host case, default ports, fragments
    ("HTTP://Example.COM/Path", "http://example.com/Path"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:80/a", "http://example.com/a"),
    ("http://example.com:443/a", "http://example.com:443/a"),
    ("https://example.com:8443/a", "https://example.com:8443/a"),
    ("http://example.com:/a", "http://example.com/a"),
    ("http://example.com:0080/", "http://example.com/"),
    ("https://example.com/a#section-2", "https://example.com/a"),
    ("https://example.com/a?b=1#frag?x", "https://example.com/a?b=1"),
    # empty path, empty query, trailing dot
    ("https://example.com", "https://example.com/"),
    ("https://example.com?", "https://example.com/"),
    ("https://example.com?q", "https://example.com/?q"),
    ("https://example.com./x", "https://example.com/x"),
    # dot segments (also percent-encoded dots)
    ("https://example.com/a/./b/../c", "https://example.com/a/c"),
    ("https://example.com/../../x", "https://example.com/x"),
    ("https://example.com/a/b/..", "https://example.com/a/"),
    ("https://example.com/a/.", "https://example.com/a/"),
    ("https://example.com/a/%2e%2E/b", "https://example.com/b"),
    ("https://example.com/a//b", "https://example.com/a//b"),
    # percent-encoding: unreserved decoded, hex upper-cased, reserved kept, raw unsafe encoded
    ("https://example.com/%7euser/%41", "https://example.com/~user/A"),
    ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
    ("https://example.com/a%2Fb?x=%2f%3d", "https://example.com/a%2Fb?x=%2F%3D"),
    ("https://example.com/a b", "https://example.com/a%20b"),
    ("https://example.com/ü?ä=ö", "https://example.com/%C3%BC?%C3%A4=%C3%B6"),
    ("https://example.com/%C3%BC", "https://example.com/%C3%BC"),
    ("https://example.com/100%", "https://example.com/100%25"),
    ("https://example.com/%zz", "https://example.com/%25zz"),
    ('https://example.com/a"<>`{}|^', "https://example.com/a%22%3C%3E%60%7B%7D%7C%5E"),
    ("https://example.com/p;a=1,b@c:d!$'()*+", "https://example.com/p;a=1,b@c:d!$'()*+"),
    ("https://example.com/?q=a+b&r=c/d?e", "https://example.com/?q=a+b&r=c/d?e"),
    ("https://example.com/?b=2&a=1", "https://example.com/?b=2&a=1"),  # query order is kept
    ("https://example.com/?q=a%20b", "https://example.com/?q=a%20b"),
    # backslashes, whitespace, tabs and newlines as browsers read them
    ("https://example.com\\a\\b", "https://example.com/a/b"),
    ("https://example.com/a?b\\c", "https://example.com/a?b%5Cc"),
    ("  https://example.com/a \n", "https://example.com/a"),
    ("https://exa\tmple.com/a\nb", "https://example.com/ab"),
    ("https:////example.com/a", "https://example.com/a"),
    # host confusion tricks resolve the way browsers resolve them
    ("http://good.example\\@evil.example/", "http://good.example/@evil.example/"),
    ("http://evil.example#@good.example/", "http://evil.example/"),
    ("http://evil.example?@good.example/", "http://evil.example/?@good.example/"),
    # internationalized hosts
    ("https://Пример.РФ/путь", "https://xn--e1afmkfd.xn--p1ai/%D0%BF%D1%83%D1%82%D1%8C"),
    ("https://straße.de/", "https://xn--strae-oqa.de/"),
    ("https://xn--e1afmkfd.xn--p1ai/", "https://xn--e1afmkfd.xn--p1ai/"),
    ("https://%D0%BF%D1%80%D0%B8%D0%BC%D0%B5%D1%80.%D1%80%D1%84/", "https://xn--e1afmkfd.xn--p1ai/"),
    ("https://\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com/", "https://example.com/"),  # full-width (UTS 46)
    ("https://my_host.example.com/", "https://my_host.example.com/"),
    # IP addresses
    ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
    ("http://[2001:DB8:0:0::1]/", "http://[2001:db8::1]/"),
    ("http://[::1]:80/", "http://[::1]/"),
]


@pytest.mark.parametrize(("raw", "expected"), CASES)
def test_canonical_url(raw: str, expected: str) -> None:
    assert canonical_url(raw) == expected


@pytest.mark.parametrize(("raw", "expected"), CASES)
def test_canonical_url_is_idempotent(raw: str, expected: str) -> None:
    assert canonical_url(expected) == expected


BAD = [
    ("", "empty"),
    ("   ", "empty"),
    ("example.com/a", "no scheme"),
    ("/relative/path", "no scheme"),
    ("//example.com/a", "no scheme"),
    ("ftp://example.com/a", "unsupported URL scheme 'ftp'"),
    ("javascript:alert(1)", "unsupported URL scheme 'javascript'"),
    ("data:text/html,hi", "unsupported URL scheme 'data'"),
    ("mailto:a@example.com", "unsupported URL scheme 'mailto'"),
    ("http:example.com", "no host"),
    ("http://", "no host"),
    ("http:///", "no host"),
    ("http://user:pass@example.com/", "credentials"),
    ("http://@example.com/", "credentials"),
    ("http://example.com:99999/", "port 99999 out of range"),
    ("http://example.com:8o/", "invalid port"),
    ("http://exa mple.com/", "invalid host name"),
    ("http://exa<mple.com/", "invalid host name"),
    ("http://[::1/", "unterminated IPv6"),
    ("http://[::g]/", "invalid IPv6"),
    ("http://999.1.1.1/", "invalid IPv4"),
    ("http://xn--a.com/", "invalid internationalized host"),
    ("http://%ff.com/", "invalid percent-encoding in host"),
    ("http://a.example/" + "x" * MAX_URL_LENGTH, "longer than"),
]


@pytest.mark.parametrize(("raw", "reason"), BAD)
def test_unusable_urls_say_why(raw: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason.replace("(", r"\(").replace("[", r"\[")):
        canonical_url(raw)
    assert try_canonical_url(raw) is None


def test_non_string_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        canonical_url(b"http://a/")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Example.com:8443/a", "example.com"),
        ("https://пример.рф", "xn--e1afmkfd.xn--p1ai"),
        ("http://[2001:db8::1]:81/", "[2001:db8::1]"),
        ("http://127.0.0.1/", "127.0.0.1"),
    ],
)
def test_host_of(url: str, host: str) -> None:
    assert host_of(url) == host


def test_canonical_host() -> None:
    assert canonical_host("News.Example.") == "news.example"
    assert canonical_host("пример.рф") == "xn--e1afmkfd.xn--p1ai"
    with pytest.raises(ValueError, match="no host"):
        canonical_host("")


@pytest.mark.parametrize(
    ("base", "ref", "expected"),
    [
        ("https://a.example/news/1", "../img/x.jpg", "https://a.example/img/x.jpg"),
        ("https://a.example/news/1", "//cdn.example/x.jpg", "https://cdn.example/x.jpg"),
        ("https://a.example/news/1", " /a b ", "https://a.example/a%20b"),
        ("https://a.example/news/1", "?page=2", "https://a.example/news/1?page=2"),
        ("https://a.example/news/1", "HTTP://B.example:80", "http://b.example/"),
    ],
)
def test_resolve_url(base: str, ref: str, expected: str) -> None:
    assert resolve_url(base, ref) == expected


def test_resolve_url_refuses_other_schemes() -> None:
    with pytest.raises(ValueError, match="javascript"):
        resolve_url("https://a.example/", "javascript:alert(1)")


@pytest.mark.parametrize(
    ("spelling", "address"),
    [
        ("0x7f000002", "127.0.0.2"),
        ("0X7F000002", "127.0.0.2"),
        ("2130706434", "127.0.0.2"),
        ("127.2", "127.0.0.2"),
        ("127.0.2", "127.0.0.2"),
        ("0177.0.0.2", "127.0.0.2"),
        ("0x7f.0.0.0x2", "127.0.0.2"),
        ("127.0.0.2.", "127.0.0.2"),
        ("0", "0.0.0.0"),
    ],
)
def test_a_host_that_ends_in_a_number_is_one_ipv4_address_in_any_spelling(spelling: str, address: str) -> None:
    """Resolvers (``inet_aton``) and browsers (WHATWG) read these as one address; so do we."""
    assert canonical_host(spelling) == address
    assert canonical_url(f"http://{spelling}:8080/p") == f"http://{address}:8080/p"


@pytest.mark.parametrize("spelling", ["1.2.3.4.5", "256.0.0.1", "1.256.0.0.1", "0x100000000", "08.0.0.1", "a.0x7f"])
def test_a_host_that_ends_in_a_number_but_is_no_address_is_refused(spelling: str) -> None:
    with pytest.raises(ValueError, match="invalid IPv4 address"):
        canonical_host(spelling)
