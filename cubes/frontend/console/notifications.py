"""The console's notifications: ``GET /console/notifications`` (the settings, the delivery log, an
endpoint that fails), ``POST /console/notifications`` (save) and ``POST /console/notifications/test``.

The API's rules and service (``shared/notify/service.py``): the same checks, the same secret made once
and shown once, on the page that answers the save. Saving is an owner's (the route is the team's); an
editor or a viewer reads the settings, the webhook as its origin only. Only the signed-in tenant's settings and log are
ever read or written.
"""

from __future__ import annotations

from aiohttp import web

from cubes.frontend.console.context import ConsoleContext
from cubes.frontend.console.session import Signed
from shared.notify.service import overview, save, send_test
from shared.notify.settings import DEFAULT_WHEN, SettingsRefused, When
from shared.secretbox import SecretBox

__all__ = ["notifications_page", "save_notifications", "test_notifications"]

#: what each kind of event is called on the page
_KINDS = {
    "problem.new": "A new problem on a feed",
    "problem.resolved": "A problem resolved",
    "feed.failing": "A feed that starts failing",
    "feed.recovered": "A failing feed that works again",
    "catalog.held": "Pages held back (a catalog lost half of its offers)",
    "pages.held": "A page held back (it lost content)",
    "right.changed": "A right on your site lapses, ends or changes hands",
    "task.done": "An upload task or check finished",
    "autoparser.unavailable": "A host's autoparser turned unavailable",
}


async def notifications_page(
    c: ConsoleContext,
    signed: Signed,
    *,
    secret: str | None = None,
    notice: str = "",
    errors: list[str] | None = None,
    status: int = 200,
) -> web.Response:
    seen = await overview(c.stores.notify, signed.tenant_id, owner=signed.owns)
    return c.page(
        "console/notifications.html",
        "Notifications",
        status=status,
        signed=signed,
        settings=seen.settings,
        kinds=[(k.value, _KINDS[k.value], seen.settings.when_of(k).value) for k in DEFAULT_WHEN],
        choices=[w.value for w in When],
        deliveries=seen.deliveries,
        problems=seen.problems,
        secret=secret,
        notice=notice,
        errors=errors or [],
    )


async def save_notifications(c: ConsoleContext, signed: Signed, form: dict[str, str]) -> web.Response:
    body = {
        "webhook_url": form.get("webhook_url", "").strip() or None,
        "email": form.get("email", "").strip() or None,
        "events": {k.value: form[f"when.{k.value}"] for k in DEFAULT_WHEN if f"when.{k.value}" in form},
        "rotate_secret": form.get("rotate_secret") == "1",
    }
    try:
        saved = await save(
            c.stores.notify, SecretBox.from_settings(c.settings), signed.tenant_id, body, now=c.clock.now()
        )
    except SettingsRefused as exc:
        return await notifications_page(c, signed, errors=[str(exc)], status=422)
    return await notifications_page(c, signed, secret=saved.secret, notice="Notifications saved.")


async def test_notifications(c: ConsoleContext, signed: Signed) -> web.Response:
    await send_test(c.stores.notify, signed.tenant_id, now=c.clock.now())
    return await notifications_page(
        c, signed, notice="A test is on its way to every channel you set: its delivery shows below in a few seconds."
    )
