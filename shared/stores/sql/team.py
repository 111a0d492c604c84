"""The team store, written once for both engines (docs/architecture.md sections 4 and 6).

Users, invitations and API tokens see a few writes a day per tenant: plain SQL over the
``SqlRunner``, each method one statement or a read followed by one guarded statement. Secrets
(invitation links, tokens) carry 256 random bits and are kept only as their sha256, like the
tenant store's tokens (a leaked table opens nothing); passwords arrive hashed (``shared.passwords``).
"""

from __future__ import annotations

import builtins
import hashlib
import secrets
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from shared.stores.codec import from_us, now_us, to_us
from shared.stores.sql.runner import SqlRunner
from shared.stores.sql.tenants import TOKEN_PREFIX
from shared.stores.team import TOUCH_S, ApiToken, Grant, Invitation, User

__all__ = ["INVITE_PREFIX", "SqlTeamStore"]

#: an invitation link's secret starts with this (recognizable if pasted where it should not be)
INVITE_PREFIX = "tci_"
_TOUCH_US = int(TOUCH_S * 1_000_000)

_USER = "user_id, tenant_id, login, role, created_at, password"
_INVITE = "invitation_id, tenant_id, login, role, created_at, expires_at, accepted_at, revoked_at"
_TOKEN_COLUMNS = "token_id, tenant_id, name, scope, created_at, last_used_at, revoked_at"  # noqa: S105 - columns
# the statement that would leave no owner matches no row: a role change or removal of an owner
# needs another owner of the tenant, counted in the same statement. The count locks the owner rows it
# reads on PostgreSQL ({lock}: " FOR UPDATE"): two owners demoting each other at once would otherwise
# both count two owners in their own snapshots and leave none; with the lock the second waits, and
# READ COMMITTED re-reads the row the first changed, so it counts one and changes nothing. SQLite runs
# one write at a time, so its statement always counts what the last write left.
_ANOTHER_OWNER = (
    "(role <> 'owner' OR (SELECT count(*) FROM"
    " (SELECT o.user_id FROM team_users o WHERE o.tenant_id = ? AND o.role = 'owner'{lock}) owners) > 1)"
)


def _sha256(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _at(value: Any) -> datetime:
    out = from_us(value)
    assert out is not None
    return out


def _user(row: Sequence[Any]) -> User:
    return User(row[0], row[1], row[2], row[3], _at(row[4]), row[5])


def _invitation(row: Sequence[Any]) -> Invitation:
    return Invitation(row[0], row[1], row[2], row[3], _at(row[4]), _at(row[5]), from_us(row[6]), from_us(row[7]))


def _token(row: Sequence[Any]) -> ApiToken:
    return ApiToken(row[0], row[1], row[2] or "", row[3], _at(row[4]), from_us(row[5]), from_us(row[6]))


class SqlTeamStore:
    def __init__(self, db: SqlRunner, *, lock_rows: str = "") -> None:
        """``lock_rows``: the clause that locks the rows a guard counts (``" FOR UPDATE"`` on PostgreSQL)."""
        self._db = db
        self._another_owner = _ANOTHER_OWNER.format(lock=lock_rows)

    # ---------------------------------------------------------------- users

    async def add_user(
        self, tenant_id: str, login: str, role: str, password_hash: str, *, now: datetime | None = None
    ) -> User | None:
        user_id = uuid.uuid4().hex
        added = await self._db.execute(
            "INSERT INTO team_users (user_id, tenant_id, login, role, password, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            user_id,
            tenant_id,
            login.lower(),
            role,
            password_hash,
            now_us(now),
        )
        return await self.user(user_id) if added else None

    async def user(self, user_id: str) -> User | None:
        row = await self._db.fetchone(f"SELECT {_USER} FROM team_users WHERE user_id = ?", user_id)
        return None if row is None else _user(row)

    async def user_by_login(self, login: str) -> User | None:
        row = await self._db.fetchone(f"SELECT {_USER} FROM team_users WHERE login = ?", login.lower())
        return None if row is None else _user(row)

    async def users(self, tenant_id: str) -> builtins.list[User]:
        rows = await self._db.fetch(
            f"SELECT {_USER} FROM team_users WHERE tenant_id = ? ORDER BY created_at, user_id", tenant_id
        )
        return [_user(r) for r in rows]

    async def set_role(self, tenant_id: str, user_id: str, role: str) -> bool:
        changed = await self._db.execute(
            "UPDATE team_users SET role = ? WHERE tenant_id = ? AND user_id = ?"
            f" AND (? = 'owner' OR {self._another_owner})",
            role,
            tenant_id,
            user_id,
            role,
            tenant_id,
        )
        return changed > 0

    async def remove_user(self, tenant_id: str, user_id: str) -> bool:
        removed = await self._db.execute(
            f"DELETE FROM team_users WHERE tenant_id = ? AND user_id = ? AND {self._another_owner}",
            tenant_id,
            user_id,
            tenant_id,
        )
        if removed:
            # a removed user's open sessions end with them
            await self._db.execute("DELETE FROM console_sessions WHERE user_id = ?", user_id)
        return removed > 0

    # ---------------------------------------------------------- invitations

    async def invite(
        self, tenant_id: str, login: str, role: str, *, ttl_s: float, now: datetime | None = None
    ) -> tuple[str, Invitation]:
        secret = INVITE_PREFIX + secrets.token_urlsafe(32)
        created = _at(now_us(now))
        invitation = Invitation(
            uuid.uuid4().hex, tenant_id, login.lower(), role, created, created + timedelta(seconds=ttl_s)
        )
        await self._db.execute(
            "INSERT INTO team_invitations (invitation_id, secret_sha256, tenant_id, login, role, created_at,"
            " expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            invitation.invitation_id,
            _sha256(secret),
            tenant_id,
            invitation.login,
            role,
            to_us(invitation.created_at),
            to_us(invitation.expires_at),
        )
        return secret, invitation

    async def invitations(self, tenant_id: str) -> builtins.list[Invitation]:
        rows = await self._db.fetch(
            f"SELECT {_INVITE} FROM team_invitations WHERE tenant_id = ? ORDER BY created_at DESC, invitation_id"
            " LIMIT 200",
            tenant_id,
        )
        return [_invitation(r) for r in rows]

    async def invitation(self, secret: str, *, now: datetime | None = None) -> Invitation | None:
        row = await self._db.fetchone(
            f"SELECT {_INVITE} FROM team_invitations WHERE secret_sha256 = ? AND accepted_at IS NULL"
            " AND revoked_at IS NULL AND expires_at > ?",
            _sha256(secret),
            now_us(now),
        )
        return None if row is None else _invitation(row)

    async def accept(self, secret: str, password_hash: str, *, now: datetime | None = None) -> User | None:
        stamp = now_us(now)
        invitation = await self.invitation(secret, now=now)
        if invitation is None or await self.user_by_login(invitation.login) is not None:
            return None
        # the guarded spend: of two accepts of one link, one matches the open row
        spent = await self._db.execute(
            "UPDATE team_invitations SET accepted_at = ? WHERE invitation_id = ? AND accepted_at IS NULL"
            " AND revoked_at IS NULL AND expires_at > ?",
            stamp,
            invitation.invitation_id,
            stamp,
        )
        if not spent:
            return None
        return await self.add_user(invitation.tenant_id, invitation.login, invitation.role, password_hash, now=now)

    async def revoke_invitation(self, tenant_id: str, invitation_id: str, *, now: datetime | None = None) -> bool:
        return (
            await self._db.execute(
                "UPDATE team_invitations SET revoked_at = ? WHERE tenant_id = ? AND invitation_id = ?"
                " AND accepted_at IS NULL AND revoked_at IS NULL",
                now_us(now),
                tenant_id,
                invitation_id,
            )
            > 0
        )

    # ---------------------------------------------------------------- tokens

    async def create_token(
        self, tenant_id: str, name: str, scope: str, *, now: datetime | None = None
    ) -> tuple[str, ApiToken]:
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        row = ApiToken(secrets.token_hex(8), tenant_id, name, scope, _at(now_us(now)))
        await self._db.execute(
            "INSERT INTO api_tokens (token_sha256, token_id, tenant_id, name, scope, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            _sha256(token),
            row.token_id,
            tenant_id,
            name,
            scope,
            to_us(row.created_at),
        )
        return token, row

    async def tokens(self, tenant_id: str) -> builtins.list[ApiToken]:
        rows = await self._db.fetch(
            f"SELECT {_TOKEN_COLUMNS} FROM api_tokens WHERE tenant_id = ? AND revoked_at IS NULL"
            " ORDER BY created_at, token_id LIMIT 200",
            tenant_id,
        )
        return [_token(r) for r in rows]

    async def _live(self, tenant_id: str, token_id: str) -> ApiToken | None:
        row = await self._db.fetchone(
            f"SELECT {_TOKEN_COLUMNS} FROM api_tokens WHERE tenant_id = ? AND token_id = ? AND revoked_at IS NULL",
            tenant_id,
            token_id,
        )
        return None if row is None else _token(row)

    async def rotate_token(
        self, tenant_id: str, token_id: str, *, now: datetime | None = None
    ) -> tuple[str, ApiToken] | None:
        old = await self._live(tenant_id, token_id)
        if old is None or not await self.revoke_token_id(tenant_id, token_id, now=now):
            return None
        return await self.create_token(tenant_id, old.name, old.scope, now=now)

    async def revoke_token_id(self, tenant_id: str, token_id: str, *, now: datetime | None = None) -> bool:
        return (
            await self._db.execute(
                "UPDATE api_tokens SET revoked_at = ? WHERE tenant_id = ? AND token_id = ? AND revoked_at IS NULL",
                now_us(now),
                tenant_id,
                token_id,
            )
            > 0
        )

    async def grant(self, token: str) -> Grant | None:
        if not token:
            return None
        row = await self._db.fetchone(
            "SELECT tenant_id, scope, token_id, last_used_at FROM api_tokens"
            " WHERE token_sha256 = ? AND revoked_at IS NULL",
            _sha256(token),
        )
        return None if row is None else Grant(row[0], row[1], row[2], from_us(row[3]))

    async def touch_token(self, token_id: str, *, now: datetime | None = None) -> None:
        stamp = now_us(now)
        await self._db.execute(
            "UPDATE api_tokens SET last_used_at = ? WHERE token_id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
            stamp,
            token_id,
            stamp - _TOUCH_US,
        )
