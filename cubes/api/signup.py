"""Self-service sign-up: a webmaster gets a tenant and its API token (docs/architecture.md section 1).

``POST /api/v1/signup`` {name} — public. Creates a tenant and answers ``201``
with its id and its API token, which is shown this once: the store keeps only
its sha256 (``TenantStore.issue_token``), so a lost token is replaced, never
recovered. A tenant can do nothing until it claims and verifies a host
(``POST /api/v1/hosts``, then ``.../verify``), so a sign-up costs the pipeline
nothing but a row.

Rate-limited, because it is public, by the rule the console's sign-up form
follows too (``shared/webmaster/signup.py``). A refusal is ``429`` with ``Retry-After``.
``api.signup_enabled = false`` turns it off (``403``): the operator's
``turbocubes hosts add`` always works.
"""

from __future__ import annotations

from aiohttp import web

from cubes.api.bodies import read_json_object
from cubes.api.context import ctx_of
from cubes.api.errors import ApiError, FieldError, ValidationFailed, json_response
from cubes.api.throttle import retry_after_header
from shared.webmaster.signup import SignupLimiter, name_problem, sign_up

__all__ = ["SignupLimiter", "add_routes"]

_BODY_MAX = 2048


def _limiter(request: web.Request) -> SignupLimiter:
    ctx = ctx_of(request)
    holder = request.app[_HOLDER]
    if holder.limiter is None:
        holder.limiter = SignupLimiter(ctx.settings.api, ctx.clock)
    return holder.limiter


class _Holder:
    limiter: SignupLimiter | None = None


_HOLDER: web.AppKey[_Holder] = web.AppKey("signup", _Holder)


async def signup(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    if not ctx.settings.api.signup_enabled:
        raise ApiError(403, "forbidden", "self-service sign-up is off here (api.signup_enabled); ask the operator")
    wait = _limiter(request).admit(request.remote or "")
    if wait:
        after = retry_after_header(wait)
        raise ApiError(
            429, "rate_limited", f"too many sign-ups from here; retry after {after} s", headers={"Retry-After": after}
        )
    body = await read_json_object(request, _BODY_MAX)
    problems = [FieldError(k[:64], "unknown field") for k in sorted(set(body) - {"name"})[:10]]
    name = body.get("name")
    if (why := name_problem(name)) is not None:
        problems.append(FieldError("name", why))
    if problems:
        raise ValidationFailed(problems)
    assert isinstance(name, str)
    done = await sign_up(ctx.stores.tenants, name)
    return json_response(
        {
            "tenant_id": done.tenant_id,
            "name": done.name,
            "token": done.token,
            "token_shown_once": True,
            "next": {
                "claim_host": 'POST /api/v1/hosts {"url": "https://your.site/"} with Authorization: Bearer <token>',
                "verify_host": "POST /api/v1/hosts/{host}/verify once the token is published",
                "add_feed": 'POST /api/v1/feeds {"url": "https://your.site/feed.xml"}',
                "docs": "/docs",
            },
        },
        status=201,
        headers={"Cache-Control": "no-store"},
    )


def add_routes(app: web.Application) -> None:
    app[_HOLDER] = _Holder()
    app.router.add_post("/api/v1/signup", signup, name="signup")
