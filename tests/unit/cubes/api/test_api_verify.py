"""Host verification against a real partner server on 127.0.0.1 (allowlisted), and the bulkhead."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiohttp import web

from shared.webmaster.verification import META_NAME, WELL_KNOWN_PATH
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness, api_settings, rss

HOST = "site.partner.test"


async def _claim(api: ApiHarness, partner: PartnerServer) -> tuple[str, str, str]:
    """A claim of the partner's own origin: the proof is looked for there and nowhere else."""
    tenant_id, token = await api.tenant(HOST, verified=False, origin=f"http://{HOST}:{partner.port}")
    (claim,) = await api.stores.tenants.hosts_of(tenant_id)
    return tenant_id, token, claim.verification_token


async def test_verification_by_well_known_file_unlocks_the_host(tmp_path: Path, partner: PartnerServer) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token, secret = await _claim(api, partner)
        assert (await api.upload(token, rss(1, HOST), host=HOST)).status == 403

        partner.set(HOST, WELL_KNOWN_PATH, f"{secret}\n", headers={"Content-Type": "text/plain"})
        resp = await api.client.post(f"/api/v1/hosts/{HOST}/verify", headers=api.auth(token))
        assert resp.status == 200
        got = await resp.json()
        assert got["verified"] is True
        assert got["method"] == "file"
        assert len(partner.hits(HOST, WELL_KNOWN_PATH)) == 1  # really fetched, from the partner's side
        assert (await api.upload(token, rss(1, HOST), host=HOST)).status == 202


async def test_verification_by_meta_tag(tmp_path: Path, partner: PartnerServer) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token, secret = await _claim(api, partner)
        partner.set(HOST, WELL_KNOWN_PATH, "nothing here", status=404)
        partner.set(
            HOST,
            "/",
            f'<html><head><meta name="{META_NAME}" content="{secret}"></head><body>hi</body></html>',
            headers={"Content-Type": "text/html"},
        )
        got = await (await api.client.post(f"/api/v1/hosts/{HOST}/verify", headers=api.auth(token))).json()
        assert got["verified"] is True
        assert got["method"] == "meta"
        assert got["attempts"][0].startswith("DNS TXT site.partner.test: no turbocubes-verification=")
        assert "http_4xx" in got["attempts"][1]


async def test_a_wrong_token_does_not_verify(tmp_path: Path, partner: PartnerServer) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token, _ = await _claim(api, partner)
        partner.set(HOST, WELL_KNOWN_PATH, "somebody-elses-token")
        partner.set(HOST, "/", "<html><head></head></html>", headers={"Content-Type": "text/html"})
        got = await (await api.client.post(f"/api/v1/hosts/{HOST}/verify", headers=api.auth(token))).json()
        assert got["verified"] is False
        assert got["method"] is None
        assert any("not with the token" in a for a in got["attempts"])
        assert not (await api.stores.tenants.hosts_of(tenant_id))[0].verified


async def test_the_check_goes_through_the_ssrf_guard(tmp_path: Path, partner: PartnerServer) -> None:
    settings = api_settings(tmp_path).replace(http={"allowlist": []})  # production: no allowlist
    async with ApiHarness(tmp_path, settings=settings) as api:
        _, token, secret = await _claim(api, partner)
        partner.set(HOST, WELL_KNOWN_PATH, secret)
        got = await (await api.client.post(f"/api/v1/hosts/{HOST}/verify", headers=api.auth(token))).json()
        assert got["verified"] is False
        assert all("blocked_address" in a for a in got["attempts"] if not a.startswith("DNS TXT"))
        assert partner.hits(HOST) == []


async def test_the_bulkhead_refuses_requests_over_the_concurrency_cap(tmp_path: Path, partner: PartnerServer) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(request: web.Request) -> web.Response:
        entered.set()
        await release.wait()
        return web.Response(text="nope")

    async with ApiHarness(tmp_path, concurrency=1) as api:
        _, token, _ = await _claim(api, partner)
        partner.set_handler(HOST, WELL_KNOWN_PATH, slow)
        partner.set(HOST, "/", "<html></html>", headers={"Content-Type": "text/html"})
        busy = asyncio.create_task(api.client.post(f"/api/v1/hosts/{HOST}/verify", headers=api.auth(token)))
        async with asyncio.timeout(10):
            await entered.wait()
        refused = await api.client.get("/api/v1/hosts", headers=api.auth(token))
        assert refused.status == 503
        assert refused.headers["Retry-After"] == "1"
        assert (await refused.json())["error"] == "overloaded"
        release.set()
        assert (await busy).status == 200
        assert (await api.client.get("/api/v1/hosts", headers=api.auth(token))).status == 200
