"""A tenant's notifications (docs/architecture.md section 10, "Notifications"; ``shared/notify/``).

* ``GET /api/v1/notifications`` — the settings (webhook URL, e-mail address, each kind of event:
  ``now``, ``digest`` or ``off``; never the webhook's secret), and the problem of an endpoint that did
  not take its deliveries (``notify.endpoint_failing``);
* ``PUT /api/v1/notifications`` {webhook_url, email, events} — set them, owners only (its route is the
  team's: where the tenant's events go, and the webhook's secret); a webhook set for the first
  time or to another URL answers its new ``webhook_secret`` this once (keep it: every POST is signed
  with it, ``X-Turbocubes-Signature: v1=<HMAC-SHA256 of "<X-Turbocubes-Timestamp>.<body>">``);
* ``POST /api/v1/notifications/test`` — a test event to every channel set, within seconds;
* ``GET /api/v1/notifications/deliveries`` — the delivery log, the newest first: what was sent where,
  its attempts, the endpoint's answer.

Everything is the caller's own: no operation names another tenant, and none takes one. An editor or a
viewer reads the webhook's URL as its origin only (``shared.notify.service.overview``).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cubes.api.auth import ROLE, TENANT
from cubes.api.bodies import read_json_object
from cubes.api.context import ctx_of
from cubes.api.errors import FieldError, ValidationFailed, json_response
from shared.notify.service import overview, save, send_test
from shared.notify.settings import SettingsRefused
from shared.secretbox import SecretBox
from shared.stores import Delivery
from shared.webmaster.access import Need, may

__all__ = ["add_routes", "delivery_json"]

#: settings are a few hundred bytes
_BODY_MAX = 8 * 1024


def delivery_json(d: Delivery) -> dict[str, Any]:
    return {
        "delivery_id": d.delivery_id,
        "event": d.event.payload(),
        "channel": d.channel.value,
        "target": d.target,
        "status": d.status.value,
        "attempts": d.attempts,
        "created_at": d.created_at,
        "last_attempt_at": d.last_at,
        "next_attempt_at": d.next_at if d.status.value == "pending" else None,
        "http_status": d.http_status,
        "error": d.error,
    }


def _owner(request: web.Request) -> bool:
    return may(request[ROLE], Need.TEAM)


async def get_settings(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    seen = await overview(ctx.stores.notify, request[TENANT], owner=_owner(request))
    return json_response({**seen.settings.to_json(), "problems": [p.as_dict() for p in seen.problems]})


async def put_settings(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    body = await read_json_object(request, _BODY_MAX)
    try:
        saved = await save(
            ctx.stores.notify, SecretBox.from_settings(ctx.settings), request[TENANT], body, now=ctx.clock.now()
        )
    except SettingsRefused as exc:
        raise ValidationFailed([FieldError(exc.field[:64], str(exc).split(": ", 1)[-1])]) from None
    out = saved.settings.to_json()
    if saved.secret is not None:
        out["webhook_secret"] = saved.secret
    return json_response(out)


async def post_test(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    event = await send_test(ctx.stores.notify, request[TENANT], now=ctx.clock.now())
    return json_response({"event_id": event.event_id}, status=202)


async def list_deliveries(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    seen = await overview(ctx.stores.notify, request[TENANT], owner=_owner(request))
    return json_response({"deliveries": [delivery_json(d) for d in seen.deliveries]})


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/api/v1/notifications", get_settings, name="notifications.get", allow_head=False)
    # the team's (owners only, cubes/api/gate.py): the webhook and its secret
    router.add_put("/api/v1/notifications", put_settings, name="team.notifications.put")
    router.add_post("/api/v1/notifications/test", post_test, name="notifications.test")
    router.add_get(
        "/api/v1/notifications/deliveries", list_deliveries, name="notifications.deliveries", allow_head=False
    )
