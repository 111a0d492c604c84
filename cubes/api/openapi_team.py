"""The OpenAPI part of team access (``team.py``): users, invitations and API tokens, owners only.

The bodies' schemas are generated from the models that check them (``shared/webmaster/team_views.py``).
"""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_parts import json_body, ok, op, path_param
from shared.webmaster.team_views import (
    InvitationIn,
    InvitationIssued,
    InvitationView,
    RoleIn,
    TokenIn,
    TokenIssued,
    TokenView,
    UserView,
)

__all__ = ["team_paths", "team_schemas"]

_OWNERS = " Owners only (a token of scope owner): another role is answered 403 role_forbids."


def team_schemas() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for model in (TokenIn, TokenView, TokenIssued, InvitationIn, InvitationView, InvitationIssued, RoleIn, UserView):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}", mode="serialization")
        out.update(schema.pop("$defs", {}))
        out[model.__name__] = schema
    for name, item in (("TokenList", "tokens"), ("UserList", "users"), ("InvitationList", "invitations")):
        view = {"tokens": "TokenView", "users": "UserView", "invitations": "InvitationView"}[item]
        out[name] = {
            "type": "object",
            "required": [item],
            "properties": {item: {"type": "array", "items": {"$ref": f"#/components/schemas/{view}"}}},
        }
    return out


def _op(summary: str, answer: dict[int, Any], errors: tuple[int, ...], op_id: str, **kw: Any) -> dict[str, Any]:
    return op(summary + _OWNERS, answer, errors, tag="team", op_id=op_id, **kw)


def _gone(description: str) -> dict[int, Any]:
    return {204: {"description": description}}


def team_paths() -> dict[str, Any]:
    token = [path_param("token_id", "the token's id (GET /api/v1/team/tokens)")]
    user = [path_param("user_id", "the user's id (GET /api/v1/team/users)")]
    invitation = [path_param("invitation_id", "the invitation's id")]
    return {
        "/api/v1/team/tokens": {
            "get": _op(
                "Your live API tokens: name, scope, created, last used",
                ok(200, "TokenList", "tokens"),
                (403,),
                "listTokens",
            ),
            "post": _op(
                "Create an API token with a name and a scope (read, write or owner); the token is shown once",
                ok(201, "TokenIssued", "created"),
                (400, 403, 415, 422),
                "createToken",
                body=json_body("TokenIn"),
            ),
        },
        "/api/v1/team/tokens/{token_id}/rotate": {
            "post": _op(
                "Rotate a token: it is revoked, and a new one of its name and scope is shown once",
                ok(200, "TokenIssued", "the new token"),
                (403, 404),
                "rotateToken",
                params=token,
            )
        },
        "/api/v1/team/tokens/{token_id}": {
            "delete": _op(
                "Revoke a token: calls made with it are refused",
                _gone("revoked"),
                (403, 404),
                "revokeToken",
                params=token,
            )
        },
        "/api/v1/team/users": {
            "get": _op("Your tenant's users and their roles", ok(200, "UserList", "users"), (403,), "listUsers")
        },
        "/api/v1/team/users/{user_id}": {
            "patch": _op(
                "Change a user's role; the last owner stays an owner (409 last_owner)",
                ok(200, "UserView", "changed"),
                (400, 403, 404, 409, 415, 422),
                "setUserRole",
                params=user,
                body=json_body("RoleIn"),
            ),
            "delete": _op(
                "Remove a user (their console sessions end); the last owner cannot be removed (409 last_owner)",
                _gone("removed"),
                (403, 404, 409),
                "removeUser",
                params=user,
            ),
        },
        "/api/v1/team/invitations": {
            "get": _op(
                "Your invitations, the newest first",
                ok(200, "InvitationList", "invitations"),
                (403,),
                "listInvitations",
            ),
            "post": _op(
                "Invite someone by e-mail address or name to a role: the link (shown once) is good once, for a week",
                ok(201, "InvitationIssued", "invited"),
                (400, 403, 415, 422),
                "invite",
                body=json_body("InvitationIn"),
            ),
        },
        "/api/v1/team/invitations/{invitation_id}": {
            "delete": _op(
                "Revoke an open invitation", _gone("revoked"), (403, 404), "revokeInvitation", params=invitation
            )
        },
    }
