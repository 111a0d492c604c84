"""Team access: a tenant's users, invitations and API tokens, one service for the API and the console
(docs/architecture.md section 6, "Team access").

Who may call these is ``shared.webmaster.access.permit`` with ``Need.TEAM`` (owners only), asked by each door
before it calls here; this module keeps the rules of the objects themselves:

* an invitation names a login -- an e-mail address or a name, what the user will sign in with --
  and a role; its link's secret is returned once, good once, for ``INVITE_TTL_S``;
* accepting it sets the user's password (``shared.passwords``: scrypt) and creates the user;
* a user's role changes, or the user is removed, unless that leaves the tenant without an owner
  (``last_owner``): the last owner cannot remove or demote themselves;
* a token has a name and a scope (``read``, ``write``, ``owner``: ``shared.webmaster.access.ROLE_OF_SCOPE``);
  it is created, rotated (revoked and issued again with the same name and scope) and revoked by the
  tenant. Another tenant's user, invitation or token answers ``not_found``, as an unknown id does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from shared import passwords
from shared.errors import TurbocubesError
from shared.stores.team import ApiToken, Invitation, TeamStore, User
from shared.webmaster.access import ROLE_OF_SCOPE, AccessRefused, Role

__all__ = ["INVITE_TTL_S", "SCOPES", "Team", "TeamRefused", "invite_link"]

#: a week: long enough to be read after a weekend, short enough that a forgotten link dies
INVITE_TTL_S = 7 * 86_400
SCOPES = tuple(ROLE_OF_SCOPE)
#: a login is an e-mail address or a name: printable, no spaces at its ends, at most an address's length
_LOGIN = re.compile(r"^[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]{0,252}[^\s\x00-\x1f\x7f]$|^[^\s\x00-\x1f\x7f]$")
_NAME_MAX = 80


def invite_link(public_url: str, secret: str) -> str:
    """The console page that accepts an invitation (``frontend.public_url``)."""
    return f"{public_url.rstrip('/')}/console/invite?token={secret}"


class TeamRefused(TurbocubesError):
    """Input the team's rules refuse: ``field`` names what, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _login(value: str) -> str:
    value = value.strip()
    if not _LOGIN.match(value):
        raise TeamRefused("login", "a login is an e-mail address or a name of 1 to 254 printable characters")
    return value.lower()


def _role(value: str) -> Role:
    try:
        return Role(value)
    except ValueError:
        raise TeamRefused("role", f"a role is one of {', '.join(Role)}") from None


@dataclass(frozen=True, slots=True)
class Team:
    store: TeamStore

    async def invite(self, tenant_id: str, login: str, role: str, now: datetime) -> tuple[str, Invitation]:
        """A new invitation and its link's secret (shown once)."""
        login, grade = _login(login), _role(role)
        if await self.store.user_by_login(login) is not None:
            raise TeamRefused("login", f"{login} is somebody's login already")
        return await self.store.invite(tenant_id, login, grade, ttl_s=INVITE_TTL_S, now=now)

    async def accept(self, secret: str, password: str, now: datetime) -> User:
        """The user the invitation of ``secret`` makes; ``TeamRefused`` for a spent, expired or unknown link."""
        passwords.check_password(password)
        if len(secret) > 256 or await self.store.invitation(secret, now=now) is None:
            raise TeamRefused("token", "this invitation is not valid: it was used, revoked or has expired")
        user = await self.store.accept(secret, await passwords.hash_password(password), now=now)
        if user is None:
            raise TeamRefused("token", "this invitation is not valid: it was used, revoked or has expired")
        return user

    async def sign_in(self, login: str, password: str) -> User | None:
        """The user whose login and password these are, or None (as slow either way)."""
        user = await self.store.user_by_login(login.strip()[:254]) if login.strip() else None
        if user is None:
            await passwords.dummy_verify(password)
            return None
        return user if await passwords.verify(password, user.password_hash) else None

    async def _member(self, tenant_id: str, user_id: str) -> User:
        user = await self.store.user(user_id)
        if user is None or user.tenant_id != tenant_id:
            raise AccessRefused("not_found", "no such user")
        return user

    async def set_role(self, tenant_id: str, user_id: str, role: str) -> User:
        grade = _role(role)
        await self._member(tenant_id, user_id)
        if not await self.store.set_role(tenant_id, user_id, grade):
            raise AccessRefused("last_owner", "the tenant's last owner stays an owner: make another owner first")
        return await self._member(tenant_id, user_id)

    async def remove(self, tenant_id: str, user_id: str) -> None:
        await self._member(tenant_id, user_id)
        if not await self.store.remove_user(tenant_id, user_id):
            raise AccessRefused("last_owner", "the tenant's last owner cannot be removed: make another owner first")

    async def revoke_invitation(self, tenant_id: str, invitation_id: str, now: datetime) -> None:
        if not await self.store.revoke_invitation(tenant_id, invitation_id, now=now):
            raise AccessRefused("not_found", "no such open invitation")

    async def create_token(self, tenant_id: str, name: str, scope: str, now: datetime) -> tuple[str, ApiToken]:
        name = name.strip()
        if not 1 <= len(name) <= _NAME_MAX or not name.isprintable():
            raise TeamRefused("name", f"a token's name is 1 to {_NAME_MAX} printable characters")
        if scope not in ROLE_OF_SCOPE:
            raise TeamRefused("scope", f"a scope is one of {', '.join(SCOPES)}")
        return await self.store.create_token(tenant_id, name, scope, now=now)

    async def rotate_token(self, tenant_id: str, token_id: str, now: datetime) -> tuple[str, ApiToken]:
        rotated = await self.store.rotate_token(tenant_id, token_id, now=now)
        if rotated is None:
            raise AccessRefused("not_found", "no such token")
        return rotated

    async def revoke_token(self, tenant_id: str, token_id: str, now: datetime) -> None:
        if not await self.store.revoke_token_id(tenant_id, token_id, now=now):
            raise AccessRefused("not_found", "no such token")
