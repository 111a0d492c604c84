"""JSON error responses of the API (docs/architecture.md section 6).

Every error the API answers is a small JSON object with a stable,
machine-readable ``error`` code and a human ``message``; validation errors add
``fields`` (one entry per offending field). Handlers raise ``ApiError`` (or
``ValidationFailed``); the ``error_middleware`` turns it, and aiohttp's own
404 / 405, into that shape, and anything unexpected into a logged ``500``
(a bug: the tests and the fuzzer assert it never happens).

Codes used (the OpenAPI document lists them in the ``Error`` schema)::

    400 malformed_json, bad_request
    401 unauthorized             (with ``WWW-Authenticate: Bearer``)
    403 forbidden, host_not_owned, host_not_verified, origin_not_held, page_not_owned, admin_disabled
    404 not_found               (also for ids of another tenant: their existence is not revealed)
    405 method_not_allowed
    413 too_large
    415 unsupported_media_type
    422 validation              (``fields``: [{"field", "message"}])
    429 rate_limited            (``Retry-After``, ``RateLimit``, ``RateLimit-Policy``), too_many_failures
        (wrong tokens from one address: ``Retry-After``)
    503 overloaded, unavailable (``Retry-After``; also any retriable error of a store, the bus or
        the blob store that a handler did not handle itself)

A failed ownership check is not an error: ``POST .../verify`` answers 200 with
``verified: false`` and the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from shared.errors import TurbocubesError

__all__ = [
    "ApiError",
    "FieldError",
    "ValidationFailed",
    "error_middleware",
    "json_response",
    "problem",
]

log = logging.getLogger(__name__)

#: what a client is told to wait after an engine outage: long enough for a reconnect
_RETRY_AFTER_S = 5

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def json_response(data: Any, *, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    """A JSON response serialized with orjson (datetimes as RFC 3339)."""
    return web.Response(
        body=orjson.dumps(data),
        status=status,
        content_type="application/json",
        headers=dict(headers or {}),
    )


def problem(
    status: int,
    error: str,
    message: str,
    *,
    headers: Mapping[str, str] | None = None,
    **extra: Any,
) -> web.Response:
    """The JSON error body every failing call gets."""
    body: dict[str, Any] = {"error": error, "message": message, **extra}
    return json_response(body, status=status, headers=headers)


@dataclass(frozen=True, slots=True)
class FieldError:
    field: str
    message: str


class ApiError(Exception):
    """Raised by handlers; answered as ``problem(status, error, message)``."""

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.headers = dict(headers or {})
        self.extra = extra

    def response(self) -> web.Response:
        return problem(self.status, self.error, self.message, headers=self.headers, **self.extra)


class ValidationFailed(ApiError):
    """422 with the machine-readable list of what is wrong, one entry per field."""

    def __init__(self, fields: list[FieldError]) -> None:
        super().__init__(
            422,
            "validation",
            "; ".join(f"{f.field}: {f.message}" for f in fields) or "invalid request",
            fields=[{"field": f.field, "message": f.message} for f in fields],
        )
        self.fields = fields


# aiohttp raises these for routing failures; we answer them in our shape
_HTTP_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_media_type",
}


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Outermost middleware: every error leaves as JSON; nothing leaks a traceback."""
    try:
        return await handler(request)
    except ApiError as exc:
        return exc.response()
    except TurbocubesError as exc:
        if not exc.retriable:
            log.exception("unhandled error in %s %s", request.method, request.path)
            return problem(500, "internal", "internal error; the operator has the details in the log")
        # a store / bus / blob store outage: the client should come back, not report a bug
        log.warning("%s %s: %s", request.method, request.path, exc)
        retry = str(max(1, int(exc.retry_after or _RETRY_AFTER_S)))
        return problem(503, "unavailable", f"temporarily unavailable: {exc.message}", headers={"Retry-After": retry})
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        headers = {k: v for k, v in exc.headers.items() if k.lower() in ("allow", "retry-after")}
        code = _HTTP_CODES.get(exc.status, "http_error")
        return problem(exc.status, code, exc.reason or code, headers=headers)
    except Exception:
        # a bug: logged with its traceback, answered without it
        log.exception("unhandled error in %s %s", request.method, request.path)
        return problem(500, "internal", "internal error; the operator has the details in the log")
