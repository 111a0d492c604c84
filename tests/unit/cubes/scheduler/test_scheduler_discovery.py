"""WebSub discovery (safe, head-only) and push signatures."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from cubes.scheduler.feedhead import read_head
from cubes.scheduler.websub import Discovery, SignatureCheck, discover

RSS = b"""<?xml version="1.0"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
  <title>t</title>
  <atom:link rel="hub" href="https://hub.example/"/>
  <atom:link rel="self" href="https://news.example/feed.xml" type="application/rss+xml"/>
  <item><title>a</title></item>
</channel></rss>"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>t</title>
  <link rel="self" href="https://news.example/atom.xml"/>
  <link rel="hub" href="https://hub.example/"/>
  <entry><title>x</title></entry>
</feed>"""

ITEM_ONLY = b"""<rss xmlns:atom="http://www.w3.org/2005/Atom"><channel>
<atom:link rel="self" href="https://news.example/feed.xml"/>
<item><atom:link rel="hub" href="https://evil.example/"/></item></channel></rss>"""

ENTITY_BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<rss xmlns:atom="http://www.w3.org/2005/Atom"><channel><title>&lol3;</title>
<atom:link rel="hub" href="https://hub.example/"/><atom:link rel="self" href="https://x.example/f"/>
</channel></rss>"""

EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE r [<!ENTITY ext SYSTEM "file:///etc/passwd">]>
<rss xmlns:atom="http://www.w3.org/2005/Atom"><channel>
<atom:link rel="hub" href="&ext;"/><atom:link rel="self" href="https://x.example/f"/></channel></rss>"""


def test_discover_rss() -> None:
    assert discover(read_head(RSS)) == Discovery(hub="https://hub.example/", topic="https://news.example/feed.xml")


def test_discover_atom() -> None:
    assert discover(read_head(ATOM)) == Discovery(hub="https://hub.example/", topic="https://news.example/atom.xml")


def test_discover_link_headers_win() -> None:
    headers = {"link": '<https://h2.example/>; rel="hub", <https://news.example/t>; rel=self'}
    assert discover(read_head(RSS), headers) == Discovery(hub="https://h2.example/", topic="https://news.example/t")


@pytest.mark.parametrize("body", [b"", b"not xml at all", b"<rss><channel><title>t</title></channel></rss>"])
def test_discover_nothing(body: bytes) -> None:
    assert discover(read_head(body)) is None


def test_discover_ignores_item_level_links() -> None:
    assert discover(read_head(ITEM_ONLY)) is None


def test_discover_does_not_expand_entities() -> None:
    # a body that declares entities is skipped whole, as the parser refuses it (shared/xmlguard.py)
    assert discover(read_head(ENTITY_BOMB)) is None
    # libxml2 expands internal entities in attribute values even with resolve_entities off: the hub
    # came back as a thousand "lol"s before the body was skipped
    in_attribute = ENTITY_BOMB.replace(b'href="https://hub.example/"', b'href="https://hub.example/&lol3;"')
    assert discover(read_head(in_attribute)) is None
    # the same links without the DOCTYPE are read as always
    plain = ENTITY_BOMB.split(b"]>", 1)[1].replace(b"&lol3;", b"t")
    assert discover(read_head(plain)) == Discovery(hub="https://hub.example/", topic="https://x.example/f")


def test_discover_never_reads_external_entities() -> None:
    found = discover(read_head(EXTERNAL))
    assert found is None or "root:" not in found.hub


@pytest.mark.parametrize("algo", ["sha1", "sha256", "sha512"])
def test_signature_valid_in_chunks(algo: str) -> None:
    body = b"<feed>" + b"x" * 100_000 + b"</feed>"
    digest = hmac.new(b"s3cret", body, getattr(hashlib, algo)).hexdigest()
    check = SignatureCheck(f"{algo}={digest}", "s3cret")
    for i in range(0, len(body), 4096):
        check.update(body[i : i + 4096])
    assert check.valid()


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "sha256",
        "md5=abcd",
        "sha256=00",
        f"sha256={hmac.new(b'other', b'body', 'sha256').hexdigest()}",
    ],
)
def test_signature_invalid(header: str | None) -> None:
    check = SignatureCheck(header, "s3cret")
    check.update(b"body")
    assert not check.valid()
