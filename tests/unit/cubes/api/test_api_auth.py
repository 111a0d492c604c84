"""The auth matrix: no token, bad tokens, revoked tokens, another tenant's hosts, feeds and tasks; admin."""

from __future__ import annotations

from pathlib import Path

import pytest

from cubes.api.auth import TOKEN_CACHE_S
from tests.unit.cubes.api.apikit import ADMIN_TOKEN, ApiHarness, api_settings, rss

TENANT_CALLS = [
    ("GET", "/api/v1/feeds"),
    ("POST", "/api/v1/feeds"),
    ("GET", "/api/v1/feeds/some-id"),
    ("DELETE", "/api/v1/feeds/some-id"),
    ("POST", "/api/v1/uploads?host=a.partner.test&format=rss"),
    ("GET", "/api/v1/uploads/some-id"),
    ("DELETE", "/api/v1/pages?url=https://a.partner.test/"),
    ("GET", "/api/v1/hosts"),
    ("POST", "/api/v1/hosts/a.partner.test/verify"),
]


@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer not-a-token", "Bearer " + "x" * 300],
)
async def test_no_or_bad_token_is_401_with_www_authenticate(tmp_path: Path, header: str | None) -> None:
    async with ApiHarness(tmp_path) as api:
        await api.tenant()
        headers = {} if header is None else {"Authorization": header}
        for method, path in TENANT_CALLS:
            resp = await api.client.request(method, path, headers=headers, data=b"<rss/>")
            assert resp.status == 401, (method, path, resp.status)
            assert resp.headers["WWW-Authenticate"].startswith("Bearer")
            assert (await resp.json())["error"] == "unauthorized"
        assert await api.messages("partner.uploads") == []


async def test_revoked_token_stops_working_within_the_cache_time(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token))).status == 200
        assert await api.stores.tenants.revoke_token(token)
        api.clock.advance(TOKEN_CACHE_S + 0.001)
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token))).status == 401


async def test_another_tenants_host_is_403_and_its_ids_are_404(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token_a = await api.tenant("a.partner.test")
        _, token_b = await api.tenant("b.partner.test")
        # b's objects
        feed = await api.client.post(
            "/api/v1/feeds", json={"url": "https://b.partner.test/f.xml", "format": "rss"}, headers=api.auth(token_b)
        )
        feed_id = (await feed.json())["feed_id"]
        up = await api.upload(token_b, rss(1, "b.partner.test"), host="b.partner.test")
        task_id = (await up.json())["task_id"]

        # a acting on b's host: 403, the host is a public name
        as_a = api.auth(token_a)
        upload = await api.upload(token_a, rss(1), host="b.partner.test")
        assert upload.status == 403
        assert (await upload.json())["error"] == "host_not_owned"
        page = await api.client.delete("/api/v1/pages", params={"url": "https://b.partner.test/x"}, headers=as_a)
        assert page.status == 403
        verify = await api.client.post("/api/v1/hosts/b.partner.test/verify", headers=as_a)
        assert verify.status == 403
        # a asking for b's ids: 404, exactly like ids that do not exist
        for theirs, nobodys in (
            (("GET", f"/api/v1/feeds/{feed_id}"), ("GET", "/api/v1/feeds/does-not-exist")),
            (("DELETE", f"/api/v1/feeds/{feed_id}"), ("DELETE", "/api/v1/feeds/does-not-exist")),
            (("GET", f"/api/v1/uploads/{task_id}"), ("GET", "/api/v1/uploads/does-not-exist")),
        ):
            resp = await api.client.request(*theirs, headers=as_a)
            unknown = await api.client.request(*nobodys, headers=as_a)
            assert resp.status == unknown.status == 404
            assert await resp.json() == await unknown.json()  # the same answer: nothing revealed
        assert (await api.client.get("/api/v1/feeds", headers=as_a)).status == 200
        assert (await (await api.client.get("/api/v1/feeds", headers=as_a)).json())["feeds"] == []
        # b still has everything
        assert (await api.client.get(f"/api/v1/feeds/{feed_id}", headers=api.auth(token_b))).status == 200
        assert (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token_b))).status == 200


async def test_unverified_host_is_403_host_not_verified(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(verified=False)
        resp = await api.upload(token, rss(1))
        assert resp.status == 403
        body = await resp.json()
        assert body["error"] == "host_not_verified"
        assert "verify" in body["message"]
        hosts = await (await api.client.get("/api/v1/hosts", headers=api.auth(token))).json()
        assert hosts["hosts"][0]["verified"] is False
        assert hosts["hosts"][0]["verification_token"]


async def test_admin_routes_need_the_admin_token(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant()
        path = f"/api/v1/admin/limits/{tenant_id}"
        assert (await api.client.get(path)).status == 401
        assert (await api.client.get(path, headers=api.auth(token))).status == 401  # a tenant is not an admin
        ok = await api.client.get(path, headers=api.auth(ADMIN_TOKEN))
        assert ok.status == 200
        assert (await ok.json())["custom"] is False
        assert (await api.client.get("/api/v1/admin/limits/nobody", headers=api.auth(ADMIN_TOKEN))).status == 404


async def test_admin_api_is_off_without_a_configured_hash(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, admin_token_sha256="")
    async with ApiHarness(tmp_path, settings=settings) as api:
        tenant_id, _ = await api.tenant()
        resp = await api.client.get(f"/api/v1/admin/limits/{tenant_id}", headers=api.auth(ADMIN_TOKEN))
        assert resp.status == 403
        assert (await resp.json())["error"] == "admin_disabled"


async def test_openapi_is_public_and_unknown_routes_are_json_404(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        assert (await api.client.get("/api/v1/openapi.json")).status == 200
        missing = await api.client.get("/api/v1/nothing")
        assert missing.status == 404
        assert (await missing.json())["error"] == "not_found"
        wrong = await api.client.put("/api/v1/feeds")
        assert wrong.status == 405
        assert (await wrong.json())["error"] == "method_not_allowed"
