"""Team access's migration (``shared/stores/team.py``), beside ``migrations.py`` (which keeps it under 500 lines)."""

from __future__ import annotations

__all__ = ["TEAM", "extend_team"]

# team access (``shared/stores/team.py``): a tenant's users with their roles and scrypt-hashed passwords,
# invitations (the link's sha256, good once until it expires), API tokens with a name, a scope and a last
# use (the tokens issued before are the tenant's own: owner), and the user a console session signed in
TEAM = (
    """CREATE TABLE IF NOT EXISTS team_users (
        user_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, login TEXT NOT NULL UNIQUE, role TEXT NOT NULL,
        password TEXT NOT NULL, created_at BIGINT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS team_users_tenant ON team_users (tenant_id, created_at)",
    """CREATE TABLE IF NOT EXISTS team_invitations (
        invitation_id TEXT PRIMARY KEY, secret_sha256 TEXT NOT NULL UNIQUE, tenant_id TEXT NOT NULL,
        login TEXT NOT NULL, role TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
        accepted_at BIGINT, revoked_at BIGINT)""",
    "CREATE INDEX IF NOT EXISTS team_invitations_tenant ON team_invitations (tenant_id, created_at)",
    "ALTER TABLE api_tokens ADD COLUMN token_id TEXT",
    "ALTER TABLE api_tokens ADD COLUMN name TEXT NOT NULL DEFAULT 'tenant token'",
    "ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'owner'",
    "ALTER TABLE api_tokens ADD COLUMN last_used_at BIGINT",
    # a token issued before has an id too (a prefix of its hash names it, and reveals nothing the hash did not)
    "UPDATE api_tokens SET token_id = substr(token_sha256, 1, 16) WHERE token_id IS NULL",
    "CREATE UNIQUE INDEX IF NOT EXISTS api_tokens_id ON api_tokens (token_id)",
    "CREATE INDEX IF NOT EXISTS api_tokens_tenant ON api_tokens (tenant_id, created_at)",
    "ALTER TABLE console_sessions ADD COLUMN user_id TEXT",
    "CREATE INDEX IF NOT EXISTS console_sessions_user ON console_sessions (user_id) WHERE user_id IS NOT NULL",
)


def extend_team(
    sqlite: list[tuple[int, str, tuple[str, ...]]], postgres: list[tuple[int, str, tuple[str, ...]]], *, version: int
) -> None:
    for engine in (sqlite, postgres):
        engine.append((version, "team access: users, invitations, named and scoped tokens", TEAM))
