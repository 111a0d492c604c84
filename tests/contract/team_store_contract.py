"""The team store's contract (users, invitations, named and scoped tokens), run on every engine."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from shared.stores import Stores, open_stores

T0 = datetime(2026, 12, 1, tzinfo=UTC)
HASH = "scrypt$2$1$1$c2FsdA$a2V5"  # the store keeps what it is given: no hashing here


class TeamStoreContract:
    @pytest.fixture
    def store_url(self) -> str:
        raise NotImplementedError("the engine's test module provides store_url")

    @pytest.fixture
    async def stores(self, store_url: str) -> AsyncIterator[Stores]:
        s = await open_stores(store_url, pool_size=4)
        await s.tenants.create_tenant("A", tenant_id="ta", now=T0)
        await s.tenants.create_tenant("B", tenant_id="tb", now=T0)
        yield s
        await s.close()

    async def test_an_invitation_is_good_once_until_it_expires(self, stores: Stores) -> None:
        team = stores.tenants.team
        secret, invitation = await team.invite("ta", "Ed@Example.com", "editor", ttl_s=3600, now=T0)
        assert invitation.login == "ed@example.com"
        assert secret not in repr(await team.invitations("ta"))
        assert await team.invitations("tb") == []
        assert (await team.invitation(secret, now=T0 + timedelta(minutes=59))) == invitation
        assert await team.invitation(secret, now=T0 + timedelta(hours=1)) is None  # expired
        assert await team.accept(secret, HASH, now=T0 + timedelta(hours=2)) is None
        user = await team.accept(secret, HASH, now=T0 + timedelta(minutes=5))
        assert user is not None
        assert (user.tenant_id, user.login, user.role, user.password_hash) == ("ta", "ed@example.com", "editor", HASH)
        assert await team.accept(secret, HASH, now=T0 + timedelta(minutes=6)) is None  # spent
        assert await team.user_by_login("ED@example.com") == user
        [listed] = await team.invitations("ta")
        assert listed.accepted_at == T0 + timedelta(minutes=5)
        assert not listed.open(T0)

    async def test_a_revoked_invitation_opens_nothing_and_is_the_tenants_own(self, stores: Stores) -> None:
        team = stores.tenants.team
        secret, invitation = await team.invite("ta", "viewer-1", "viewer", ttl_s=3600, now=T0)
        assert not await team.revoke_invitation("tb", invitation.invitation_id, now=T0)  # another tenant's
        assert await team.revoke_invitation("ta", invitation.invitation_id, now=T0)
        assert not await team.revoke_invitation("ta", invitation.invitation_id, now=T0)
        assert await team.accept(secret, HASH, now=T0) is None
        assert await team.users("ta") == []

    async def test_a_login_is_one_users_across_tenants(self, stores: Stores) -> None:
        team = stores.tenants.team
        assert await team.add_user("ta", "sam", "owner", HASH, now=T0) is not None
        assert await team.add_user("tb", "SAM", "owner", HASH, now=T0) is None
        secret, _ = await team.invite("tb", "sam", "viewer", ttl_s=60, now=T0)
        assert await team.accept(secret, HASH, now=T0) is None  # taken since it was invited
        assert [u.login for u in await team.users("tb")] == []

    async def test_the_last_owner_stays_an_owner(self, stores: Stores) -> None:
        team = stores.tenants.team
        owner = await team.add_user("ta", "owner@a", "owner", HASH, now=T0)
        editor = await team.add_user("ta", "editor@a", "editor", HASH, now=T0 + timedelta(seconds=1))
        other = await team.add_user("tb", "owner@b", "owner", HASH, now=T0)
        assert owner is not None
        assert editor is not None
        assert other is not None
        assert not await team.set_role("ta", owner.user_id, "editor")
        assert not await team.remove_user("ta", owner.user_id)
        assert not await team.set_role("ta", other.user_id, "viewer")  # another tenant's user: nothing
        assert await team.set_role("ta", editor.user_id, "owner")
        assert await team.set_role("ta", owner.user_id, "viewer")  # another owner now exists
        assert not await team.remove_user("ta", editor.user_id)  # the last owner again
        session_id, _ = await stores.sessions.create_session("ta", ttl_s=60, now=T0, user_id=owner.user_id)
        assert (await stores.sessions.get_session(session_id, now=T0)).user_id == owner.user_id  # type: ignore[union-attr]
        assert await team.remove_user("ta", owner.user_id)
        assert await stores.sessions.get_session(session_id, now=T0) is None  # the session went with them
        assert [(u.login, u.role) for u in await team.users("ta")] == [("editor@a", "owner")]

    async def test_tokens_have_a_name_a_scope_and_a_last_use(self, stores: Stores) -> None:
        team = stores.tenants.team
        legacy = await stores.tenants.issue_token("ta", now=T0)
        token, row = await team.create_token("ta", "deploy bot", "read", now=T0)
        assert token.startswith("tc_")
        assert token != legacy
        grant = await team.grant(token)
        assert grant is not None
        assert (grant.tenant_id, grant.scope, grant.token_id, grant.last_used_at) == ("ta", "read", row.token_id, None)
        await team.touch_token(row.token_id, now=T0 + timedelta(minutes=1))
        await team.touch_token(row.token_id, now=T0 + timedelta(minutes=1, seconds=30))  # within a minute: kept
        assert await stores.tenants.tenant_for_token(token) == "ta"  # one table: the operator's view agrees
        listed = {t.name: t for t in await team.tokens("ta")}
        assert set(listed) == {"tenant token", "deploy bot"}
        assert listed["tenant token"].scope == "owner"
        assert listed["deploy bot"].last_used_at == T0 + timedelta(minutes=1)
        assert token not in repr(listed)
        assert await team.tokens("tb") == []
        assert not await team.revoke_token_id("tb", row.token_id, now=T0)  # another tenant's token
        assert await team.rotate_token("tb", row.token_id, now=T0) is None
        rotated = await team.rotate_token("ta", row.token_id, now=T0 + timedelta(minutes=2))
        assert rotated is not None
        new, new_row = rotated
        assert (new_row.name, new_row.scope) == ("deploy bot", "read")
        assert await team.grant(token) is None  # the old one is revoked
        assert (await team.grant(new)) is not None
        assert await team.revoke_token_id("ta", new_row.token_id, now=T0)
        assert await team.grant(new) is None
        assert await stores.tenants.tenant_for_token(new) is None
        assert [t.name for t in await team.tokens("ta")] == ["tenant token"]
        # the operator's revocation (``hosts revoke``) of the tenant's own token holds for the grant too
        assert await stores.tenants.revoke_token(legacy)
        assert await team.grant(legacy) is None
        assert await team.grant("") is None
