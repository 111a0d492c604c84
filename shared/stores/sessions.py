"""The session store's contract: webmaster console sign-ins (docs/architecture.md section 10).

A session is created when a tenant signs in with its API token, or one of its
users with their password, and lives in a cookie as a random id; the store keeps
only the id's sha256 (like API tokens: a leaked table opens no session), the
tenant, the user (None: the tenant's token), the session's CSRF token and its
expiry; a removed user's sessions go with them (``team.remove_user``).
Signing out deletes it; an expired one is refused and swept.

One implementation for both engines: ``sql/sessions.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

__all__ = ["Session", "SessionStore"]


@dataclass(frozen=True, slots=True)
class Session:
    tenant_id: str
    #: the token every form of the session carries (synchronizer token pattern)
    csrf: str
    created_at: datetime
    expires_at: datetime
    #: the user who signed in (``shared.stores.team``); None: the tenant's API token did
    user_id: str | None = None


class SessionStore(Protocol):
    async def create_session(
        self, tenant_id: str, *, ttl_s: float, now: datetime | None = None, user_id: str | None = None
    ) -> tuple[str, Session]:
        """A new session: its id (the cookie's value, returned once) and the session."""
        ...

    async def get_session(self, session_id: str, *, now: datetime | None = None) -> Session | None:
        """The live session of ``session_id``; None when unknown or expired."""
        ...

    async def delete_session(self, session_id: str) -> bool:
        """Sign out; True when there was a session."""
        ...

    async def prune_sessions(self, now: datetime | None = None) -> int:
        """Delete expired sessions; how many."""
        ...
