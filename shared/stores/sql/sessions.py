"""The session store, written once for both engines (docs/architecture.md sections 4 and 10).

A sign-in or a sign-out is one statement; a page view is one read by the
primary key. Ids carry 256 random bits, so their unsalted sha256 is enough.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from shared.stores.codec import from_us, now_us, to_us
from shared.stores.sessions import Session
from shared.stores.sql.runner import SqlRunner

__all__ = ["SqlSessionStore"]


def _sha256(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


class SqlSessionStore:
    def __init__(self, db: SqlRunner) -> None:
        self._db = db

    async def create_session(
        self, tenant_id: str, *, ttl_s: float, now: datetime | None = None, user_id: str | None = None
    ) -> tuple[str, Session]:
        session_id = secrets.token_urlsafe(32)
        created = from_us(now_us(now))
        assert created is not None
        session = Session(tenant_id, secrets.token_urlsafe(24), created, created + timedelta(seconds=ttl_s), user_id)
        await self._db.execute(
            "INSERT INTO console_sessions (session_sha256, tenant_id, csrf, created_at, expires_at, user_id)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            _sha256(session_id),
            tenant_id,
            session.csrf,
            to_us(session.created_at),
            to_us(session.expires_at),
            user_id,
        )
        return session_id, session

    async def get_session(self, session_id: str, *, now: datetime | None = None) -> Session | None:
        row = await self._db.fetchone(
            "SELECT tenant_id, csrf, created_at, expires_at, user_id FROM console_sessions"
            " WHERE session_sha256 = ? AND expires_at > ?",
            _sha256(session_id),
            now_us(now),
        )
        if row is None:
            return None
        created, expires = from_us(row[2]), from_us(row[3])
        assert created is not None
        assert expires is not None
        return Session(row[0], row[1], created, expires, row[4])

    async def delete_session(self, session_id: str) -> bool:
        return await self._db.execute("DELETE FROM console_sessions WHERE session_sha256 = ?", _sha256(session_id)) > 0

    async def prune_sessions(self, now: datetime | None = None) -> int:
        return await self._db.execute("DELETE FROM console_sessions WHERE expires_at <= ?", now_us(now))
