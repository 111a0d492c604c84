"""Team access through the API (docs/architecture.md section 6, "Team access"; ``shared/webmaster/team.py``).

Owners only (the gate asks ``shared.webmaster.access.permit`` with ``Need.TEAM`` for every ``team.`` route):

* ``GET /api/v1/team/tokens``, ``POST`` {name, scope} (201, the token shown once),
  ``POST /api/v1/team/tokens/{token_id}/rotate`` (the old one revoked, a new one of its name and scope),
  ``DELETE /api/v1/team/tokens/{token_id}``;
* ``GET /api/v1/team/users``, ``PATCH /api/v1/team/users/{user_id}`` {role},
  ``DELETE /api/v1/team/users/{user_id}`` (409 ``last_owner`` for the tenant's last owner);
* ``GET /api/v1/team/invitations``, ``POST`` {login, role} (201, the link shown once: the console's
  page that accepts it), ``DELETE /api/v1/team/invitations/{invitation_id}``.

Another tenant's token, user or invitation answers 404, as an unknown id does.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from aiohttp import web
from pydantic import BaseModel

from cubes.api.auth import TENANT, refusal
from cubes.api.bodies import read_json_object
from cubes.api.context import ApiContext, ctx_of
from cubes.api.errors import FieldError, ValidationFailed, json_response
from cubes.api.params import path_id
from shared.webmaster.access import AccessRefused
from shared.webmaster.team import Team, TeamRefused, invite_link
from shared.webmaster.team_views import (
    InvitationIn,
    InvitationIssued,
    InvitationView,
    RoleIn,
    TokenIn,
    TokenIssued,
    TokenView,
    UserView,
    read_model,
)

__all__ = ["add_routes"]

_BODY_MAX = 4 * 1024
_T = TypeVar("_T")
_M = TypeVar("_M", bound=BaseModel)


def _invalid(exc: TeamRefused) -> ValidationFailed:
    return ValidationFailed([FieldError(exc.field, str(exc))])


async def _answer(work: Awaitable[_T]) -> _T:
    """``work``, its refusals said the API's way (404 / 409 / 422)."""
    try:
        return await work
    except AccessRefused as exc:
        raise refusal(exc) from None
    except TeamRefused as exc:
        raise _invalid(exc) from None


async def _read(request: web.Request, model: type[_M]) -> _M:
    body = await read_json_object(request, _BODY_MAX)
    try:
        return read_model(model, body)
    except TeamRefused as exc:
        raise _invalid(exc) from None


def _team(ctx: ApiContext) -> Team:
    return Team(ctx.stores.tenants.team)


async def list_tokens(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    tokens = await ctx.stores.tenants.team.tokens(request[TENANT])
    return json_response({"tokens": [TokenView.of(t).model_dump(mode="json") for t in tokens]})


async def create_token(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    wanted = await _read(request, TokenIn)
    token, row = await _answer(_team(ctx).create_token(request[TENANT], wanted.name, wanted.scope, ctx.clock.now()))
    issued = TokenIssued(**TokenView.of(row).model_dump(), token=token)
    return json_response(issued.model_dump(mode="json"), status=201)


async def rotate_token(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    token, row = await _answer(_team(ctx).rotate_token(request[TENANT], path_id(request, "token_id"), ctx.clock.now()))
    ctx.auth.forget()  # the old token stops at once on this instance
    return json_response(TokenIssued(**TokenView.of(row).model_dump(), token=token).model_dump(mode="json"))


async def revoke_token(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    await _answer(_team(ctx).revoke_token(request[TENANT], path_id(request, "token_id"), ctx.clock.now()))
    ctx.auth.forget()
    return web.Response(status=204)


async def list_users(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    users = await ctx.stores.tenants.team.users(request[TENANT])
    return json_response({"users": [UserView.of(u).model_dump(mode="json") for u in users]})


async def set_role(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    wanted = await _read(request, RoleIn)
    user = await _answer(_team(ctx).set_role(request[TENANT], path_id(request, "user_id"), wanted.role))
    return json_response(UserView.of(user).model_dump(mode="json"))


async def remove_user(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    await _answer(_team(ctx).remove(request[TENANT], path_id(request, "user_id")))
    return web.Response(status=204)


async def list_invitations(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    now = ctx.clock.now()
    invitations = await ctx.stores.tenants.team.invitations(request[TENANT])
    return json_response({"invitations": [InvitationView.of(i, now).model_dump(mode="json") for i in invitations]})


async def invite(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    wanted = await _read(request, InvitationIn)
    now = ctx.clock.now()
    secret, invitation = await _answer(_team(ctx).invite(request[TENANT], wanted.login, wanted.role, now))
    link = invite_link(ctx.settings.frontend.public_url, secret)
    issued = InvitationIssued(**InvitationView.of(invitation, now).model_dump(), link=link)
    return json_response(issued.model_dump(mode="json"), status=201)


async def revoke_invitation(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    await _answer(_team(ctx).revoke_invitation(request[TENANT], path_id(request, "invitation_id"), ctx.clock.now()))
    return web.Response(status=204)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/api/v1/team/tokens", list_tokens, name="team.tokens.list", allow_head=False)
    router.add_post("/api/v1/team/tokens", create_token, name="team.tokens.create")
    router.add_post("/api/v1/team/tokens/{token_id}/rotate", rotate_token, name="team.tokens.rotate")
    router.add_delete("/api/v1/team/tokens/{token_id}", revoke_token, name="team.tokens.revoke")
    router.add_get("/api/v1/team/users", list_users, name="team.users.list", allow_head=False)
    router.add_patch("/api/v1/team/users/{user_id}", set_role, name="team.users.role")
    router.add_delete("/api/v1/team/users/{user_id}", remove_user, name="team.users.remove")
    router.add_get("/api/v1/team/invitations", list_invitations, name="team.invitations.list", allow_head=False)
    router.add_post("/api/v1/team/invitations", invite, name="team.invitations.create")
    router.add_delete("/api/v1/team/invitations/{invitation_id}", revoke_invitation, name="team.invitations.revoke")
