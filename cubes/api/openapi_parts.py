"""Building blocks of the OpenAPI document (``openapi.py``): operations, answers, parameters.

Each operation documents only the statuses it can answer; ``op`` adds what the
gate answers on every tenant operation (401 / 413 / 429 / 503, ``cubes.api.gate``)
and, for admin ones, 401 / 503.
"""

from __future__ import annotations

from typing import Any

from cubes.api.params import ID_MAX

__all__ = [
    "ADMIN",
    "JSON",
    "NULLABLE_INT",
    "NULLABLE_STR",
    "NULLABLE_TIME",
    "PUBLIC",
    "RATE_HEADERS",
    "STR",
    "XML_TYPES",
    "error",
    "json_body",
    "ok",
    "op",
    "path_param",
    "query_param",
]

JSON = "application/json"
XML_TYPES = ("application/rss+xml", "application/xml", "text/xml", "application/atom+xml")

NULLABLE_TIME = {"type": ["string", "null"], "format": "date-time"}
NULLABLE_INT = {"type": ["integer", "null"]}
NULLABLE_STR = {"type": ["string", "null"]}

STR = {"schema": {"type": "string"}}
RATE_HEADERS = {
    "RateLimit-Policy": {
        **STR,
        "description": 'e.g. "default";q=20;w=2 (quota = burst, window = s to refill)',
    },
    "RateLimit": {**STR, "description": 'e.g. "default";r=19;t=1 (remaining requests, s until full)'},
}
RETRY_AFTER = {"Retry-After": {"required": True, "schema": {"type": "string", "pattern": "^[0-9]+$"}}}

ADMIN: list[dict[str, list[str]]] = [{"adminToken": []}]
#: the security of an operation anyone may call
PUBLIC: list[dict[str, list[str]]] = []
_ERROR_TEXT = {
    400: "malformed JSON (with line and column)",
    401: "no, malformed, unknown or revoked token",
    403: (
        "host_not_owned / host_not_verified (a host is a public name), origin_not_held (your right covers "
        "another scheme or port), page_not_owned (another tenant's source published the page); role_forbids (the "
        "token's scope does not allow the operation: read tokens only read, write tokens do not manage the team); "
        "admin_disabled"
    ),
    404: "no such object, or one of another tenant (never revealed as such)",
    409: "last_owner: the tenant's last owner stays an owner",
    413: "body over the limit (Content-Length or while streaming)",
    415: "wrong Content-Type for this operation / format",
    422: "field errors: {error: validation, fields: [{field, message}]}",
    429: (
        "tenant over its requests/s or bytes/s, or its share of the concurrency (rate_limited), or too many "
        "wrong tokens from this address, an IPv6 one counted by its /64 (too_many_failures); Retry-After says when"
    ),
    503: "over the concurrency cap, the pipeline behind is lagging, or the bus is unreachable",
}


def error(code: int) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if code in (429, 503):
        headers.update(RETRY_AFTER)
    if code == 429:
        headers.update(RATE_HEADERS)
    if code == 401:
        headers["WWW-Authenticate"] = {"required": True, "schema": {"type": "string"}}
    out: dict[str, Any] = {
        "description": _ERROR_TEXT[code],
        "content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    if headers:
        out["headers"] = headers
    return out


def ok(code: int, schema: str | None, description: str, **headers: Any) -> dict[int, Any]:
    # tenant responses carry the RateLimit headers (not required: admin ones do not)
    out: dict[str, Any] = {"description": description, "headers": {**RATE_HEADERS, **headers}}
    if schema is not None:
        out["content"] = {JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}}
    return {code: out}


def op(
    summary: str,
    ok: dict[int, Any],
    errors: tuple[int, ...],
    *,
    tag: str,
    op_id: str,
    params: list[dict[str, Any]] | None = None,
    body: dict[str, Any] | None = None,
    security: list[dict[str, list[str]]] | None = None,
) -> dict[str, Any]:
    # the gate answers these on every tenant operation (admin ones: 401, wrong tokens' 429, the bulkhead's 503)
    # a tenant token's scope may not allow the operation: 403 role_forbids (shared.webmaster.access.permit)
    gate = {401, 429, 503} if security is ADMIN else {401, 403, 413, 429, 503}
    # a parameter longer than its maxLength is answered 422 naming it (cubes.api.params)
    bounded = {422} if any("maxLength" in p["schema"] for p in params or ()) else set()
    codes = sorted(set(errors) | gate | bounded)
    responses = {str(k): v for k, v in ok.items()}
    responses.update({str(c): error(c) for c in codes})
    op: dict[str, Any] = {"summary": summary, "operationId": op_id, "tags": [tag], "responses": responses}
    if params:
        op["parameters"] = params
    if body:
        op["requestBody"] = body
    if security is not None:
        op["security"] = security
    return op


def path_param(name: str, description: str, *, max_length: int = ID_MAX) -> dict[str, Any]:
    """A path parameter: an id (``cubes.api.params.ID_MAX``) unless ``max_length`` says otherwise."""
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": "^[^/]+$"},
    }


def query_param(name: str, schema: dict[str, Any], *, required: bool, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


def json_body(schema: str) -> dict[str, Any]:
    return {"required": True, "content": {JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}}}
