"""The tables of both engines' first migration (docs/architecture.md section 4, "stores"; ``migrations.py``).

Released: never edited (a change is a new migration in ``migrations.py``).
"""

from __future__ import annotations

__all__ = ["COMMON", "DELAY_DOCS", "PAGES_COLUMNS"]

# Tables every engine shares verbatim (types both accept: TEXT, BIGINT, DOUBLE PRECISION, BOOLEAN).
COMMON: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS doc_hashes (
        source_id TEXT NOT NULL, url TEXT NOT NULL, content_hash TEXT NOT NULL,
        version BIGINT NOT NULL, updated_at BIGINT NOT NULL, PRIMARY KEY (source_id, url))""",
    "CREATE INDEX IF NOT EXISTS doc_hashes_url ON doc_hashes (url, version)",
    """CREATE TABLE IF NOT EXISTS url_owners (
        url TEXT PRIMARY KEY, source_id TEXT NOT NULL, priority BIGINT NOT NULL,
        claimed_at BIGINT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS guids (
        source_id TEXT NOT NULL, guid TEXT NOT NULL, url TEXT NOT NULL, PRIMARY KEY (source_id, guid))""",
    """CREATE TABLE IF NOT EXISTS images (
        url TEXT PRIMARY KEY, status TEXT NOT NULL, cdn_url TEXT, reason TEXT, mime TEXT,
        size BIGINT NOT NULL DEFAULT 0, width BIGINT, height BIGINT, sha256 TEXT,
        updated_at BIGINT, retry_after BIGINT, ordered_at BIGINT)""",
    """CREATE TABLE IF NOT EXISTS delay_pending (
        media_url TEXT NOT NULL, doc_url TEXT NOT NULL, PRIMARY KEY (media_url, doc_url))""",
    "CREATE INDEX IF NOT EXISTS delay_pending_doc ON delay_pending (doc_url)",
    """CREATE TABLE IF NOT EXISTS feeds (
        feed_id TEXT PRIMARY KEY, url TEXT NOT NULL, host TEXT NOT NULL, format TEXT NOT NULL,
        tenant_id TEXT, services TEXT NOT NULL DEFAULT '[]', autoparser BOOLEAN NOT NULL DEFAULT FALSE,
        created_at BIGINT NOT NULL, deleted BOOLEAN NOT NULL DEFAULT FALSE,
        last_fetch_at BIGINT, last_http_status BIGINT, last_result TEXT, items BIGINT, last_error TEXT,
        error_line BIGINT, error_column BIGINT, etag TEXT, last_modified TEXT, last_hash TEXT,
        next_fetch_at BIGINT, interval_s DOUBLE PRECISION, consecutive_failures BIGINT NOT NULL DEFAULT 0,
        websub_hub TEXT, websub_expires_at BIGINT, autoparser_unavailable_reason TEXT)""",
    "CREATE INDEX IF NOT EXISTS feeds_tenant ON feeds (tenant_id)",
    "CREATE INDEX IF NOT EXISTS feeds_next ON feeds (next_fetch_at)",
    """CREATE TABLE IF NOT EXISTS tenants (
        tenant_id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at BIGINT NOT NULL,
        rps DOUBLE PRECISION, burst BIGINT, bytes_per_s DOUBLE PRECISION)""",
    """CREATE TABLE IF NOT EXISTS tenant_hosts (
        host TEXT NOT NULL, tenant_id TEXT NOT NULL, verified BOOLEAN NOT NULL DEFAULT FALSE,
        verification_token TEXT NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY (host, tenant_id))""",
    "CREATE INDEX IF NOT EXISTS tenant_hosts_tenant ON tenant_hosts (tenant_id)",
    """CREATE TABLE IF NOT EXISTS api_tokens (
        token_sha256 TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, created_at BIGINT NOT NULL,
        revoked_at BIGINT)""",
    """CREATE TABLE IF NOT EXISTS tasks (
        task_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, host TEXT NOT NULL, status TEXT NOT NULL,
        created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, items TEXT NOT NULL DEFAULT '[]',
        errors TEXT NOT NULL DEFAULT '[]', preview_urls TEXT NOT NULL DEFAULT '[]', idempotency_key TEXT,
        UNIQUE (tenant_id, idempotency_key))""",
    "CREATE INDEX IF NOT EXISTS tasks_tenant ON tasks (tenant_id, created_at)",
)

PAGES_COLUMNS = """
        url TEXT PRIMARY KEY, host TEXT NOT NULL, version BIGINT NOT NULL,
        html TEXT NOT NULL DEFAULT '', doc_json {blob} NOT NULL, title TEXT NOT NULL DEFAULT '',
        text TEXT NOT NULL DEFAULT '', content_hash TEXT NOT NULL DEFAULT '', etag TEXT NOT NULL DEFAULT '',
        seen_at BIGINT, parsed_at BIGINT, media_ready_at BIGINT, written_at BIGINT,
        deleted BOOLEAN NOT NULL DEFAULT FALSE, source_kind TEXT NOT NULL DEFAULT ''"""

DELAY_DOCS = """CREATE TABLE IF NOT EXISTS delay_docs (
        url TEXT PRIMARY KEY, host TEXT NOT NULL, version BIGINT NOT NULL, doc_json {blob} NOT NULL,
        deadline BIGINT NOT NULL, parked_at BIGINT NOT NULL)"""
