"""The OpenAPI 3.1 document of the API, served at ``GET /api/v1/openapi.json`` (issue 7 "Validation").

Hand-written as data, so it says what we mean rather than what a framework
guessed. It is kept true by tests: one walks the application's router and
asserts every route is documented and every documented operation is routed;
schemathesis fuzzes the served document against the running app and fails on
any 5xx, undocumented status code, content type, header or body shape.

Each operation documents only the statuses it can answer. The gate adds
401 / 413 / 429 / 503 to every tenant operation (see ``cubes.api.gate``).
"""

from __future__ import annotations

from typing import Any

from shared.feeds import SERVICE_NAME_RE, SERVICES_MAX, WEBMASTER_FORMATS

__all__ = ["document"]

_JSON = "application/json"
_XML_TYPES = ("application/rss+xml", "application/xml", "text/xml", "application/atom+xml")

_NULLABLE_TIME = {"type": ["string", "null"], "format": "date-time"}
_NULLABLE_INT = {"type": ["integer", "null"]}
_NULLABLE_STR = {"type": ["string", "null"]}

_SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error", "message"],
        "properties": {
            "error": {"type": "string", "description": "a stable, machine-readable code"},
            "message": {"type": "string"},
            "fields": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["field", "message"],
                    "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                },
            },
        },
    },
    "FeedRequest": {
        "type": "object",
        "required": ["url", "format"],
        "additionalProperties": False,
        "properties": {
            "url": {
                "type": "string",
                "format": "uri",
                "description": "absolute http(s) URL of a verified host",
            },
            "format": {"type": "string", "enum": [f.value for f in WEBMASTER_FORMATS]},
            "services": {
                "type": "array",
                "maxItems": SERVICES_MAX,
                "items": {"type": "string", "pattern": SERVICE_NAME_RE.pattern},
            },
        },
    },
    "Feed": {
        "type": "object",
        "required": ["feed_id", "url", "host", "format", "services", "created_at", "status"],
        "properties": {
            "feed_id": {"type": "string"},
            "url": {"type": "string"},
            "host": {"type": "string"},
            "format": {"type": "string"},
            "services": {"type": "array", "items": {"type": "string"}},
            "created_at": _NULLABLE_TIME,
            "status": {
                "type": "object",
                "properties": {
                    "last_fetch_at": _NULLABLE_TIME,
                    "last_http_status": _NULLABLE_INT,
                    "last_result": _NULLABLE_STR,
                    "items": _NULLABLE_INT,
                    "last_error": _NULLABLE_STR,
                    # the two halves last_result / last_error are read from: the fetch and the parse
                    "fetch_result": _NULLABLE_STR,
                    "fetch_error": _NULLABLE_STR,
                    "parse_result": _NULLABLE_STR,
                    "parse_error": _NULLABLE_STR,
                    "error_line": _NULLABLE_INT,
                    "error_column": _NULLABLE_INT,
                    "next_fetch_at": _NULLABLE_TIME,
                    "consecutive_failures": {"type": "integer"},
                },
            },
        },
    },
    "FeedList": {
        "type": "object",
        "required": ["feeds"],
        "properties": {"feeds": {"type": "array", "items": {"$ref": "#/components/schemas/Feed"}}},
    },
    "Accepted": {
        "type": "object",
        "required": ["task_id", "status_url"],
        "properties": {"task_id": {"type": "string"}, "status_url": {"type": "string"}},
    },
    "Task": {
        "type": "object",
        "required": ["task_id", "host", "status", "items", "errors", "preview_urls", "counts"],
        "properties": {
            "task_id": {"type": "string"},
            "host": {"type": "string"},
            "status": {"type": "string", "enum": ["queued", "processing", "done", "failed"]},
            "created_at": _NULLABLE_TIME,
            "updated_at": _NULLABLE_TIME,
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["url", "status"],
                    "properties": {
                        "url": {"type": "string"},
                        "status": {"type": "string"},
                        "error": _NULLABLE_STR,
                    },
                },
            },
            "errors": {"type": "array", "items": {"type": "string"}},
            "preview_urls": {
                "type": "array",
                "items": {"type": "string"},
                "description": "debug uploads: frontend URLs of the unpublished previews",
            },
        },
    },
    "Deletion": {
        "type": "object",
        "required": ["url", "version"],
        "properties": {"url": {"type": "string"}, "version": {"type": "integer"}},
    },
    "HostList": {
        "type": "object",
        "required": ["hosts"],
        "properties": {
            "hosts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["host", "verified", "alias", "verification_token", "how_to_verify"],
                    "properties": {
                        "host": {"type": "string"},
                        "verified": {"type": "boolean"},
                        "alias": {
                            "type": ["string", "null"],
                            "description": "the www. spelling this host is one site with: you verified both",
                        },
                        "verification_token": {"type": "string"},
                        "how_to_verify": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                },
            }
        },
    },
    "Verification": {
        "type": "object",
        "required": ["host", "verified", "method", "attempts"],
        "properties": {
            "host": {"type": "string"},
            "verified": {"type": "boolean"},
            "method": {"type": ["string", "null"], "enum": ["file", "meta", None]},
            "attempts": {"type": "array", "items": {"type": "string"}},
        },
    },
    "LimitsRequest": {
        "type": "object",
        "required": ["rps", "burst", "bytes_per_s"],
        "additionalProperties": False,
        "properties": {
            "rps": {"type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000},
            "burst": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
            "bytes_per_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 100 * 1024**3},
        },
    },
    "Limits": {
        "type": "object",
        "required": ["tenant_id", "rps", "burst", "bytes_per_s", "custom"],
        "properties": {
            "tenant_id": {"type": "string"},
            "rps": {"type": "number"},
            "burst": {"type": "integer"},
            "bytes_per_s": {"type": "number"},
            "custom": {"type": "boolean", "description": "false: the configured defaults apply"},
        },
    },
}

_STR = {"schema": {"type": "string"}}
_RATE_HEADERS = {
    "RateLimit-Policy": {
        **_STR,
        "description": 'e.g. "default";q=20;w=2 (quota = burst, window = s to refill)',
    },
    "RateLimit": {**_STR, "description": 'e.g. "default";r=19;t=1 (remaining requests, s until full)'},
}
_RETRY_AFTER = {"Retry-After": {"required": True, "schema": {"type": "string", "pattern": "^[0-9]+$"}}}

_ADMIN: list[dict[str, list[str]]] = [{"adminToken": []}]
_ERROR_TEXT = {
    400: "malformed JSON (with line and column)",
    401: "no, malformed, unknown or revoked token",
    403: "host_not_owned / host_not_verified (a host is a public name); admin_disabled",
    404: "no such object, or one of another tenant (never revealed as such)",
    413: "body over the limit (Content-Length or while streaming)",
    415: "wrong Content-Type for this operation / format",
    422: "field errors: {error: validation, fields: [{field, message}]}",
    429: "tenant over its requests/s or bytes/s, or its share of the concurrency; Retry-After says when",
    503: "over the concurrency cap, the pipeline behind is lagging, or the bus is unreachable",
}


def _error(code: int) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if code in (429, 503):
        headers.update(_RETRY_AFTER)
    if code == 429:
        headers.update(_RATE_HEADERS)
    if code == 401:
        headers["WWW-Authenticate"] = {"required": True, "schema": {"type": "string"}}
    out: dict[str, Any] = {
        "description": _ERROR_TEXT[code],
        "content": {_JSON: {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    if headers:
        out["headers"] = headers
    return out


def _ok(code: int, schema: str | None, description: str, **headers: Any) -> dict[int, Any]:
    # tenant responses carry the RateLimit headers (not required: admin ones do not)
    out: dict[str, Any] = {"description": description, "headers": {**_RATE_HEADERS, **headers}}
    if schema is not None:
        out["content"] = {_JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}}
    return {code: out}


def _op(
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
    # the gate answers these on every tenant operation (admin ones: 401 and the bulkhead's 503)
    gate = {401, 503} if security is _ADMIN else {401, 413, 429, 503}
    codes = sorted(set(errors) | gate)
    responses = {str(k): v for k, v in ok.items()}
    responses.update({str(c): _error(c) for c in codes})
    op: dict[str, Any] = {"summary": summary, "operationId": op_id, "tags": [tag], "responses": responses}
    if params:
        op["parameters"] = params
    if body:
        op["requestBody"] = body
    if security is not None:
        op["security"] = security
    return op


def _path(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string", "minLength": 1, "pattern": "^[^/]+$"},
    }


def _query(name: str, schema: dict[str, Any], *, required: bool, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


_LIMITS_PARAMS = [_path("tenant", "tenant id")]


def _json_body(schema: str) -> dict[str, Any]:
    return {"required": True, "content": {_JSON: {"schema": {"$ref": f"#/components/schemas/{schema}"}}}}


def _paths() -> dict[str, Any]:
    upload_body = {
        "required": True,
        "description": "RSS / Turbo RSS / YML as XML, or JSON documents; parsed later by the parser cube",
        "content": {
            **{t: {"schema": {"type": "string"}} for t in _XML_TYPES},
            _JSON: {"schema": {}},
        },
    }
    upload_params = [
        _query("host", {"type": "string", "minLength": 1}, required=True, description="a verified host of yours"),
        _query(
            "format",
            {"type": "string", "enum": ["rss", "turbo", "yml", "json"]},
            required=True,
            description="how the parser reads the body",
        ),
        _query(
            "mode",
            {"type": "string", "enum": ["production", "debug"]},
            required=False,
            description="debug: previews only, nothing is published",
        ),
        {
            "name": "Idempotency-Key",
            "in": "header",
            "required": False,
            "description": "a retry with the same key returns the first task",
            "schema": {"type": "string", "minLength": 1, "maxLength": 128},
        },
    ]
    return {
        "/api/v1/openapi.json": {
            "get": {
                "summary": "This document",
                "operationId": "openapi",
                "tags": ["meta"],
                "security": [],
                "responses": {
                    "200": {"description": "OpenAPI 3.1", "content": {_JSON: {"schema": {"type": "object"}}}},
                    "503": _error(503),
                },
            }
        },
        "/api/v1/feeds": {
            "post": _op(
                "Register a feed (idempotent per URL)",
                {**_ok(201, "Feed", "registered", Location=_STR), **_ok(200, "Feed", "already registered")},
                (400, 403, 415, 422),
                tag="webmaster",
                op_id="createFeed",
                body=_json_body("FeedRequest"),
            ),
            "get": _op(
                "List your feeds with their status",
                _ok(200, "FeedList", "your feeds"),
                (),
                tag="webmaster",
                op_id="listFeeds",
            ),
        },
        "/api/v1/feeds/{feed_id}": {
            "get": _op(
                "A feed and its status",
                _ok(200, "Feed", "the feed"),
                (404,),
                tag="webmaster",
                op_id="getFeed",
                params=[_path("feed_id", "feed id")],
            ),
            "delete": _op(
                "Remove a feed",
                _ok(204, None, "removed"),
                (404,),
                tag="webmaster",
                op_id="deleteFeed",
                params=[_path("feed_id", "feed id")],
            ),
        },
        "/api/v1/uploads": {
            "post": _op(
                "Upload documents; answered once they are durably queued",
                _ok(202, "Accepted", "queued", Location=_STR),
                (400, 403, 415, 422),
                tag="partner",
                op_id="createUpload",
                params=upload_params,
                body=upload_body,
            ),
        },
        "/api/v1/uploads/{task_id}": {
            "get": _op(
                "Status of an upload task",
                _ok(200, "Task", "the task"),
                (404,),
                tag="partner",
                op_id="getUpload",
                params=[_path("task_id", "task id from the upload")],
            ),
        },
        "/api/v1/pages": {
            "delete": _op(
                "Delete a page (a versioned tombstone)",
                _ok(202, "Deletion", "deletion queued"),
                (403, 422),
                tag="partner",
                op_id="deletePage",
                params=[
                    _query(
                        "url",
                        {"type": "string", "minLength": 1},
                        required=True,
                        description="the page URL on a verified host of yours",
                    )
                ],
            ),
        },
        "/api/v1/hosts": {
            "get": _op(
                "Your hosts and their verification tokens",
                _ok(200, "HostList", "your hosts"),
                (),
                tag="hosts",
                op_id="listHosts",
            ),
        },
        "/api/v1/hosts/{host}/verify": {
            "post": _op(
                "Check the host for its verification token now",
                _ok(200, "Verification", "checked (see verified)"),
                (403, 404, 422),
                tag="hosts",
                op_id="verifyHost",
                params=[_path("host", "a host you added")],
            ),
        },
        "/api/v1/admin/limits/{tenant}": {
            "get": _op(
                "A tenant's limits",
                _ok(200, "Limits", "effective limits"),
                (403, 404),
                tag="admin",
                op_id="getLimits",
                params=_LIMITS_PARAMS,
                security=_ADMIN,
            ),
            "put": _op(
                "Set a tenant's limits (applies at once)",
                _ok(200, "Limits", "stored and applied"),
                (400, 403, 404, 413, 415, 422),
                tag="admin",
                op_id="putLimits",
                params=_LIMITS_PARAMS,
                body=_json_body("LimitsRequest"),
                security=_ADMIN,
            ),
            "delete": _op(
                "Back to the default limits",
                _ok(200, "Limits", "defaults apply"),
                (403, 404),
                tag="admin",
                op_id="deleteLimits",
                params=_LIMITS_PARAMS,
                security=_ADMIN,
            ),
        },
    }


def document(server_url: str = "/") -> dict[str, Any]:
    """The OpenAPI 3.1 document (a fresh dict each call)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "turbocubes API",
            "version": "1.0.0",
            "description": "Webmaster and partner APIs: feeds, uploads, page deletions, per-tenant limits.",
        },
        "servers": [{"url": server_url}],
        "security": [{"bearerToken": []}],
        "paths": _paths(),
        "components": {
            "schemas": _SCHEMAS,
            "securitySchemes": {
                "bearerToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "tenant API token from `turbocubes hosts add`",
                },
                "adminToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "admin token; its sha256 is api.admin_token_sha256",
                },
            },
        },
    }
