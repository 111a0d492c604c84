"""The tenant store, written once for both engines (docs/architecture.md sections 4 and 6).

It sees a few writes per second at most, so it is plain SQL over the
``SqlRunner``: each method is one statement, or a read followed by one
guarded statement, so no transaction spans an ``await``.

API tokens are stored only as their SHA-256 (docs/architecture.md section 6): a leaked
database does not leak usable tokens. Tokens carry 256 random bits, so an
unsalted hash is enough (no dictionary to attack).
"""

from __future__ import annotations

import builtins
import hashlib
import secrets
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from shared.errors import NotFound
from shared.origins import default_origin, try_origin
from shared.stores.codec import from_us, now_us
from shared.stores.sql.runner import SqlRunner
from shared.stores.team import TeamStore
from shared.stores.tenants import HostClaim, Tenant, TenantLimits
from shared.urls import canonical_host

__all__ = ["TOKEN_PREFIX", "SqlTenantStore"]

#: API tokens start with this, so a leaked one is recognizable by secret scanners
TOKEN_PREFIX = "tc_"  # noqa: S105 - a prefix, not a secret


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _tenant(row: Sequence[Any]) -> Tenant:
    limits = None if row[3] is None else TenantLimits(rps=row[3], burst=row[4], bytes_per_s=row[5])
    created = from_us(row[2])
    assert created is not None
    return Tenant(tenant_id=row[0], name=row[1], created_at=created, limits=limits)


def _claim(row: Sequence[Any]) -> HostClaim:
    created = from_us(row[4])
    assert created is not None
    verified = bool(row[2])
    return HostClaim(
        host=row[0],
        tenant_id=row[1],
        verified=verified,
        verification_token=row[3],
        created_at=created,
        # rows written before origins were canonical (or before a claim always had one) read canonical
        origin=(try_origin(row[5]) if row[5] else None) or default_origin(row[0]),
        turbo=bool(row[6]),
        verified_at=from_us(row[7]) if verified else None,
        method=row[8] if verified else None,
        checked_at=from_us(row[9]),
        lapsing_since=from_us(row[10]) if verified else None,
    )


_CLAIM_COLUMNS = (
    "host, tenant_id, verified, verification_token, created_at, origin, turbo,"
    " verified_at, method, checked_at, lapsing_since"
)


class SqlTenantStore:
    """Hosts are normalized with ``canonical_host`` here, because ownership decides who may publish."""

    def __init__(self, db: SqlRunner, *, team: TeamStore) -> None:
        self._db = db
        self.team = team

    async def create_tenant(self, name: str, *, tenant_id: str | None = None, now: datetime | None = None) -> Tenant:
        tid = tenant_id or uuid.uuid4().hex
        await self._db.execute(
            "INSERT INTO tenants (tenant_id, name, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            tid,
            name,
            now_us(now),
        )
        tenant = await self.get_tenant(tid)
        assert tenant is not None
        return tenant

    async def get_tenant(self, tenant_id: str) -> Tenant | None:
        row = await self._db.fetchone(
            "SELECT tenant_id, name, created_at, rps, burst, bytes_per_s FROM tenants WHERE tenant_id = ?",
            tenant_id,
        )
        return None if row is None else _tenant(row)

    async def list_tenants(self, limit: int = 1000) -> builtins.list[Tenant]:
        rows = await self._db.fetch(
            "SELECT tenant_id, name, created_at, rps, burst, bytes_per_s FROM tenants"
            " ORDER BY created_at, tenant_id LIMIT ?",
            limit,
        )
        return [_tenant(r) for r in rows]

    async def _require(self, tenant_id: str) -> None:
        if await self._db.fetchone("SELECT 1 FROM tenants WHERE tenant_id = ?", tenant_id) is None:
            raise NotFound(f"tenant {tenant_id!r} does not exist")

    async def add_host(
        self, tenant_id: str, host: str, *, origin: str | None = None, now: datetime | None = None
    ) -> HostClaim:
        host = canonical_host(host)
        await self._require(tenant_id)
        before = await self._get(tenant_id, host)
        if before is None:
            # a repeated claim racing this one keeps the first's token (DO NOTHING)
            await self._db.execute(
                "INSERT INTO tenant_hosts (host, tenant_id, verified, verification_token, created_at, origin, turbo)"
                " VALUES (?, ?, FALSE, ?, ?, ?, TRUE) ON CONFLICT (host, tenant_id) DO NOTHING",
                host,
                tenant_id,
                secrets.token_urlsafe(24),
                now_us(now),
                origin or default_origin(host),
            )
        elif origin is not None and origin != before.origin:
            # a claim of another origin: the proof was of the old one, so a right there ends now
            await self._db.execute(
                "UPDATE tenant_hosts SET origin = ?, verified = FALSE, verified_at = NULL, method = NULL,"
                " lapsing_since = NULL WHERE host = ? AND tenant_id = ?",
                origin,
                host,
                tenant_id,
            )
        claim = await self._get(tenant_id, host)
        assert claim is not None
        return claim

    async def _get(self, tenant_id: str, host: str) -> HostClaim | None:
        row = await self._db.fetchone(
            f"SELECT {_CLAIM_COLUMNS} FROM tenant_hosts WHERE host = ? AND tenant_id = ?", host, tenant_id
        )
        return None if row is None else _claim(row)

    async def set_verified(
        self,
        tenant_id: str,
        host: str,
        verified: bool = True,
        *,
        method: str | None = None,
        now: datetime | None = None,
    ) -> None:
        host = canonical_host(host)
        stamp = now_us(now)
        count = await self._db.execute(
            "UPDATE tenant_hosts SET verified = ?, verified_at = ?, method = ?, checked_at = ?, lapsing_since = NULL"
            " WHERE host = ? AND tenant_id = ?",
            verified,
            stamp if verified else None,
            method if verified else None,
            stamp,
            host,
            tenant_id,
        )
        if count == 0:
            raise NotFound(f"tenant {tenant_id!r} has not claimed host {host!r}")

    async def holders(self, host: str) -> builtins.list[HostClaim]:
        try:
            host = canonical_host(host)
        except ValueError:
            return []
        rows = await self._db.fetch(
            f"SELECT {_CLAIM_COLUMNS} FROM tenant_hosts WHERE host = ? AND verified ORDER BY verified_at, tenant_id",
            host,
        )
        return [_claim(row) for row in rows]

    async def checked(self, tenant_id: str, host: str, *, found: bool, now: datetime | None = None) -> HostClaim:
        host = canonical_host(host)
        stamp = now_us(now)
        await self._db.execute(
            "UPDATE tenant_hosts SET checked_at = ?,"
            " lapsing_since = CASE WHEN ? THEN NULL ELSE COALESCE(lapsing_since, ?) END"
            " WHERE host = ? AND tenant_id = ?",
            stamp,
            found,
            stamp,
            host,
            tenant_id,
        )
        claim = await self._get(tenant_id, host)
        if claim is None:
            raise NotFound(f"tenant {tenant_id!r} has not claimed host {host!r}")
        return claim

    async def due_checks(
        self, before: datetime, *, now: datetime | None = None, limit: int = 100
    ) -> builtins.list[HostClaim]:
        cutoff, stamp = now_us(before), now_us(now)
        rows = await self._db.fetch(
            f"SELECT {_CLAIM_COLUMNS} FROM tenant_hosts WHERE verified AND (checked_at IS NULL OR checked_at < ?)"
            " ORDER BY checked_at, host, tenant_id LIMIT ?",
            cutoff,
            limit,
        )
        taken = []
        for row in rows:
            # guarded by the check time read: of two replicas sweeping at once, one takes the claim
            won = await self._db.execute(
                "UPDATE tenant_hosts SET checked_at = ? WHERE host = ? AND tenant_id = ? AND verified"
                " AND (checked_at IS NULL OR checked_at < ?)",
                stamp,
                row[0],
                row[1],
                cutoff,
            )
            if won:
                taken.append(_claim(row))
        return taken

    async def claims_on(self, host: str) -> builtins.list[HostClaim]:
        try:
            host = canonical_host(host)
        except ValueError:
            return []
        rows = await self._db.fetch(
            f"SELECT {_CLAIM_COLUMNS} FROM tenant_hosts WHERE host = ? ORDER BY created_at, tenant_id", host
        )
        return [_claim(r) for r in rows]

    async def hosts_of(self, tenant_id: str) -> builtins.list[HostClaim]:
        rows = await self._db.fetch(
            f"SELECT {_CLAIM_COLUMNS} FROM tenant_hosts WHERE tenant_id = ? ORDER BY host", tenant_id
        )
        return [_claim(row) for row in rows]

    async def set_turbo(self, tenant_id: str, host: str, enabled: bool) -> None:
        host = canonical_host(host)
        exists = await self._db.fetchone("SELECT 1 FROM tenant_hosts WHERE host = ? AND tenant_id = ?", host, tenant_id)
        if exists is None:
            raise NotFound(f"tenant {tenant_id!r} has not claimed host {host!r}")
        await self._db.execute(
            "UPDATE tenant_hosts SET turbo = ? WHERE host = ? AND tenant_id = ?", enabled, host, tenant_id
        )

    async def set_branding(self, tenant_id: str, host: str, branding: str | None) -> None:
        host = canonical_host(host)
        count = await self._db.execute(
            "UPDATE tenant_hosts SET branding = ? WHERE host = ? AND tenant_id = ?", branding, host, tenant_id
        )
        if not count:
            raise NotFound(f"tenant {tenant_id!r} has not claimed host {host!r}")

    async def branding(self, tenant_id: str, host: str) -> str | None:
        try:
            host = canonical_host(host)
        except ValueError:
            return None
        row = await self._db.fetchone(
            "SELECT branding FROM tenant_hosts WHERE host = ? AND tenant_id = ?", host, tenant_id
        )
        return None if row is None else row[0]

    async def turbo_enabled(self, host: str, tenant_id: str | None = None) -> bool:
        try:
            host = canonical_host(host)
        except ValueError:
            return True
        if tenant_id is not None:
            row = await self._db.fetchone(
                "SELECT turbo FROM tenant_hosts WHERE host = ? AND tenant_id = ?", host, tenant_id
            )
            return True if row is None else bool(row[0])
        rows = await self._db.fetch("SELECT turbo FROM tenant_hosts WHERE host = ? AND verified", host)
        return not rows or any(bool(r[0]) for r in rows)

    async def issue_token(self, tenant_id: str, *, now: datetime | None = None) -> str:
        await self._require(tenant_id)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        # the tenant's own token (sign-up, the operator's): an owner's, listed with the tokens the
        # tenant makes itself (``sql/team.py``)
        await self._db.execute(
            "INSERT INTO api_tokens (token_sha256, token_id, tenant_id, name, scope, created_at)"
            " VALUES (?, ?, ?, 'tenant token', 'owner', ?)",
            _sha256(token),
            secrets.token_hex(8),
            tenant_id,
            now_us(now),
        )
        return token

    async def tenant_for_token(self, token: str) -> str | None:
        if not token:
            return None
        row = await self._db.fetchone(
            "SELECT tenant_id FROM api_tokens WHERE token_sha256 = ? AND revoked_at IS NULL", _sha256(token)
        )
        return None if row is None else str(row[0])

    async def revoke_token(self, token: str) -> bool:
        count = await self._db.execute(
            "UPDATE api_tokens SET revoked_at = ? WHERE token_sha256 = ? AND revoked_at IS NULL",
            now_us(None),
            _sha256(token),
        )
        return count > 0

    async def get_limits(self, tenant_id: str) -> TenantLimits | None:
        tenant = await self.get_tenant(tenant_id)
        return None if tenant is None else tenant.limits

    async def set_limits(self, tenant_id: str, limits: TenantLimits | None) -> None:
        values = (None, None, None) if limits is None else (limits.rps, limits.burst, limits.bytes_per_s)
        count = await self._db.execute(
            "UPDATE tenants SET rps = ?, burst = ?, bytes_per_s = ? WHERE tenant_id = ?", *values, tenant_id
        )
        if count == 0:
            raise NotFound(f"tenant {tenant_id!r} does not exist")
