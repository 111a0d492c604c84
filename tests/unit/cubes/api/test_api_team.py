"""Team access through the API: tokens with a name, a scope and a last use; users and invitations; roles."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestServer

from cubes.api.auth import TOKEN_CACHE_S
from cubes.api.context import CTX
from tests.unit.cubes.api.apikit import ApiHarness

HOST = "a.partner.test"


async def test_a_tenant_creates_rotates_and_revokes_its_tokens(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, owner = await api.tenant(HOST)
        made = await api.client.post(
            "/api/v1/team/tokens", json={"name": "CI deploy", "scope": "write"}, headers=api.auth(owner)
        )
        assert made.status == 201, await made.text()
        issued = await made.json()
        token, token_id = issued["token"], issued["token_id"]
        assert (issued["name"], issued["scope"], issued["last_used_at"]) == ("CI deploy", "write", None)
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token))).status == 200
        assert isinstance(api.client.server, TestServer)
        ctx = api.client.server.app[CTX].ctx
        assert ctx is not None
        await ctx.auth.settle()  # the last use is written beside the call
        listed = await (await api.client.get("/api/v1/team/tokens", headers=api.auth(owner))).json()
        by_name = {t["name"]: t for t in listed["tokens"]}
        assert set(by_name) == {"tenant token", "CI deploy"}
        assert by_name["CI deploy"]["last_used_at"] is not None  # the call above
        assert token not in str(listed)  # a token is shown once, when made
        # a write token is an editor's: not the team's operations
        refused = await api.client.get("/api/v1/team/tokens", headers=api.auth(token))
        assert (refused.status, (await refused.json())["error"]) == (403, "role_forbids")
        rotated = await api.client.post(f"/api/v1/team/tokens/{token_id}/rotate", headers=api.auth(owner))
        assert rotated.status == 200
        new = (await rotated.json())["token"]
        assert new != token
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token))).status == 401
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(new))).status == 200
        new_id = (await rotated.json())["token_id"]
        gone = await api.client.delete(f"/api/v1/team/tokens/{new_id}", headers=api.auth(owner))
        assert gone.status == 204
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(new))).status == 401
        again = await api.client.delete(f"/api/v1/team/tokens/{new_id}", headers=api.auth(owner))
        assert again.status == 404


async def test_a_token_revoked_elsewhere_stops_within_the_cache_time(tmp_path: Path) -> None:
    """The operator's ``hosts revoke`` (the store's revoke_token) keeps working on the tenant's own token."""
    async with ApiHarness(tmp_path) as api:
        _, owner = await api.tenant(HOST)
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(owner))).status == 200
        assert await api.stores.tenants.revoke_token(owner)
        api.clock.advance(TOKEN_CACHE_S + 0.1)
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(owner))).status == 401


async def test_a_read_token_reads_only(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant, _ = await api.tenant(HOST)
        token, _ = await api.stores.tenants.team.create_token(tenant, "dashboard", "read")
        assert (await api.client.get("/api/v1/feeds", headers=api.auth(token))).status == 200
        feed = {"url": f"https://{HOST}/feed.xml", "format": "rss"}
        resp = await api.client.post("/api/v1/feeds", json=feed, headers=api.auth(token))
        assert (resp.status, (await resp.json())["error"]) == (403, "role_forbids")
        assert await api.stores.feeds.list(tenant) == []


async def test_bad_token_and_invitation_bodies_name_their_field(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, owner = await api.tenant(HOST)
        cases = [
            ("/api/v1/team/tokens", {"name": "", "scope": "read"}, "name"),
            ("/api/v1/team/tokens", {"name": "x", "scope": "admin"}, "scope"),
            ("/api/v1/team/tokens", {"name": "x\n\x07", "scope": "read"}, "name"),
            ("/api/v1/team/invitations", {"login": "a b\x00", "role": "editor"}, "login"),
            ("/api/v1/team/invitations", {"login": "x@y", "role": "god"}, "role"),
        ]
        for path, body, field in cases:
            resp = await api.client.post(path, json=body, headers=api.auth(owner))
            assert resp.status == 422, (body, await resp.text())
            assert (await resp.json())["fields"][0]["field"] == field, body


async def test_invitations_users_and_the_last_owner(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant, owner = await api.tenant(HOST)
        resp = await api.client.post(
            "/api/v1/team/invitations", json={"login": "Ed@Example.test", "role": "editor"}, headers=api.auth(owner)
        )
        assert resp.status == 201
        invited = await resp.json()
        assert invited["login"] == "ed@example.test"
        assert invited["state"] == "open"
        assert "/console/invite?token=tci_" in invited["link"]
        listed = await (await api.client.get("/api/v1/team/invitations", headers=api.auth(owner))).json()
        assert [i["invitation_id"] for i in listed["invitations"]] == [invited["invitation_id"]]
        assert "tci_" not in str(listed)  # the link is shown once
        boss = await api.stores.tenants.team.add_user(tenant, "boss@example.test", "owner", "x")
        assert boss is not None
        demote = await api.client.patch(
            f"/api/v1/team/users/{boss.user_id}", json={"role": "viewer"}, headers=api.auth(owner)
        )
        assert (demote.status, (await demote.json())["error"]) == (409, "last_owner")
        remove = await api.client.delete(f"/api/v1/team/users/{boss.user_id}", headers=api.auth(owner))
        assert (remove.status, (await remove.json())["error"]) == (409, "last_owner")
        users = await (await api.client.get("/api/v1/team/users", headers=api.auth(owner))).json()
        assert [(u["login"], u["role"]) for u in users["users"]] == [("boss@example.test", "owner")]
        revoke = await api.client.delete(
            f"/api/v1/team/invitations/{invited['invitation_id']}", headers=api.auth(owner)
        )
        assert revoke.status == 204
        secret = invited["link"].split("token=")[1]
        assert await api.stores.tenants.team.invitation(secret) is None
