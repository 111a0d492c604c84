"""The OpenAPI part of one URL fetched again now and of the IndexNow receiver (``refresh.py``, ``indexnow.py``)."""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_parts import JSON, PUBLIC, json_body, ok, op, query_param
from cubes.api.params import HOST_MAX, URL_MAX

__all__ = ["refresh_paths", "refresh_schemas"]

_URL = {"type": "string", "minLength": 1, "maxLength": URL_MAX}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def refresh_schemas() -> dict[str, Any]:
    return {
        "RefreshRequest": {
            "type": "object",
            "required": ["url"],
            "properties": {"url": {**_URL, "description": "the page's URL, or the image's source URL"}},
        },
        "Refresh": {
            "type": "object",
            "required": ["url", "action", "refresh_id", "queued", "feeds"],
            "properties": {
                "url": {"type": "string"},
                "action": {
                    "type": "string",
                    "enum": ["feed", "page", "image", "purge"],
                    "description": "feed: the feeds that publish the page fetched now; page: the page itself "
                    "(autoparser); image / purge: the image fetched again",
                },
                "refresh_id": {"type": "string", "description": "names the order (a feed's fetch report names it)"},
                "queued": {"type": "boolean", "description": "false: the same order of the last 30 s is answered"},
                "feeds": {"type": "array", "items": {"type": "string"}, "description": "the feeds fetched"},
            },
        },
        "IndexNowSubmission": {
            "type": "object",
            "required": ["key", "urlList"],
            "properties": {
                "host": {"type": "string", "maxLength": HOST_MAX, "description": "the URLs' host"},
                "key": {"type": "string", "pattern": "^[a-zA-Z0-9-]{8,128}$"},
                "keyLocation": {**_URL, "description": "the key file, on the URLs' origin (default /KEY.txt)"},
                "urlList": {"type": "array", "items": _URL, "minItems": 1, "maxItems": 1000},
            },
        },
        "IndexNowAnswer": {
            "type": "object",
            "required": ["origin", "refreshes", "refused"],
            "properties": {
                "origin": {"type": "string"},
                "refreshes": {"type": "array", "items": _ref("Refresh")},
                "refused": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["url", "error", "message"],
                        "properties": {
                            "url": {"type": "string"},
                            "error": {"type": "string"},
                            "message": {"type": "string"},
                        },
                    },
                },
            },
        },
    }


def _refresh_op(summary: str, op_id: str, errors: tuple[int, ...]) -> dict[str, Any]:
    return op(
        summary,
        ok(202, "Refresh", "queued (or the same order of the last 30 s answered)"),
        errors,
        tag="webmaster",
        op_id=op_id,
        body=json_body("RefreshRequest"),
    )


def _public(operation: dict[str, Any]) -> dict[str, Any]:
    return {**operation, "security": PUBLIC}


def refresh_paths() -> dict[str, Any]:
    answered = {
        200: {
            "description": "queued; refused URLs with their reason",
            "content": {JSON: {"schema": _ref("IndexNowAnswer")}},
        }
    }
    errors = (400, 403, 415, 422, 429)
    return {
        "/api/v1/pages/refresh": {
            "post": _refresh_op(
                "Fetch a page of yours again now, through what made it (its feed, or the page for the autoparser), "
                "in the host's polite crawler lane",
                "refreshPage",
                (400, 403, 415, 422),
            )
        },
        "/api/v1/images/refresh": {
            "post": _refresh_op(
                "Fetch an image of your pages again now (its source URL); new bytes are a new copy on every page",
                "refreshImage",
                (400, 404, 415, 422),
            )
        },
        "/api/v1/images/purge": {
            "post": _refresh_op(
                "Purge an image of your pages: fetched again now; if the source gives no good image, its pages "
                "are rendered without it",
                "purgeImage",
                (400, 404, 415, 422),
            )
        },
        "/indexnow": {
            "get": _public(
                op(
                    "IndexNow: one changed URL of a verified origin, proven by the key file on that origin",
                    answered,
                    errors,
                    tag="indexnow",
                    op_id="indexNow",
                    params=[
                        query_param("url", _URL, required=True, description="the changed URL"),
                        query_param(
                            "key",
                            {"type": "string", "minLength": 8, "maxLength": 128, "pattern": "^[a-zA-Z0-9-]+$"},
                            required=True,
                            description="the site's key",
                        ),
                        query_param("keyLocation", _URL, required=False, description="the key file (default /KEY.txt)"),
                    ],
                )
            ),
            "post": _public(
                op(
                    "IndexNow: changed URLs of one verified origin, proven by the key file on that origin",
                    answered,
                    errors,
                    tag="indexnow",
                    op_id="indexNowBatch",
                    body=json_body("IndexNowSubmission"),
                )
            ),
        },
    }
