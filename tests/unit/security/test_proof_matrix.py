"""The proof matrix: where a verification token counts, and where it does not (shared/webmaster/verification.py).

Two families, against real partner servers on 127.0.0.1 (two of them: two ports of one host):

* **placement** -- the meta tag counts only as a child of the ``<head>`` an HTML5 parser builds:
  never in the body (a tag after text in the head *is* in the body), ``noscript``, ``template``,
  ``svg``, a comment, a script, an attribute; the file counts only at its path on the claimed
  origin, and a token on another port of the host counts for nothing;
* **redirects** -- a redirect that leaves the claimed origin (another host, port, scheme, or an
  odd spelling of another address) is not followed; one that stays on it is, and the attempt names
  the URL the token was read from.

Each case is told to the verifier as an attacker would set it up, and checked both ways: the token
found where it must be, and only there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

from shared.config import Settings
from shared.http import Fetcher
from shared.webmaster.verification import META_NAME, WELL_KNOWN_PATH, Verifier
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer
from tests.unit.security.conftest import Matrix

HOST = "site.partner.test"
OTHER = "other.partner.test"
TOKEN = "tok-" + "x" * 20
META = f'<meta name="{META_NAME}" content="{TOKEN}">'
HTML = {"Content-Type": "text/html"}


@dataclass(frozen=True)
class Placement:
    name: str
    page: str
    counts: bool


#: home pages, each with the tag somewhere: does it prove the origin?
PLACEMENTS = [
    Placement("in the head", f"<!doctype html><html><head><title>t</title>{META}</head><body>hi</body></html>", True),
    Placement("implied head, before any text", f"<!doctype html>{META}<title>t</title><p>hi", True),
    Placement("between </head> and <body> (the parser puts it back in the head)", f"<head></head>{META}<body>", True),
    Placement("name in capitals", META.replace(META_NAME, META_NAME.upper()) + "<p>x", True),
    Placement("the second of two tags", f'<head><meta name="{META_NAME}" content="old">{META}</head>', True),
    Placement("in the body", f"<html><head><title>t</title></head><body><p>user says</p>{META}</body></html>", False),
    Placement("after text in the head (which opens the body)", f"<html><head>hello {META}</head></html>", False),
    Placement("in a noscript of the head", f"<html><head><noscript>{META}</noscript></head></html>", False),
    Placement("in a template of the head", f"<html><head><template>{META}</template></head></html>", False),
    Placement("in an svg of the head", f"<html><head><svg>{META}</svg></head></html>", False),
    Placement("in a comment", f"<html><head><!-- {META} --></head></html>", False),
    Placement("in a script", f"<html><head><script>var s = '{META}';</script></head></html>", False),
    Placement(
        "in a textarea of the body", f"<html><head></head><body><textarea>{META}</textarea></body></html>", False
    ),
    Placement(
        "in an iframe's srcdoc", f"<html><head></head><body><iframe srcdoc='{META}'></iframe></body></html>", False
    ),
    Placement("in a title", f"<html><head><title>{META}</title></head></html>", False),
    Placement("after the html end", f"<html><head></head><body></body></html>{META}", False),
]


@pytest.fixture
async def second() -> AsyncIterator[PartnerServer]:
    """Another port of the same loopback host: another party's server on the same machine."""
    async with PartnerServer() as server:
        yield server


@pytest.fixture
async def verifier() -> AsyncIterator[Verifier]:
    settings = Settings().replace(http={"allowlist": ["127.0.0.1/32"]})
    v = Verifier(Fetcher(settings, resolver=PartnerResolver()))
    try:
        yield v
    finally:
        await v.close()


async def test_proof_placement(
    partner: PartnerServer, second: PartnerServer, verifier: Verifier, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("proof placement and redirects")
    origin = f"http://{HOST}:{partner.port}"
    wrong = []
    for case in PLACEMENTS:
        partner.set(HOST, WELL_KNOWN_PATH, "", status=404)
        partner.set(HOST, "/", case.page, headers=HTML)
        got = await verifier.check(HOST, TOKEN, origin=origin)
        ok = got.verified is case.counts and (not case.counts or got.attempts[-1].startswith(f"{origin}/: meta"))
        report.case(f"meta tag {case.name}: verified={got.verified}", ok, kind="placement")
        if not ok:
            wrong.append(f"{case.name}: {got}")
    # the file: at its path on the claimed origin only
    partner.set(HOST, "/", "<html><head></head></html>", headers=HTML)
    for label, path, counts in (
        ("the file at its path", WELL_KNOWN_PATH, True),
        ("the file one level up", "/turbocubes-verify.txt", False),
        ("the file under another path", "/user/uploads" + WELL_KNOWN_PATH, False),
    ):
        partner.set(HOST, WELL_KNOWN_PATH, "", status=404)
        partner.set(HOST, path, TOKEN)
        got = await verifier.check(HOST, TOKEN, origin=origin)
        ok = got.verified is counts
        report.case(f"{label}: verified={got.verified}", ok, kind="placement")
        if not ok:
            wrong.append(f"{label}: {got}")
    # another port of the host serves the token: it proves that port, never this one
    partner.set(HOST, WELL_KNOWN_PATH, "", status=404)
    second.set(HOST, WELL_KNOWN_PATH, TOKEN)
    second.set(HOST, "/", f"<head>{META}</head>", headers=HTML)
    got = await verifier.check(HOST, TOKEN, origin=origin)
    ok = not got.verified and not second.hits(HOST)
    report.case("the token on another port of the host: not looked for there", ok, kind="placement")
    there = await verifier.check(HOST, TOKEN, origin=f"http://{HOST}:{second.port}")
    report.case("the same token proves the other port's own origin", there.verified, kind="placement")
    assert ok, got
    assert there.verified, there
    assert wrong == [], "\n".join(wrong)


async def test_proof_redirects(
    partner: PartnerServer, second: PartnerServer, verifier: Verifier, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("proof placement and redirects")
    origin = f"http://{HOST}:{partner.port}"
    # every target serves the token, as a parked domain's or another party's site would
    for host in (OTHER, HOST, "127.0.0.1"):
        partner.set(host, "/token.txt", TOKEN)
        partner.set(host, "/meta.html", f"<head>{META}</head>", headers=HTML)
        second.set(host, "/token.txt", TOKEN)
    cases = [
        ("to another host", f"http://{OTHER}:{partner.port}/token.txt", False),
        ("to another port of the host", f"http://{HOST}:{second.port}/token.txt", False),
        ("to https on the host", f"https://{HOST}:{partner.port}/token.txt", False),
        ("to the host's address spelled as a number", f"http://0x7f000001:{partner.port}/token.txt", False),
        ("to the host's address", f"http://127.0.0.1:{partner.port}/token.txt", False),
        ("to www. of the host", f"http://www.{HOST}:{partner.port}/token.txt", False),
        ("to a path on the same origin", f"{origin}/token.txt", True),
        ("to the same origin spelled in capitals", f"http://{HOST.upper()}:{partner.port}/token.txt", True),
        ("relative, on the same origin", "/token.txt", True),
    ]
    wrong = []
    for label, target, counts in cases:
        partner.set(HOST, "/", "<html><head></head></html>", headers=HTML)
        partner.set(HOST, WELL_KNOWN_PATH, "", status=302, headers={"Location": target})
        got = await verifier.check(HOST, TOKEN, origin=origin)
        found = [a for a in got.attempts if a.endswith("token found")]
        if counts:
            # the attempt names where the token was read, not the URL asked for
            ok = got.verified and found == [f"{origin}/token.txt: token found"]
        else:
            ok = not got.verified and any("another origin" in a and "not followed" in a for a in got.attempts)
        report.case(f"the file redirected {label}: verified={got.verified}", ok, kind="redirects")
        if not ok:
            wrong.append(f"file {label}: {got}")
    # the home page redirected away: a meta tag there proves nothing here
    partner.set(HOST, WELL_KNOWN_PATH, "", status=404)
    for label, target, counts in (
        ("to another host", f"http://{OTHER}:{partner.port}/meta.html", False),
        ("to a page of the same origin", f"{origin}/meta.html", True),
    ):
        partner.set(HOST, "/", "", status=301, headers={"Location": target})
        got = await verifier.check(HOST, TOKEN, origin=origin)
        ok = got.verified is counts and (not counts or got.attempts[-1].startswith(f"{origin}/meta.html: meta"))
        report.case(f"the home page redirected {label}: verified={got.verified}", ok, kind="redirects")
        if not ok:
            wrong.append(f"home {label}: {got}")
    assert not second.hits(HOST, "/token.txt"), "a redirect to another port was followed"
    assert not partner.hits(OTHER), "a redirect to another host was followed"
    assert wrong == [], "\n".join(wrong)
