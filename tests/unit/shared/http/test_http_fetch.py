"""The guarded fetch against the misbehaving partner server: every failure has its own status."""

from __future__ import annotations

import hashlib
import socket
import tempfile
from collections.abc import AsyncIterator
from email.utils import formatdate
from pathlib import Path

import orjson
import pytest
from aiohttp.abc import ResolveResult

from shared.config import Settings
from shared.http import Fetcher, parse_retry_after
from shared.messages import CrawlKind, FetchStatus
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer

A = "a.partner.test"


@pytest.fixture
async def fetcher(partner_settings: Settings, partner_resolver: PartnerResolver) -> AsyncIterator[Fetcher]:
    settings = partner_settings.replace(http={"allowlist": ["127.0.0.1/32"], "total_timeout_s": 1.0})
    f = Fetcher(settings, resolver=partner_resolver)
    yield f
    await f.close()


async def test_ok_and_user_agent(partner: PartnerServer, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(partner.url(A, "/echo"))
    assert r.status is FetchStatus.ok
    assert r.http_status == 200
    assert r.body is not None
    sent = orjson.loads(r.body)
    assert sent["User-Agent"] == Settings().http.user_agent
    assert "TurbocubesBot" in sent["User-Agent"]
    assert r.size == len(r.body)


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/status/404", FetchStatus.http_4xx, 404),
        ("/status/410", FetchStatus.http_4xx, 410),
        ("/status/500", FetchStatus.http_5xx, 500),
        ("/status/503", FetchStatus.http_5xx, 503),
        ("/retry-after/7", FetchStatus.throttled, 429),
        ("/retry-after/7?code=503", FetchStatus.throttled, 503),
    ],
)
async def test_http_errors(partner: PartnerServer, fetcher: Fetcher, path: str, status: FetchStatus, code: int) -> None:
    r = await fetcher.fetch(partner.url(A, path))
    assert (r.status, r.http_status) == (status, code)
    assert str(code) in (r.error or "")
    if "retry-after" in path:
        assert r.retry_after_s == 7.0


async def test_conditional_get(partner: PartnerServer, fetcher: Fetcher) -> None:
    first = await fetcher.fetch(partner.url(A, "/etag"))
    assert first.status is FetchStatus.ok
    etag, lm = first.headers["etag"], first.headers["last-modified"]
    again = await fetcher.fetch(partner.url(A, "/etag"), etag=etag)
    assert again.status is FetchStatus.not_modified
    assert again.body is None
    by_date = await fetcher.fetch(partner.url(A, "/etag"), last_modified=lm)
    assert by_date.status is FetchStatus.not_modified
    sent = partner.hits(A, "/etag")
    assert sent[1].headers["If-None-Match"] == etag
    assert sent[2].headers["If-Modified-Since"] == lm


async def test_slow_drip_is_cut_off(partner: PartnerServer, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(partner.url(A, "/slow-drip?interval=0.05"))
    assert r.status is FetchStatus.timeout
    assert 0.9 < r.elapsed_s < 3.0  # total_timeout_s = 1.0


async def test_endless_body_is_cut_off(partner: PartnerServer, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(partner.url(A, "/huge"), max_bytes=300_000)
    assert r.status is FetchStatus.too_large
    assert r.body is None
    assert 300_000 < r.size <= 300_000 + 65536


async def test_a_big_body_streams_to_a_file_with_its_sha256(
    partner: PartnerServer, fetcher: Fetcher, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    body = bytes(range(256)) * 12_000  # ~3 MB: past the spill threshold and several disk writes
    partner.set(A, "/catalog.xml", body)
    r = await fetcher.fetch(partner.url(A, "/catalog.xml"), spill_over=100_000)
    assert r.status is FetchStatus.ok
    assert r.body is None
    assert r.size == len(body)
    assert r.body_file is not None
    assert r.body_file.read_bytes() == body
    assert r.body_sha256 == hashlib.sha256(body).hexdigest()
    r.body_file.unlink()
    small = await fetcher.fetch(partner.url(A, "/ok"), spill_over=100_000)
    assert (small.body, small.body_file) == (b"ok", None)


async def test_a_spilled_body_cut_off_leaves_no_file(
    partner: PartnerServer, fetcher: Fetcher, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    r = await fetcher.fetch(partner.url(A, "/huge"), max_bytes=3_000_000, spill_over=100_000)
    assert r.status is FetchStatus.too_large
    assert r.body_file is None
    assert list(tmp_path.iterdir()) == []  # noqa: ASYNC240 - the test's own temporary folder, once


async def test_declared_length_over_limit_is_refused_before_reading(partner: PartnerServer, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(partner.url(A, "/huge?size=10000000&declare=1"), max_bytes=1000)
    assert r.status is FetchStatus.too_large
    assert "Content-Length" in (r.error or "")
    assert r.size == 0


async def test_gzip_bomb_is_bounded_after_decompression(partner: PartnerServer, fetcher: Fetcher) -> None:
    r = await fetcher.fetch(partner.url(A, "/gzip-bomb?mb=16"), max_bytes=1_000_000)
    assert r.status is FetchStatus.too_large
    assert "after decompression" in (r.error or "")
    assert r.size < 2_000_000


def test_limits_by_kind() -> None:
    from shared.http import max_bytes_for

    s = Settings()
    assert max_bytes_for(CrawlKind.feed, s) == 1024 * 1024 * 1024  # a shop's whole catalog: it streams to disk
    assert max_bytes_for(CrawlKind.image, s) == 20 * 1024 * 1024
    assert max_bytes_for(CrawlKind.page, s) == 5 * 1024 * 1024


async def test_redirects(partner: PartnerServer, fetcher: Fetcher) -> None:
    ok = await fetcher.fetch(partner.url(A, "/redirect/5"))
    assert ok.status is FetchStatus.ok
    assert (ok.final_url or "").endswith("/redirect/0")
    assert len(ok.redirects) == 5
    over = await fetcher.fetch(partner.url(A, "/redirect/6"))
    assert over.status is FetchStatus.too_many_redirects
    loop = await fetcher.fetch(partner.url(A, "/redirect-loop"))
    assert loop.status is FetchStatus.redirect_loop
    assert len(partner.hits(A, "/redirect-loop")) == 1  # a Location already seen is not requested again


async def test_redirect_to_a_blocked_address_is_refused(
    partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    # only the partner's *name* is allowlisted: its redirect to a raw loopback / internal address is not
    settings = Settings().replace(http={"allowlist": [A]})
    f = Fetcher(settings, resolver=PartnerResolver({"internal.test": "10.1.2.3"}))
    try:
        for target in (
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/",
            f"http://127.0.0.1:{partner.port}/ok",
            "http://internal.test/",
            "file:///etc/passwd",
        ):
            r = await f.fetch(partner.url(A, f"/redirect-to?url={target}"))
            assert r.status is FetchStatus.blocked_address, target
        assert partner.hits("127.0.0.1") == []  # the loopback target was never contacted
    finally:
        await f.close()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:70/_x",
        "http://a.partner.test/",  # a name resolving to loopback, without the allowlist
    ],
)
async def test_ssrf_refused_without_allowlist(url: str, partner_resolver: PartnerResolver) -> None:
    f = Fetcher(Settings(), resolver=partner_resolver)
    try:
        r = await f.fetch(url)
    finally:
        await f.close()
    assert r.status is FetchStatus.blocked_address, r.error
    assert r.error


async def test_dns_error_and_bad_url(fetcher: Fetcher) -> None:
    assert (await fetcher.fetch("http://nowhere.invalid/")).status is FetchStatus.dns_error
    assert (await fetcher.fetch("http:///nohost")).status is FetchStatus.bad_url
    assert (await fetcher.fetch("http://exa mple.com/")).status in (FetchStatus.bad_url, FetchStatus.dns_error)


class _Rebinding(PartnerResolver):
    """Answers differently each time: the attack the guard's pinning defeats."""

    def __init__(self, answers: list[str]):
        super().__init__()
        self.answers = list(answers)

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        self.calls[host] = self.calls.get(host, 0) + 1
        address = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return [ResolveResult(hostname=host, host=address, port=port, family=socket.AF_INET, proto=0, flags=0)]


async def test_dns_rebinding_connects_to_the_checked_address(partner: PartnerServer) -> None:
    settings = Settings().replace(http={"allowlist": ["127.0.0.1/32"]})
    # first answer allowed, every later one not: a second lookup at connect time would be refused
    resolver = _Rebinding(["127.0.0.1", "127.0.0.2"])
    f = Fetcher(settings, resolver=resolver)
    try:
        r = await f.fetch(partner.url("rebind.test", "/ok"))
    finally:
        await f.close()
    assert r.status is FetchStatus.ok
    assert resolver.calls == {"rebind.test": 1}
    assert len(partner.hits("rebind.test")) == 1


async def test_dns_rebinding_blocked_answer_is_never_connected(partner: PartnerServer) -> None:
    settings = Settings().replace(http={"allowlist": ["127.0.0.1/32"]})
    resolver = _Rebinding(["127.0.0.2", "127.0.0.1"])  # checked answer is blocked, a later one would pass
    f = Fetcher(settings, resolver=resolver)
    try:
        r = await f.fetch(partner.url("rebind.test", "/ok"))
    finally:
        await f.close()
    assert r.status is FetchStatus.blocked_address
    assert partner.hits("rebind.test") == []


def test_parse_retry_after() -> None:
    now = 1_800_000_000.0
    assert parse_retry_after("120", now) == 120.0
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now) == pytest.approx(30.0)
    assert parse_retry_after(formatdate(now - 30, usegmt=True), now) == 0.0
    assert parse_retry_after("10000000", now) == 86_400.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None
    assert parse_retry_after("Mon, 01 Jan 2024 00:10:00", now) is None  # RFC 9110 dates are GMT: no zone, no advice


async def test_origin_headers_never_follow_a_redirect_to_another_origin(
    partner: PartnerServer, fetcher: Fetcher
) -> None:
    """A feed's credentials go to its own origin only: a Location on another host gets none of them."""
    secret = {"Authorization": "Basic c3RhZ2luZzpwdw==", "X-Api-Key": "k1"}
    same = await fetcher.fetch(partner.url(A, "/redirect/1"), origin_headers=secret)
    assert same.status is FetchStatus.ok
    assert [h.headers.get("X-Api-Key") for h in partner.hits(A)] == ["k1", "k1"]  # the same origin: both hops
    away = partner.url("b.partner.test", "/echo")
    moved = await fetcher.fetch(partner.url(A, f"/redirect-to?url={away}"), origin_headers=secret)
    assert moved.status is FetchStatus.ok
    assert moved.final_url == away
    sent = orjson.loads(moved.body or b"{}")
    assert "Authorization" not in sent
    assert "X-Api-Key" not in sent
    assert partner.hits(A)[-1].headers.get("X-Api-Key") == "k1"  # the first hop had them
