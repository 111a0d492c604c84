"""What the API and the console do with a tenant's notifications, written once (docs/architecture.md
section 10, "Notifications").

``save`` checks and keeps the settings; a webhook set for the first time (or to another URL) gets a
new secret, sealed with ``secrets.key`` (``shared/secretbox.py``) as a feed's credentials are, and
answered once: the tenant keeps it to verify our signatures. ``send_test`` adds a test event that the
notifier delivers at its next round to every channel set. ``overview`` is what both show: the
settings, the latest deliveries and the problem of an endpoint that does not take them. Only an
owner sets them (the routes ask the role: the team's need) and sees the webhook's URL whole; an
editor or a viewer sees its origin (``https://hooks.example.com/…``) wherever it is shown, since the
rest of a webhook URL is often its credential (a path or query token).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from shared.notify.events import Event, EventKind
from shared.notify.notifier import endpoint_problems
from shared.notify.settings import Channel, NotifySettings, SettingsRefused, parse_settings
from shared.notify.signing import new_secret
from shared.problems import Problem
from shared.secretbox import SecretBox
from shared.stores.notify import Delivery, NotifyStore

__all__ = ["Overview", "Saved", "overview", "save", "send_test", "webhook_origin"]

#: deliveries a log shows
LOG_LIMIT = 50


@dataclass(frozen=True, slots=True)
class Saved:
    settings: NotifySettings
    #: the webhook's new secret, answered this once (None: it was kept, or there is no webhook)
    secret: str | None


@dataclass(frozen=True, slots=True)
class Overview:
    settings: NotifySettings
    deliveries: list[Delivery]
    problems: list[Problem]


async def save(store: NotifyStore, box: SecretBox, tenant_id: str, body: Any, *, now: datetime) -> Saved:
    """Save the settings ``body`` gives (``parse_settings``); a new webhook, or ``"rotate_secret": true``, gets a new
    secret, answered this once (the old one stops signing at once)."""
    current = await store.settings(tenant_id)
    settings = parse_settings(tenant_id, body, current=current)
    rotate = body.get("rotate_secret", False)
    if not isinstance(rotate, bool):
        raise SettingsRefused("rotate_secret", "true (a new webhook secret) or false")
    if rotate and not settings.webhook_url:
        raise SettingsRefused("rotate_secret", "there is no webhook whose secret to renew: set webhook_url")
    secret = None
    changed = current is None or current.webhook_url != settings.webhook_url
    if settings.webhook_url and (settings.sealed_secret is None or changed or rotate):
        if not box.ready:
            raise SettingsRefused("webhook_url", "secrets.key is not set: a webhook's secret cannot be kept")
        secret = new_secret()
        settings = replace(settings, sealed_secret=box.seal({"secret": secret}))
    await store.put_settings(settings, now=now)
    return Saved(settings, secret)


async def send_test(store: NotifyStore, tenant_id: str, *, now: datetime) -> Event:
    """A test event for the tenant (delivered at the notifier's next round)."""
    stamp = hashlib.sha256(f"{tenant_id}/{now.isoformat()}".encode()).hexdigest()[:16]
    event = Event(
        f"test/{tenant_id}/{stamp}",
        tenant_id,
        EventKind.test,
        now,
        "",
        "test",
        {"message": "a test notification: your endpoint received it"},
    )
    await store.add_event(event)
    return event


def webhook_origin(url: str) -> str:
    """A webhook URL as an editor or a viewer sees it: its scheme, host and port, then an ellipsis (a URL
    with a user or a password is refused where it is set, so the netloc is the host and port)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/\u2026"


async def overview(store: NotifyStore, tenant_id: str, *, owner: bool) -> Overview:
    """What the tenant's settings and log show to a caller (``owner``: the webhook's URL whole)."""
    settings = await store.settings(tenant_id) or NotifySettings(tenant_id)
    log = await store.deliveries(tenant_id, limit=LOG_LIMIT)
    if not owner:
        if settings.webhook_url:
            settings = replace(settings, webhook_url=webhook_origin(settings.webhook_url))
        log = [replace(d, target=webhook_origin(d.target)) if d.channel is Channel.webhook else d for d in log]
    return Overview(settings, log, endpoint_problems(log))
