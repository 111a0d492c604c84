"""Feed, tenant and task stores, written once for both engines (DESIGN.md sections 4 and 6).

These stores see a few writes per second at most, so they are plain SQL over
a tiny ``SqlRunner`` (``?`` placeholders; the PostgreSQL runner rewrites them
to ``$n``) instead of a hand-tuned module per engine. Each method is one
statement, or a read followed by one guarded statement, so no transaction
spans an ``await``.

API tokens are stored only as their SHA-256 (DESIGN.md section 6): a leaked
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
from typing import Any, Protocol

from shared.errors import NotFound
from shared.stores.codec import (
    FEED_COLUMNS,
    FEED_STATUS_FIELDS,
    TASK_COLUMNS,
    dumps,
    feed_from_row,
    from_us,
    now_us,
    task_from_row,
    task_items_json,
    to_us,
)
from shared.stores.rows import (
    Feed,
    HostClaim,
    Task,
    TaskItem,
    TaskStatus,
    Tenant,
    TenantLimits,
    UpsertOutcome,
)
from shared.urls import canonical_host

__all__ = ["TOKEN_PREFIX", "SqlFeedStore", "SqlRunner", "SqlTaskStore", "SqlTenantStore"]

#: API tokens start with this, so a leaked one is recognizable by secret scanners
TOKEN_PREFIX = "tc_"  # noqa: S105 - a prefix, not a secret


class SqlRunner(Protocol):
    async def fetch(self, sql: str, *args: Any) -> list[tuple[Any, ...]]: ...
    async def fetchone(self, sql: str, *args: Any) -> tuple[Any, ...] | None: ...
    async def execute(self, sql: str, *args: Any) -> int: ...
    async def execute_returning(self, sql: str, *args: Any) -> list[tuple[Any, ...]]: ...


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- feeds


class SqlFeedStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def upsert_feed(self, feed: Feed) -> UpsertOutcome:
        prev = await self._db.fetchone("SELECT 1 FROM feeds WHERE feed_id = ?", feed.feed_id)
        rows = await self._db.execute_returning(
            "INSERT INTO feeds"
            " (feed_id, url, host, format, tenant_id, services, autoparser, created_at, deleted)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, FALSE)"
            " ON CONFLICT (feed_id) DO UPDATE SET url = excluded.url, host = excluded.host,"
            " format = excluded.format, tenant_id = excluded.tenant_id, services = excluded.services,"
            " autoparser = excluded.autoparser, deleted = FALSE"
            " WHERE feeds.url <> excluded.url OR feeds.host <> excluded.host"
            " OR feeds.format <> excluded.format"
            " OR feeds.tenant_id IS DISTINCT FROM excluded.tenant_id OR feeds.services <> excluded.services"
            " OR feeds.autoparser <> excluded.autoparser OR feeds.deleted"
            " RETURNING feed_id",
            feed.feed_id,
            feed.url,
            feed.host,
            str(feed.format),
            feed.tenant_id,
            dumps(list(feed.services)),
            bool(feed.autoparser),
            now_us(feed.created_at),
        )
        if not rows:
            return UpsertOutcome.unchanged
        return UpsertOutcome.inserted if prev is None else UpsertOutcome.updated

    async def delete_feed(self, feed_id: str) -> bool:
        count = await self._db.execute("UPDATE feeds SET deleted = TRUE WHERE feed_id = ? AND NOT deleted", feed_id)
        return count > 0

    async def get(self, feed_id: str) -> Feed | None:
        row = await self._db.fetchone(f"SELECT {FEED_COLUMNS} FROM feeds WHERE feed_id = ?", feed_id)
        return None if row is None else feed_from_row(row)

    async def list(self, tenant_id: str | None = None, *, include_deleted: bool = False) -> builtins.list[Feed]:
        where = ["TRUE"]
        args: builtins.list[Any] = []
        if tenant_id is not None:
            where.append("tenant_id = ?")
            args.append(tenant_id)
        if not include_deleted:
            where.append("NOT deleted")
        rows = await self._db.fetch(
            f"SELECT {FEED_COLUMNS} FROM feeds WHERE {' AND '.join(where)} ORDER BY feed_id", *args
        )
        return [feed_from_row(row) for row in rows]

    async def due(self, now: datetime, limit: int = 100) -> builtins.list[Feed]:
        rows = await self._db.fetch(
            f"SELECT {FEED_COLUMNS} FROM feeds"
            " WHERE NOT deleted AND (next_fetch_at IS NULL OR next_fetch_at <= ?)"
            " ORDER BY next_fetch_at ASC NULLS FIRST, feed_id LIMIT ?",
            to_us(now),
            limit,
        )
        return [feed_from_row(row) for row in rows]

    async def update_status(self, feed_id: str, **fields: Any) -> None:
        unknown = sorted(set(fields) - set(FEED_STATUS_FIELDS))
        if unknown:
            raise ValueError(f"unknown feed status fields {unknown}; valid: {sorted(FEED_STATUS_FIELDS)}")
        if not fields:
            return
        names = list(fields)  # validated above: safe to splice into the statement
        values = [to_us(fields[n]) if FEED_STATUS_FIELDS[n] else fields[n] for n in names]
        if "consecutive_failures" in fields and fields["consecutive_failures"] is None:
            raise ValueError("consecutive_failures must be an integer, not None")
        assignments = ", ".join(f"{name} = ?" for name in names)
        count = await self._db.execute(f"UPDATE feeds SET {assignments} WHERE feed_id = ?", *values, feed_id)
        if count == 0:
            raise NotFound(f"feed {feed_id!r} does not exist")


# --------------------------------------------------------------------------- tenants


def _tenant(row: Sequence[Any]) -> Tenant:
    limits = None if row[3] is None else TenantLimits(rps=row[3], burst=row[4], bytes_per_s=row[5])
    created = from_us(row[2])
    assert created is not None
    return Tenant(tenant_id=row[0], name=row[1], created_at=created, limits=limits)


def _claim(row: Sequence[Any]) -> HostClaim:
    created = from_us(row[4])
    assert created is not None
    return HostClaim(
        host=row[0], tenant_id=row[1], verified=bool(row[2]), verification_token=row[3], created_at=created
    )


_CLAIM_COLUMNS = "host, tenant_id, verified, verification_token, created_at"


class SqlTenantStore:
    """Hosts are normalized with ``canonical_host`` here, because ownership decides who may publish."""

    def __init__(self, db: SqlRunner) -> None:
        self._db = db

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

    async def _require(self, tenant_id: str) -> None:
        if await self._db.fetchone("SELECT 1 FROM tenants WHERE tenant_id = ?", tenant_id) is None:
            raise NotFound(f"tenant {tenant_id!r} does not exist")

    async def add_host(self, tenant_id: str, host: str, *, now: datetime | None = None) -> HostClaim:
        host = canonical_host(host)
        await self._require(tenant_id)
        await self._db.execute(
            f"INSERT INTO tenant_hosts ({_CLAIM_COLUMNS}) VALUES (?, ?, FALSE, ?, ?) ON CONFLICT DO NOTHING",
            host,
            tenant_id,
            secrets.token_urlsafe(24),
            now_us(now),
        )
        row = await self._db.fetchone(
            f"SELECT {_CLAIM_COLUMNS} FROM tenant_hosts WHERE host = ? AND tenant_id = ?", host, tenant_id
        )
        assert row is not None
        return _claim(row)

    async def set_verified(self, tenant_id: str, host: str, verified: bool = True) -> None:
        host = canonical_host(host)
        exists = await self._db.fetchone("SELECT 1 FROM tenant_hosts WHERE host = ? AND tenant_id = ?", host, tenant_id)
        if exists is None:
            raise NotFound(f"tenant {tenant_id!r} has not claimed host {host!r}")
        if verified:
            # one statement: the proven claim becomes the only verified one for the host
            await self._db.execute("UPDATE tenant_hosts SET verified = (tenant_id = ?) WHERE host = ?", tenant_id, host)
        else:
            await self._db.execute(
                "UPDATE tenant_hosts SET verified = FALSE WHERE host = ? AND tenant_id = ?", host, tenant_id
            )

    async def host_owner(self, host: str) -> str | None:
        try:
            host = canonical_host(host)
        except ValueError:
            return None
        row = await self._db.fetchone("SELECT tenant_id FROM tenant_hosts WHERE host = ? AND verified LIMIT 1", host)
        return None if row is None else str(row[0])

    async def hosts_of(self, tenant_id: str) -> builtins.list[HostClaim]:
        rows = await self._db.fetch(
            f"SELECT {_CLAIM_COLUMNS} FROM tenant_hosts WHERE tenant_id = ? ORDER BY host", tenant_id
        )
        return [_claim(row) for row in rows]

    async def issue_token(self, tenant_id: str, *, now: datetime | None = None) -> str:
        await self._require(tenant_id)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        await self._db.execute(
            "INSERT INTO api_tokens (token_sha256, tenant_id, created_at) VALUES (?, ?, ?)",
            _sha256(token),
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


# --------------------------------------------------------------------------- tasks


class SqlTaskStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def create(self, task: Task, *, now: datetime | None = None) -> Task:
        stamp = now_us(now)
        rows = await self._db.execute_returning(
            f"INSERT INTO tasks ({TASK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            # no conflict target: a reused task id and a reused idempotency key both mean "exists"
            f" ON CONFLICT DO NOTHING RETURNING {TASK_COLUMNS}",
            task.task_id,
            task.tenant_id,
            task.host,
            str(task.status),
            to_us(task.created_at) if task.created_at else stamp,
            to_us(task.updated_at) if task.updated_at else stamp,
            task_items_json(task.items),
            dumps(list(task.errors)),
            dumps(list(task.preview_urls)),
            task.idempotency_key,
        )
        if rows:
            return task_from_row(rows[0])
        existing = None
        if task.idempotency_key is not None:
            existing = await self.find_by_idempotency_key(task.tenant_id, task.idempotency_key)
        if existing is None:
            existing = await self.get(task.task_id)
        if existing is None:  # pragma: no cover - a conflict implies one of the two exists
            raise RuntimeError(f"task {task.task_id!r} conflicted but cannot be found")
        return existing

    async def get(self, task_id: str, *, tenant_id: str | None = None) -> Task | None:
        row = await self._db.fetchone(f"SELECT {TASK_COLUMNS} FROM tasks WHERE task_id = ?", task_id)
        if row is None or (tenant_id is not None and row[1] != tenant_id):
            return None
        return task_from_row(row)

    async def update(
        self,
        task_id: str,
        *,
        status: TaskStatus | None = None,
        items: Sequence[TaskItem] | None = None,
        errors: Sequence[str] | None = None,
        preview_urls: Sequence[str] | None = None,
        now: datetime | None = None,
    ) -> Task:
        sets = ["updated_at = ?"]
        args: builtins.list[Any] = [now_us(now)]
        if status is not None:
            sets.append("status = ?")
            args.append(str(TaskStatus(status)))
        if items is not None:
            sets.append("items = ?")
            args.append(task_items_json(items))
        if errors is not None:
            sets.append("errors = ?")
            args.append(dumps(list(errors)))
        if preview_urls is not None:
            sets.append("preview_urls = ?")
            args.append(dumps(list(preview_urls)))
        rows = await self._db.execute_returning(
            f"UPDATE tasks SET {', '.join(sets)} WHERE task_id = ? RETURNING {TASK_COLUMNS}", *args, task_id
        )
        if not rows:
            raise NotFound(f"task {task_id!r} does not exist")
        return task_from_row(rows[0])

    async def find_by_idempotency_key(self, tenant_id: str, key: str) -> Task | None:
        row = await self._db.fetchone(
            f"SELECT {TASK_COLUMNS} FROM tasks WHERE tenant_id = ? AND idempotency_key = ?", tenant_id, key
        )
        return None if row is None else task_from_row(row)
