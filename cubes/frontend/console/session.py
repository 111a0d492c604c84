"""Console sign-in: a cookie session, CSRF-safe (docs/architecture.md sections 6 and 10).

* **Sign in** with the tenant's API token (``POST /console/login``, an owner's: a
  ``read`` or ``write`` token is for the API), or as one of the tenant's users with
  their login and password (``shared.webmaster.team.Team.sign_in``: scrypt); the token or
  password is checked and never kept; a new session id (256
  random bits) goes into the ``tc_session`` cookie -- ``HttpOnly``,
  ``SameSite=Strict``, ``Path=/console``, and ``Secure`` when the frontend's
  public URL is https -- and only its sha256 into the session store.
* **CSRF**: every form of a session carries the session's token (the
  synchronizer token pattern), compared in constant time; and every POST
  must come from our own origin when the browser says where it comes from
  (``SessionGate.same_origin``: ``Sec-Fetch-Site``, ``Origin``, ``Referer``). The
  login form has no session yet: it is guarded by the origin check -- ``Origin: null``
  and a foreign ``Referer`` are refused unless ``Sec-Fetch-Site: same-origin`` --
  and ``SameSite=Strict`` (no other site can make a browser send the cookie, nor
  read the answer), so no site can sign a visitor in to an attacker's tenant.
* **Encoding**: a form body that is not valid UTF-8 is a ``400`` (``routes._form``),
  before anything else reads it, signed in or not.
* **Sign out** (``POST /console/logout``) deletes the session row and the cookie.
* **Role**: a user's session has the user's role, read at every request (a
  demoted user is demoted at once; a removed one is signed out); a token's
  session is an owner's. The routes ask ``shared.webmaster.access.permit`` with it.

Signing in is throttled like a password form: per client address, a few
failed attempts a minute (``shared.attempts.FailedAttempts``, as the API's bearer tokens), so tokens cannot be guessed
through it (they could not anyway: 256 bits).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

from shared.attempts import FailedAttempts
from shared.clock import Clock
from shared.config import Settings
from shared.stores import Stores
from shared.stores.team import User
from shared.webmaster.access import ROLE_OF_SCOPE, Need, Role, may

__all__ = ["COOKIE", "SessionGate", "Signed"]

COOKIE = "tc_session"
#: failed sign-ins per client address before it waits; refilled one per ``_LOGIN_REFILL_S``
_LOGIN_FAILURES = 5
_LOGIN_REFILL_S = 12.0
#: the longest token anyone has (ours are ~46 characters); longer input is refused unread
_TOKEN_MAX = 256


@dataclass(frozen=True, slots=True)
class Signed:
    """The caller of a console page: a tenant, signed in, with the role of who signed in."""

    tenant_id: str
    csrf: str
    session_id: str
    role: str = Role.OWNER
    #: the user's login; "" for a session of the tenant's token
    login: str = ""

    @property
    def writes(self) -> bool:
        """Whether the role changes things (``shared.webmaster.access.may``): a page shows its forms only then."""
        return may(self.role, Need.WRITE)

    @property
    def owns(self) -> bool:
        """Whether the role is the team's (an owner): the team's pages and the notifications' settings."""
        return may(self.role, Need.TEAM)


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


class SessionGate:
    """Reads and writes the session of a request."""

    def __init__(self, settings: Settings, stores: Stores, clock: Clock) -> None:
        self.stores = stores
        self.clock = clock
        self.ttl_s = settings.frontend.session_ttl_s
        public = urlsplit(settings.frontend.public_url)
        self.secure = public.scheme == "https"
        self.origin = f"{public.scheme}://{public.netloc}" if public.netloc else ""
        self.logins = FailedAttempts(clock, failures=_LOGIN_FAILURES, refill_s=_LOGIN_REFILL_S)

    async def signed(self, request: web.Request) -> Signed | None:
        session_id = request.cookies.get(COOKIE, "")
        if not session_id or len(session_id) > _TOKEN_MAX:
            return None
        session = await self.stores.sessions.get_session(session_id, now=self.clock.now())
        if session is None:
            return None
        if session.user_id is None:
            return Signed(session.tenant_id, session.csrf, session_id)
        user = await self.stores.tenants.team.user(session.user_id)
        if user is None or user.tenant_id != session.tenant_id:
            return None  # removed since: signed out
        return Signed(session.tenant_id, session.csrf, session_id, user.role, user.login)

    def same_origin(self, request: web.Request) -> bool:
        """False when the browser says, or lets us see, that the request comes from another site.

        CSRF's first layer, and the login form's only one (it has no session token yet). What
        a browser tells, strongest first: ``Sec-Fetch-Site`` (``same-origin`` passes; ``cross-site``
        or ``same-site`` never does), then ``Origin``, then ``Referer``. ``Origin: null`` (a
        sandboxed frame, a ``data:`` page, a redirect from elsewhere) and a foreign ``Referer``
        are another site's unless ``Sec-Fetch-Site: same-origin`` vouches for the request. No
        header at all is a client that is not a browser (curl, a script): nothing to forge.
        """
        here = {f"{request.scheme}://{request.host}", self.origin} - {""}
        site = request.headers.get("Sec-Fetch-Site")
        if site not in (None, "same-origin", "none"):
            return False
        origin = request.headers.get("Origin")
        if origin is not None and origin != "null":
            return origin in here
        if site == "same-origin":
            return True
        if origin == "null":
            return False
        referer = request.headers.get("Referer")
        if referer:
            return _origin_of(referer) in here
        return True

    def csrf_ok(self, signed: Signed, form_token: str) -> bool:
        return hmac.compare_digest(signed.csrf.encode(), form_token.encode())

    async def sign_in(self, token: str, response: web.StreamResponse) -> str | None:
        """The tenant of ``token``, with a fresh session cookie set on ``response``; None for a bad token."""
        token = token.strip()
        if not token or len(token) > _TOKEN_MAX:
            return None
        grant = await self.stores.tenants.team.grant(token)
        if grant is None or ROLE_OF_SCOPE.get(grant.scope) != Role.OWNER:
            return None  # a read or write token is for the API; its holders sign in as users
        now = self.clock.now()
        if grant.stale(now):  # a sign-in is a use of the token, as an API call is (cubes/api/auth.py)
            await self.stores.tenants.team.touch_token(grant.token_id, now=now)
        await self.start(grant.tenant_id, response)
        return grant.tenant_id

    async def sign_in_user(self, user: User, response: web.StreamResponse) -> str:
        """A fresh session of ``user`` (whose password was checked), its cookie set on ``response``; its id."""
        return await self._open(user.tenant_id, user.user_id, response)

    async def start(self, tenant_id: str, response: web.StreamResponse) -> str:
        """A fresh owner's session of ``tenant_id`` (an owner token's sign-in, a sign-up), its cookie set; its id."""
        return await self._open(tenant_id, None, response)

    async def _open(self, tenant_id: str, user_id: str | None, response: web.StreamResponse) -> str:
        session_id, _ = await self.stores.sessions.create_session(
            tenant_id, ttl_s=self.ttl_s, now=self.clock.now(), user_id=user_id
        )
        response.set_cookie(
            COOKIE,
            session_id,
            max_age=int(self.ttl_s),
            path="/console",
            secure=self.secure,
            httponly=True,
            samesite="Strict",
        )
        await self.stores.sessions.prune_sessions(self.clock.now())  # the sign-in pays for the sweep
        return session_id

    async def sign_out(self, signed: Signed, response: web.StreamResponse) -> None:
        await self.stores.sessions.delete_session(signed.session_id)
        response.del_cookie(COOKIE, path="/console")
