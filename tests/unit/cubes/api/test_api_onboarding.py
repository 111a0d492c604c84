"""Self-service onboarding: sign up, claim a host by its URL, verify it on the host's own
scheme and port or by a DNS TXT record answered by a DNS server of the test's own on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

from shared.webmaster.verification import DNS_PREFIX, META_NAME, WELL_KNOWN_PATH
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness, rss

HOST = "shop.partner.test"


async def _signup(api: ApiHarness, name: str = "Shop of Things") -> tuple[str, str]:
    r = await api.client.post("/api/v1/signup", json={"name": name})
    assert r.status == 201, await r.text()
    got = await r.json()
    assert r.headers["Cache-Control"] == "no-store"
    return got["tenant_id"], got["token"]


async def test_a_webmaster_signs_up_and_the_token_is_stored_hashed(tmp_path: Path) -> None:
    """A tenant could be created only with the operator's CLI."""
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await _signup(api)
        assert token.startswith("tc_")
        assert await api.stores.tenants.tenant_for_token(token) == tenant_id
        tenant = await api.stores.tenants.get_tenant(tenant_id)
        assert tenant is not None
        assert tenant.name == "Shop of Things"
        # the token works, and the new tenant has nothing yet
        assert await (await api.client.get("/api/v1/hosts", headers=api.auth(token))).json() == {"hosts": []}
        bad = await api.client.post("/api/v1/signup", json={"name": " ", "email": "x"})
        assert bad.status == 422
        assert {f["field"] for f in (await bad.json())["fields"]} == {"name", "email"}


async def test_sign_up_is_rate_limited_per_address(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, signup_burst=2, signup_per_hour=4.0) as api:
        await _signup(api, "one")
        await _signup(api, "two")
        refused = await api.client.post("/api/v1/signup", json={"name": "three"})
        assert refused.status == 429
        assert refused.headers["Retry-After"] == "900"  # one sign-up per 15 minutes at 4 an hour
        api.clock.advance(900)
        await _signup(api, "three")


def test_sign_up_counts_an_ipv6_client_by_its_64() -> None:
    """Each address of one /64 had its own bucket: a host could sign up 2^64 times as fast."""
    from cubes.api.signup import SignupLimiter
    from shared.clock import ManualClock
    from shared.config import Settings

    limiter = SignupLimiter(Settings().api.model_copy(update={"signup_burst": 1}), ManualClock())
    assert limiter.admit("2001:db8:0:7::1") == 0
    assert limiter.admit("2001:db8:0:7::2") > 0  # the same subscriber's network
    assert limiter.admit("2001:db8:0:8::1") == 0


async def test_sign_up_can_be_turned_off(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, signup_enabled=False) as api:
        r = await api.client.post("/api/v1/signup", json={"name": "x"})
        assert r.status == 403
        assert "api.signup_enabled" in (await r.json())["message"]


async def test_a_host_is_verified_on_its_own_scheme_and_port(tmp_path: Path, partner: PartnerServer) -> None:
    """Verification tried only ports 80 and 443; a site on another port could never be verified."""
    async with ApiHarness(tmp_path) as api:  # no verify_origins override: the claim's own origin is used
        _, token = await _signup(api)
        site = f"http://{HOST}:{partner.port}/"
        claimed = await api.client.post("/api/v1/hosts", json={"url": site}, headers=api.auth(token))
        assert claimed.status == 201, await claimed.text()
        claim = await claimed.json()
        assert (claim["host"], claim["origin"], claim["verified"]) == (HOST, f"http://{HOST}:{partner.port}", False)
        secret = claim["verification_token"]
        assert f"http://{HOST}:{partner.port}{WELL_KNOWN_PATH}" in claim["how_to_verify"]["file"]
        assert f"{DNS_PREFIX}{secret}" in claim["how_to_verify"]["dns"]
        assert (await api.upload(token, rss(1, HOST), host=HOST)).status == 403  # not verified yet

        partner.set(
            HOST,
            "/",
            f'<html><head><meta name="{META_NAME}" content="{secret}"></head></html>',
            headers={"Content-Type": "text/html"},
        )
        got = await (await api.client.post(f"/api/v1/hosts/{HOST}/verify", headers=api.auth(token))).json()
        assert (got["verified"], got["method"]) == (True, "meta"), got
        assert partner.hits(HOST, "/")
        assert (await api.upload(token, rss(1, HOST), host=HOST)).status == 202
        again = await api.client.post("/api/v1/hosts", json={"host": HOST}, headers=api.auth(token))
        assert again.status == 200  # claiming again changes nothing
        assert (await again.json())["verified"] is True


async def test_a_host_is_verified_by_a_dns_txt_record(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await _signup(api)
        claim = await (await api.client.post("/api/v1/hosts", json={"host": HOST}, headers=api.auth(token))).json()
        api.dns.set_txt(HOST, "v=spf1 -all", f"{DNS_PREFIX}somebody-else")
        first = await (await api.client.post(f"/api/v1/hosts/{HOST}/verify", headers=api.auth(token))).json()
        assert first["verified"] is False
        assert first["attempts"][0] == f"DNS TXT {HOST}: a {DNS_PREFIX} record, but not with the token"
        api.dns.set_txt(HOST, "v=spf1 -all", f"{DNS_PREFIX}{claim['verification_token']}")
        got = await (await api.client.post(f"/api/v1/hosts/{HOST}/verify", headers=api.auth(token))).json()
        assert (got["verified"], got["method"]) == (True, "dns")
        assert api.dns.queries[HOST] == 2  # really asked over the wire, once per check


async def test_claims_are_validated(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await _signup(api)
        for body, field in (({"url": "ftp://x.example/"}, "url"), ({}, "url"), ({"host": "bad host!"}, "host")):
            r = await api.client.post("/api/v1/hosts", json=body, headers=api.auth(token))
            assert r.status == 422, body
            assert field in {f["field"] for f in (await r.json())["fields"]}


async def test_a_host_overview_shows_its_rollup_and_waiting_pages(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant(HOST)
        for url in (f"https://{HOST}/p/1", f"https://{HOST}/p/theirs"):
            await api.stores.delay.park(url, 1, b"{}", [f"https://{HOST}/i.png"], api.clock_now(), host=HOST)
        # p/1 is an upload of this tenant's; p/theirs is not (another tenant's page on the host)
        await api.stores.hashes.check_and_set(f"tenant:{tenant_id}", f"https://{HOST}/p/1", "h", now=api.clock_now())
        got = await (await api.client.get(f"/api/v1/hosts/{HOST}", headers=api.auth(token))).json()
        assert got["verified"] is True
        (waiting,) = got["waiting_for_images"]
        assert (waiting["url"], waiting["missing"]) == (f"https://{HOST}/p/1", [f"https://{HOST}/i.png"])
        assert (waiting["state"], waiting["status"]) == ("waiting", "Waiting for images")
        assert got["pages"]["waiting"] == 1
        assert got["rollup"]["feeds"] == 0
        _, other = await api.tenant("other.partner.test")
        assert (await api.client.get(f"/api/v1/hosts/{HOST}", headers=api.auth(other))).status == 403


async def test_an_ip_literal_is_claimed_by_its_url_in_any_spelling(tmp_path: Path) -> None:
    """An IPv6 literal could be claimed by ``host`` but not by URL (the URL's host lost its brackets);
    and ``0x7f000002``, ``2130706434``, ``127.2`` and ``127.0.0.2`` were four hosts, though every
    resolver reads them as one address: a second spelling was a second, unverified claim of it."""
    async with ApiHarness(tmp_path) as api:
        _, token = await _signup(api)
        six = await api.client.post(
            "/api/v1/hosts", json={"url": "http://[2001:DB8::0:1]:8080/x"}, headers=api.auth(token)
        )
        assert six.status == 201, await six.text()
        got = await six.json()
        assert (got["host"], got["origin"]) == ("[2001:db8::1]", "http://[2001:db8::1]:8080")
        by_host = await api.client.post("/api/v1/hosts", json={"host": "[2001:db8::1]"}, headers=api.auth(token))
        assert by_host.status == 200  # the same claim
        hosts = []
        for spelling in ("http://0x7f000002/", "http://2130706434:80/", "http://127.2/", "http://0177.0.0.2/"):
            r = await api.client.post("/api/v1/hosts", json={"url": spelling}, headers=api.auth(token))
            assert r.status in (200, 201), (spelling, await r.text())
            hosts.append((await r.json())["host"])
        assert hosts == ["127.0.0.2"] * 4
        # an IP address has no TXT records of its own: the DNS way is not offered (it said "add a TXT record")
        assert (await r.json())["how_to_verify"]["dns"].startswith("127.0.0.2 is an IP address")
        assert got["how_to_verify"]["dns"].startswith("[2001:db8::1] is an IP address")
        listed = await (await api.client.get("/api/v1/hosts", headers=api.auth(token))).json()
        assert sorted(h["host"] for h in listed["hosts"]) == ["127.0.0.2", "[2001:db8::1]"]
