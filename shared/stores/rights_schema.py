"""The tables of rights on origins, written as a migration both engines run (docs/architecture.md sections 4, 6).

Migration 31 (``migrations.py``): a claim always has its origin (``https://host`` for the claims
made before), a right remembers how and when it was proven and last checked and when a re-check
first missed its proof (a right from before is re-checked at the first sweep: ``checked_at`` stays
NULL), several tenants may hold rights on one origin (nothing enforces one), and every change of
rights is an event (``rights_events``) with one notice per tenant told (``notices``;
``shared/stores/notices.py``). Kept here so that the migration list stays one module of the lists.
"""

from __future__ import annotations

__all__ = ["RIGHTS"]

RIGHTS: tuple[str, ...] = (
    *(f"ALTER TABLE tenant_hosts ADD COLUMN {c}" for c in ("verified_at BIGINT", "method TEXT", "checked_at BIGINT")),
    "ALTER TABLE tenant_hosts ADD COLUMN lapsing_since BIGINT",
    "UPDATE tenant_hosts SET origin = 'https://' || host WHERE origin IS NULL",
    "UPDATE tenant_hosts SET verified_at = created_at WHERE verified",
    "CREATE INDEX IF NOT EXISTS tenant_hosts_checks ON tenant_hosts (verified, checked_at)",
    "CREATE TABLE IF NOT EXISTS rights_events (event_id TEXT PRIMARY KEY, origin TEXT NOT NULL, host TEXT NOT NULL,"
    " change TEXT NOT NULL, subject TEXT NOT NULL, at BIGINT NOT NULL, ends_at BIGINT, method TEXT)",
    "CREATE INDEX IF NOT EXISTS rights_events_origin ON rights_events (origin, change)",
    "CREATE TABLE IF NOT EXISTS notices (notice_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, event_id TEXT NOT NULL,"
    " at BIGINT NOT NULL, yours BOOLEAN NOT NULL, message TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS notices_tenant ON notices (tenant_id, at)",
)
