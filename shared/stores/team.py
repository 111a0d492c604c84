"""The team store's contract: a tenant's users, its invitations and its API tokens (docs/architecture.md section 6).

A tenant has several users, each with a role (``shared.webmaster.access.Role``: owner, editor, viewer) and a
console password kept only as its scrypt hash (``shared.passwords``). An owner invites someone by an
e-mail address or a name (their *login*, unique across tenants, since a sign-in names no tenant);
the invitation is a link carrying 256 random bits, of which only the sha256 is stored, good once
and until it expires. Accepting it creates the user.

API tokens are the tenant store's table (``api_tokens``, sha256 only), each with a name, a scope
(``read``, ``write`` or ``owner``: the role a call made with it has) and when it was created and last
used. The operator's token (``issue_token``: sign-up, ``turbocubes hosts add``) is an owner's.

One implementation for both engines: ``sql/team.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

__all__ = ["TOUCH_S", "ApiToken", "Grant", "Invitation", "TeamStore", "User"]

#: a token's last use is written at most once a minute: what the console shows, at little cost
TOUCH_S = 60.0


@dataclass(frozen=True, slots=True)
class User:
    user_id: str
    tenant_id: str
    #: the e-mail address or name the user was invited by, lowercased: what they sign in with
    login: str
    role: str
    created_at: datetime
    #: ``shared.passwords`` hash (scrypt, salted); never shown
    password_hash: str = ""


@dataclass(frozen=True, slots=True)
class Invitation:
    invitation_id: str
    tenant_id: str
    login: str
    role: str
    created_at: datetime
    expires_at: datetime
    accepted_at: datetime | None = None
    revoked_at: datetime | None = None

    def open(self, now: datetime) -> bool:
        return self.accepted_at is None and self.revoked_at is None and self.expires_at > now


@dataclass(frozen=True, slots=True)
class ApiToken:
    token_id: str
    tenant_id: str
    name: str
    #: ``read``, ``write`` or ``owner``
    scope: str
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Grant:
    """What a live token lets its bearer do."""

    tenant_id: str
    scope: str
    token_id: str
    last_used_at: datetime | None = None

    def stale(self, now: datetime) -> bool:
        """Whether its last use is worth writing again (``TOUCH_S``)."""
        return self.last_used_at is None or (now - self.last_used_at).total_seconds() >= TOUCH_S


class TeamStore(Protocol):
    # ---------------------------------------------------------------- users

    async def add_user(
        self, tenant_id: str, login: str, role: str, password_hash: str, *, now: datetime | None = None
    ) -> User | None:
        """A new user; None when ``login`` (lowercased) is somebody's already."""
        ...

    async def user(self, user_id: str) -> User | None: ...

    async def user_by_login(self, login: str) -> User | None:
        """The user who signs in as ``login`` (any case), with their password hash."""
        ...

    async def users(self, tenant_id: str) -> list[User]:
        """The tenant's users, the oldest first."""
        ...

    async def set_role(self, tenant_id: str, user_id: str, role: str) -> bool:
        """Change a user's role, unless that leaves the tenant without an owner; False when not done
        (the owners are counted in the statement that changes the role)."""
        ...

    async def remove_user(self, tenant_id: str, user_id: str) -> bool:
        """Remove a user (and their console sessions), unless they are the tenant's last owner; False if not."""
        ...

    # ---------------------------------------------------------- invitations

    async def invite(
        self, tenant_id: str, login: str, role: str, *, ttl_s: float, now: datetime | None = None
    ) -> tuple[str, Invitation]:
        """A new invitation: its secret (the link's, returned once; only its sha256 is kept) and the row."""
        ...

    async def invitations(self, tenant_id: str) -> list[Invitation]:
        """The tenant's invitations, the newest first."""
        ...

    async def invitation(self, secret: str, *, now: datetime | None = None) -> Invitation | None:
        """The open invitation of ``secret`` (not accepted, revoked or expired), or None."""
        ...

    async def accept(self, secret: str, password_hash: str, *, now: datetime | None = None) -> User | None:
        """Spend the invitation of ``secret`` and create its user; None when it is not open or its login is
        taken. Taking it is one guarded statement, so two accepts of one link create one user."""
        ...

    async def revoke_invitation(self, tenant_id: str, invitation_id: str, *, now: datetime | None = None) -> bool:
        """Revoke an open invitation of the tenant; False when there is none."""
        ...

    # ---------------------------------------------------------------- tokens

    async def create_token(
        self, tenant_id: str, name: str, scope: str, *, now: datetime | None = None
    ) -> tuple[str, ApiToken]:
        """A new token: its plaintext (returned once) and its row."""
        ...

    async def tokens(self, tenant_id: str) -> list[ApiToken]:
        """The tenant's live tokens, the oldest first."""
        ...

    async def rotate_token(
        self, tenant_id: str, token_id: str, *, now: datetime | None = None
    ) -> tuple[str, ApiToken] | None:
        """Revoke a live token and issue one of the same name and scope; None when there is none."""
        ...

    async def revoke_token_id(self, tenant_id: str, token_id: str, *, now: datetime | None = None) -> bool:
        """Revoke the tenant's live token ``token_id``; False when there is none."""
        ...

    async def grant(self, token: str) -> Grant | None:
        """What a live token lets do (None: unknown or revoked): one read, no write (it is on every call's
        path, which must not wait behind a writer)."""
        ...

    async def touch_token(self, token_id: str, *, now: datetime | None = None) -> None:
        """Record a use of the token ``now``, unless one was recorded within ``TOUCH_S``."""
        ...
