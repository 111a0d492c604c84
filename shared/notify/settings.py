"""A tenant's notification settings and the one rule of who is told what, how (docs/architecture.md
section 10, "Notifications").

A tenant gives at most one webhook URL and one e-mail address, and for each kind of event says
``now`` (each channel it set gets it at once), ``digest`` (it is in the next daily e-mail) or ``off``.
``channels`` is the only place that decides: every event of a tenant goes through it, and nothing
else sends anything. Every value is checked where it enters (``parse_settings``), each refusal naming
its field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from yarl import URL

from shared.errors import Reject
from shared.notify.events import Event, EventKind

__all__ = [
    "DEFAULT_WHEN",
    "Channel",
    "NotifySettings",
    "SettingsRefused",
    "When",
    "channels",
    "parse_settings",
]


class When(StrEnum):
    now = "now"
    digest = "digest"
    off = "off"


class Channel(StrEnum):
    webhook = "webhook"
    email = "email"
    #: the daily e-mail that gathers every ``digest`` event
    digest = "digest"


#: what a tenant that said nothing about a kind gets: problems and failures at once, the rest in the digest
DEFAULT_WHEN: Mapping[EventKind, When] = {
    EventKind.problem_new: When.now,
    EventKind.problem_resolved: When.now,
    EventKind.feed_failing: When.now,
    EventKind.feed_recovered: When.now,
    EventKind.catalog_held: When.now,
    EventKind.pages_held: When.now,
    EventKind.right_changed: When.now,
    EventKind.task_done: When.digest,
    EventKind.autoparser_unavailable: When.now,
}

#: a webhook URL or an e-mail address past this is refused (a URL of 2 KB is already odd)
_MAX_URL = 2048
_MAX_EMAIL = 254
#: one @, no blanks or angle brackets (header injection), a dot in the domain: the address is also
#: checked by the SMTP server; this keeps what cannot be an address out of a header
_EMAIL = re.compile(r"[^\s@<>,;\"]{1,64}@[^\s@<>,;\"]+\.[^\s@<>,;\"]+")


class SettingsRefused(Reject):
    """A value of the settings cannot be used; ``field`` names it."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


@dataclass(frozen=True, slots=True)
class NotifySettings:
    tenant_id: str
    webhook_url: str | None = None
    email: str | None = None
    #: the kinds the tenant set; the others are ``DEFAULT_WHEN``'s
    when: Mapping[EventKind, When] = field(default_factory=dict)
    #: the webhook's secret, sealed (``shared/secretbox.py``); never answered after it was made
    sealed_secret: str | None = None

    def when_of(self, kind: EventKind) -> When:
        return self.when.get(kind, DEFAULT_WHEN.get(kind, When.now))

    def to_json(self) -> dict[str, Any]:
        return {
            "webhook_url": self.webhook_url,
            "email": self.email,
            "events": {k.value: self.when_of(k).value for k in DEFAULT_WHEN},
            "webhook_secret_set": self.sealed_secret is not None,
        }


def channels(event: Event, settings: NotifySettings | None) -> list[Channel]:
    """Where ``event`` goes for its tenant: each channel set for a ``now`` kind, the digest for a
    ``digest`` kind with an e-mail address, nothing for ``off`` (a test goes to every channel set)."""
    if settings is None:
        return []
    when = When.now if event.kind is EventKind.test else settings.when_of(event.kind)
    if when is When.off:
        return []
    if when is When.digest:
        return [Channel.digest] if settings.email else []
    out = []
    if settings.webhook_url:
        out.append(Channel.webhook)
    if settings.email:
        out.append(Channel.email)
    return out


def _url(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > _MAX_URL:
        raise SettingsRefused("webhook_url", f"an http(s) URL of at most {_MAX_URL} characters")
    try:
        url = URL(value)
    except ValueError as exc:
        raise SettingsRefused("webhook_url", f"not a URL: {exc}") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise SettingsRefused("webhook_url", "an http(s) URL with a host (https://example.com/hook)")
    if url.user or url.password:
        raise SettingsRefused("webhook_url", "no user or password in the URL: the signature proves the sender")
    return str(url)


def _email(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > _MAX_EMAIL or not _EMAIL.fullmatch(value):
        raise SettingsRefused("email", "one address like webmaster@example.com")
    return value


#: a settings body's fields (``rotate_secret`` is an order, not a setting: ``shared.notify.service.save`` reads it)
_FIELDS = ("webhook_url", "email", "events", "rotate_secret")


def parse_settings(tenant_id: str, body: Any, *, current: NotifySettings | None = None) -> NotifySettings:
    """The settings a request body gives (``webhook_url``, ``email``, ``events``: kind -> now / digest /
    off); a key left out keeps its current value, ``null`` or ``""`` clears it."""
    if not isinstance(body, dict):
        raise SettingsRefused("body", "a JSON object with webhook_url, email and events")
    unknown = set(body) - set(_FIELDS)
    if unknown:
        raise SettingsRefused(sorted(unknown)[0], f"unknown field; known: {', '.join(_FIELDS)}")
    base = current or NotifySettings(tenant_id)
    webhook = _url(body["webhook_url"]) if "webhook_url" in body else base.webhook_url
    email = _email(body["email"]) if "email" in body else base.email
    when = dict(base.when)
    events = body.get("events", {})
    if not isinstance(events, dict):
        raise SettingsRefused("events", "an object of kind -> now, digest or off")
    kinds = {k.value: k for k in DEFAULT_WHEN}
    for name, value in events.items():
        if name not in kinds:
            raise SettingsRefused(f"events.{name}", f"unknown kind; known: {', '.join(sorted(kinds))}")
        if not isinstance(value, str) or value not in When.__members__:
            raise SettingsRefused(f"events.{name}", "now, digest or off")
        when[kinds[name]] = When(value)
    secret = base.sealed_secret if webhook else None
    return NotifySettings(tenant_id, webhook, email, when, secret)
