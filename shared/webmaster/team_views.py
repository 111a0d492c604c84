"""The shapes of team access in and out of the API (``shared/webmaster/team.py``): pydantic models, from which the
OpenAPI document's schemas are generated (``cubes/api/openapi_schemas.py``), so the document and the
checks agree. The console shows the same fields.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.stores.team import ApiToken, Invitation, User
from shared.webmaster.team import TeamRefused

__all__ = [
    "InvitationIn",
    "InvitationIssued",
    "InvitationView",
    "RoleIn",
    "TokenIn",
    "TokenIssued",
    "TokenView",
    "UserView",
    "read_model",
]

RoleName = Literal["owner", "editor", "viewer"]
ScopeName = Literal["read", "write", "owner"]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TokenIn(_In):
    """A new API token: its name (what it is for) and scope (read: a viewer's calls; write: an editor's;
    owner: everything, the team's operations too)."""

    name: str = Field(min_length=1, max_length=80)
    scope: ScopeName = "read"


class InvitationIn(_In):
    """Invite someone by the e-mail address or name they will sign in with, to a role."""

    login: str = Field(min_length=1, max_length=254)
    role: RoleName = "viewer"


class RoleIn(_In):
    role: RoleName


class TokenView(BaseModel):
    token_id: str
    name: str
    scope: ScopeName
    created_at: datetime
    last_used_at: datetime | None = Field(description="the last call made with it (to the minute); null: never")

    @classmethod
    def of(cls, token: ApiToken) -> TokenView:
        return cls.model_validate(
            {k: getattr(token, k) for k in ("token_id", "name", "scope", "created_at", "last_used_at")}
        )


class TokenIssued(TokenView):
    token: str = Field(description="the token itself: shown this once, only its SHA-256 is kept")


class InvitationView(BaseModel):
    invitation_id: str
    login: str
    role: RoleName
    created_at: datetime
    expires_at: datetime
    state: Literal["open", "accepted", "revoked", "expired"]

    @classmethod
    def of(cls, invitation: Invitation, now: datetime) -> InvitationView:
        if invitation.accepted_at is not None:
            state = "accepted"
        elif invitation.revoked_at is not None:
            state = "revoked"
        else:
            state = "open" if invitation.expires_at > now else "expired"
        return cls.model_validate(
            {
                "invitation_id": invitation.invitation_id,
                "login": invitation.login,
                "role": invitation.role,
                "created_at": invitation.created_at,
                "expires_at": invitation.expires_at,
                "state": state,
            }
        )


class InvitationIssued(InvitationView):
    link: str = Field(description="the console page that accepts it: good once, until expires_at; shown this once")


class UserView(BaseModel):
    user_id: str
    login: str
    role: RoleName
    created_at: datetime

    @classmethod
    def of(cls, user: User) -> UserView:
        return cls.model_validate(
            {"user_id": user.user_id, "login": user.login, "role": user.role, "created_at": user.created_at}
        )


_M = TypeVar("_M", bound=BaseModel)


def read_model(model: type[_M], raw: object) -> _M:
    """``raw`` as ``model``, or ``TeamRefused`` naming the first field at fault."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise TeamRefused(".".join(str(p) for p in err["loc"]) or "body", err["msg"]) from None
