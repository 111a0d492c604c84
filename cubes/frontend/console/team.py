"""The console's team pages: users and invitations, API tokens, and accepting an invitation
(docs/architecture.md section 6, "Team access"; the API's twin is ``cubes/api/team.py``).

    GET  /console/users                  users, their roles, invitations (owners)
    POST /console/users/invite           invite by e-mail or name: the link shown once
    POST /console/users/{id}/role        POST /console/users/{id}/remove
    POST /console/users/invitations/{id}/revoke
    GET  /console/tokens                 the tenant's API tokens: name, scope, created, last used (owners)
    POST /console/tokens                 POST /console/tokens/{id}/rotate   POST /console/tokens/{id}/revoke
    GET  /console/invite?token=          an invitation: choose a password (no session needed)
    POST /console/invite                 accept it: the user is created and signed in

Every rule is ``shared.webmaster.team``'s and ``shared.webmaster.access``'s, as for the API. Accepting is guarded like
signing in: our own origin only, and failed tries count against the address (``SessionGate.logins``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from cubes.frontend.console import views
from cubes.frontend.console.context import ConsoleContext
from cubes.frontend.console.session import Signed
from cubes.frontend.jinja import duration
from shared.passwords import PASSWORD_MIN, WeakPassword
from shared.webmaster.access import AccessRefused, Role
from shared.webmaster.team import SCOPES, Team, TeamRefused, invite_link
from shared.webmaster.team_views import InvitationView

__all__ = ["add_routes"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
View = Callable[[web.Request, Signed], Awaitable[web.StreamResponse]]
Action = Callable[[web.Request, Signed, dict[str, str]], Awaitable[web.StreamResponse]]
_ROLES = tuple(Role)
_SECRET_MAX = 256


async def users_page(c: ConsoleContext, signed: Signed, *, status: int = 200, **extra: Any) -> web.Response:
    now = c.now()
    invitations = [InvitationView.of(i, now) for i in await c.stores.tenants.team.invitations(signed.tenant_id)]
    return c.page(
        "console/users.html",
        "Users",
        status=status,
        signed=signed,
        users=await c.stores.tenants.team.users(signed.tenant_id),
        invitations=invitations,
        roles=_ROLES,
        **{"notice": "", "errors": [], "link": "", "invited": "", "expires": None, **extra},
    )


async def tokens_page(c: ConsoleContext, signed: Signed, *, status: int = 200, **extra: Any) -> web.Response:
    tokens = await c.stores.tenants.team.tokens(signed.tenant_id)
    return c.page(
        "console/tokens.html",
        "API tokens",
        status=status,
        signed=signed,
        tokens=tokens,
        scopes=SCOPES,
        **{"notice": "", "errors": [], "token": "", "token_name": "", **extra},
    )


def _invite_page(
    c: ConsoleContext, secret: str, invitation: object, *, error: str = "", status: int = 200
) -> web.Response:
    return c.page(
        "console/invite.html",
        "Invitation",
        status=status,
        secret=secret,
        invitation=invitation,
        error=error,
        password_min=PASSWORD_MIN,
    )


def add_routes(
    app: web.Application,
    c: ConsoleContext,
    page: Callable[..., Handler],
    action: Callable[..., Handler],
    read_form: Callable[[web.Request], Awaitable[dict[str, str]]],
) -> None:
    """The team's routes, wrapped by the console's ``page`` and ``action`` (session, CSRF, role);
    ``read_form`` reads a form as the console does (bounded, UTF-8 or ``ValueError``)."""
    team = Team(c.stores.tenants.team)

    async def refused(signed: Signed, show: Callable[..., Awaitable[web.Response]], exc: Exception) -> web.Response:
        status = (
            404 if isinstance(exc, AccessRefused) and exc.missing else 409 if isinstance(exc, AccessRefused) else 422
        )
        return await show(c, signed, status=status, errors=[str(exc)])

    async def invite(q: web.Request, s: Signed, f: dict[str, str]) -> web.StreamResponse:
        try:
            secret, invitation = await team.invite(s.tenant_id, f.get("login", ""), f.get("role", ""), c.now())
        except TeamRefused as exc:
            return await refused(s, users_page, exc)
        link = invite_link(c.settings.frontend.public_url, secret)
        return await users_page(
            c, s, link=link, invited=invitation.login, expires=invitation.expires_at, notice="Invitation made."
        )

    async def set_role(q: web.Request, s: Signed, f: dict[str, str]) -> web.StreamResponse:
        try:
            user = await team.set_role(s.tenant_id, q.match_info["user_id"], f.get("role", ""))
        except (AccessRefused, TeamRefused) as exc:
            return await refused(s, users_page, exc)
        return await users_page(c, s, notice=f"{user.login} is now {user.role}.")

    async def remove(q: web.Request, s: Signed, f: dict[str, str]) -> web.StreamResponse:
        try:
            await team.remove(s.tenant_id, q.match_info["user_id"])
        except AccessRefused as exc:
            return await refused(s, users_page, exc)
        raise web.HTTPSeeOther("/console/users")

    async def revoke_invitation(q: web.Request, s: Signed, f: dict[str, str]) -> web.StreamResponse:
        try:
            await team.revoke_invitation(s.tenant_id, q.match_info["invitation_id"], c.now())
        except AccessRefused as exc:
            return await refused(s, users_page, exc)
        return await users_page(c, s, notice="Invitation revoked.")

    async def create_token(q: web.Request, s: Signed, f: dict[str, str]) -> web.StreamResponse:
        try:
            token, row = await team.create_token(s.tenant_id, f.get("name", ""), f.get("scope", ""), c.now())
        except TeamRefused as exc:
            return await refused(s, tokens_page, exc)
        return await tokens_page(c, s, token=token, token_name=row.name, notice="Token created.")

    async def rotate_token(q: web.Request, s: Signed, f: dict[str, str]) -> web.StreamResponse:
        try:
            token, row = await team.rotate_token(s.tenant_id, q.match_info["token_id"], c.now())
        except AccessRefused as exc:
            return await refused(s, tokens_page, exc)
        return await tokens_page(
            c, s, token=token, token_name=row.name, notice="Token rotated: the old one is revoked."
        )

    async def revoke_token(q: web.Request, s: Signed, f: dict[str, str]) -> web.StreamResponse:
        try:
            await team.revoke_token(s.tenant_id, q.match_info["token_id"], c.now())
        except AccessRefused as exc:
            return await refused(s, tokens_page, exc)
        return await tokens_page(c, s, notice="Token revoked: calls made with it are refused.")

    async def invitation_page(request: web.Request) -> web.StreamResponse:
        secret = request.query.get("token", "")[:_SECRET_MAX]
        invitation = await c.stores.tenants.team.invitation(secret, now=c.now()) if secret else None
        return _invite_page(c, secret, invitation, status=200 if invitation else 404)

    async def accept(request: web.Request) -> web.StreamResponse:
        if not c.gate.same_origin(request):
            return views.login_page(c, error="This form came from another site: refused.", status=403)
        address = request.remote or ""
        wait = c.gate.logins.wait_s(address)
        if wait:
            return _invite_page(c, "", None, error=f"Too many failed tries: try again in {duration(wait)}.", status=429)
        try:
            form = await read_form(request)
        except ValueError as exc:
            return _invite_page(c, "", None, error=f"{exc}.", status=400)
        secret, password = form.get("token", "")[:_SECRET_MAX], form.get("password", "")
        invitation = await c.stores.tenants.team.invitation(secret, now=c.now()) if secret else None
        try:
            user = await team.accept(secret, password, c.now())
        except WeakPassword as exc:
            return _invite_page(c, secret, invitation, error=str(exc), status=422)
        except TeamRefused as exc:
            c.gate.logins.failed(address)
            return _invite_page(c, "", None, error=str(exc), status=404)
        response = web.HTTPSeeOther("/console")
        await c.gate.sign_in_user(user, response)
        raise response

    r = app.router
    r.add_get("/console/users", page(lambda q, s: users_page(c, s), team=True))
    r.add_post("/console/users/invite", action(invite, team=True))
    r.add_post("/console/users/{user_id}/role", action(set_role, team=True))
    r.add_post("/console/users/{user_id}/remove", action(remove, team=True))
    r.add_post("/console/users/invitations/{invitation_id}/revoke", action(revoke_invitation, team=True))
    r.add_get("/console/tokens", page(lambda q, s: tokens_page(c, s), team=True))
    r.add_post("/console/tokens", action(create_token, team=True))
    r.add_post("/console/tokens/{token_id}/rotate", action(rotate_token, team=True))
    r.add_post("/console/tokens/{token_id}/revoke", action(revoke_token, team=True))
    r.add_get("/console/invite", invitation_page)
    r.add_post("/console/invite", accept)
