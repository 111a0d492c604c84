"""The notifications' part of the OpenAPI document (``cubes/api/notifications.py``)."""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_parts import json_body, ok, op
from shared.notify.events import EventKind
from shared.notify.settings import DEFAULT_WHEN, Channel, When
from shared.stores import DeliveryStatus

__all__ = ["notify_paths", "notify_schemas"]

_TIME = {"type": "string", "format": "date-time"}
_NULLABLE_TIME = {"type": ["string", "null"], "format": "date-time"}
_WHEN = {"type": "string", "enum": [w.value for w in When]}
_EVENTS = {
    "type": "object",
    "description": "each kind of event: now (every channel set), digest (the daily e-mail) or off",
    "properties": {k.value: _WHEN for k in DEFAULT_WHEN},
    "additionalProperties": False,
}
_SIGNED = (
    "Each webhook POST is signed: X-Turbocubes-Timestamp (Unix seconds) and X-Turbocubes-Signature: "
    'v1=<hex HMAC-SHA256 under the webhook secret of "<timestamp>.<body>">; refuse one older than 5 minutes.'
)


def notify_paths() -> dict[str, Any]:
    return {
        "/api/v1/notifications": {
            "get": op(
                "Your notification settings (never the webhook's secret) and any endpoint that fails",
                ok(200, "NotifySettings", "the settings and the problems of your endpoints"),
                (),
                tag="webmaster",
                op_id="getNotifications",
            ),
            "put": op(
                "Set your webhook, e-mail address and what each kind of event does. Owners only (a token of "
                "scope owner): another role is answered 403 role_forbids. " + _SIGNED,
                ok(200, "NotifySettings", "the settings; webhook_secret once, when the webhook or its secret is new"),
                (400, 415, 422),
                tag="webmaster",
                op_id="putNotifications",
                body=json_body("NotifySettingsInput"),
            ),
        },
        "/api/v1/notifications/test": {
            "post": op(
                "Send a test event to every channel you set (within seconds; see the delivery log)",
                ok(202, "NotifyTest", "the test event was queued"),
                (),
                tag="webmaster",
                op_id="testNotifications",
            )
        },
        "/api/v1/notifications/deliveries": {
            "get": op(
                "Your delivery log, the newest first: each event, where it went, its attempts and the answer",
                ok(200, "NotifyDeliveries", "the latest deliveries"),
                (),
                tag="webmaster",
                op_id="listNotificationDeliveries",
            )
        },
    }


def notify_schemas() -> dict[str, Any]:
    problems = {"type": "array", "items": {"$ref": "#/components/schemas/Problem"}}
    return {
        "NotifySettingsInput": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "webhook_url": {"type": ["string", "null"], "maxLength": 2048, "description": "http(s); null: none"},
                "email": {"type": ["string", "null"], "maxLength": 254, "description": "null: none"},
                "events": _EVENTS,
                "rotate_secret": {
                    "type": "boolean",
                    "description": "true: a new webhook secret, answered this once; the old one stops signing at once",
                },
            },
        },
        "NotifySettings": {
            "type": "object",
            "required": ["webhook_url", "email", "events", "webhook_secret_set"],
            "properties": {
                "webhook_url": {
                    "type": ["string", "null"],
                    "description": "whole to an owner; an editor or a viewer reads its origin only "
                    "(https://hooks.example.com/…): the rest of a webhook URL is often its key",
                },
                "email": {"type": ["string", "null"]},
                "events": _EVENTS,
                "webhook_secret_set": {"type": "boolean"},
                "webhook_secret": {
                    "type": "string",
                    "description": "answered once, when the webhook is new or rotate_secret was true",
                },
                "problems": problems,
            },
        },
        "NotifyTest": {
            "type": "object",
            "required": ["event_id"],
            "properties": {"event_id": {"type": "string"}},
        },
        "NotifyDeliveries": {
            "type": "object",
            "required": ["deliveries"],
            "properties": {
                "deliveries": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["delivery_id", "event", "channel", "target", "status", "attempts", "created_at"],
                        "properties": {
                            "delivery_id": {"type": "string"},
                            "event": {
                                "type": "object",
                                "required": ["event_id", "kind", "at", "host", "subject"],
                                "properties": {
                                    "event_id": {"type": "string"},
                                    "kind": {"type": "string", "enum": [k.value for k in EventKind]},
                                    "at": _TIME,
                                    "host": {"type": "string"},
                                    "subject": {"type": "string"},
                                },
                            },
                            "channel": {"type": "string", "enum": [c.value for c in Channel]},
                            "target": {
                                "type": "string",
                                "description": "the address; a webhook's as its origin only, to an editor or a viewer",
                            },
                            "status": {"type": "string", "enum": [s.value for s in DeliveryStatus]},
                            "attempts": {"type": "integer"},
                            "created_at": _TIME,
                            "last_attempt_at": _NULLABLE_TIME,
                            "next_attempt_at": _NULLABLE_TIME,
                            "http_status": {"type": ["integer", "null"]},
                            "error": {"type": ["string", "null"]},
                        },
                    },
                }
            },
        },
    }
