"""Cheap checks on request bodies: media type, size (declared and streamed), JSON well-formedness.

The API never parses a feed: these are the only looks it takes at a body
(it never parses or processes inline beyond cheap checks: that is the parser's job, off the request).
Sizes are checked twice: against ``Content-Length`` before a byte is read,
and while streaming, because a chunked body declares nothing and a
``Content-Length`` is only a promise.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from cubes.api.errors import ApiError, FieldError, ValidationFailed

__all__ = [
    "JSON_TYPES",
    "XML_TYPES",
    "check_declared_size",
    "check_media_type",
    "read_body",
    "read_json_object",
    "too_large",
]

#: what an XML feed may be sent as (RSS, Turbo RSS, YML and Atom are all XML)
XML_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/xml", "text/xml"})
JSON_TYPES = frozenset({"application/json"})
#: bytes read from the socket at once while streaming a body
_CHUNK = 64 * 1024


def too_large(limit: int) -> ApiError:
    return ApiError(413, "too_large", f"the body is larger than the limit of {limit} bytes", limit=limit)


def check_media_type(request: web.Request, allowed: frozenset[str]) -> str:
    """The request's media type if it is one of ``allowed`` (or a ``+xml`` type where XML is), else 415."""
    media_type = request.content_type.lower()  # aiohttp strips the parameters (charset)
    if "Content-Type" in request.headers:
        if media_type in allowed:
            return media_type
        if "application/xml" in allowed and media_type.startswith("application/") and media_type.endswith("+xml"):
            return media_type
    raise ApiError(
        415,
        "unsupported_media_type",
        f"Content-Type {request.headers.get('Content-Type', '(none)')!r} is not accepted here; "
        f"use one of {', '.join(sorted(allowed))}",
        accepted=sorted(allowed),
    )


def check_declared_size(request: web.Request, limit: int) -> None:
    """413 from ``Content-Length`` alone, before reading anything."""
    declared = request.content_length
    if declared is not None and declared > limit:
        raise too_large(limit)


async def read_body(request: web.Request, limit: int) -> bytes:
    """The whole body, refusing with 413 as soon as more than ``limit`` bytes have arrived."""
    check_declared_size(request, limit)
    buf = bytearray()
    async for chunk in request.content.iter_chunked(_CHUNK):
        buf += chunk
        if len(buf) > limit:
            raise too_large(limit)
    return bytes(buf)


def parse_json(body: bytes) -> Any:
    """The JSON value of ``body``, or 400 ``malformed_json`` saying where it broke."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError(
            400,
            "malformed_json",
            f"the body is not well-formed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            line=exc.lineno,
            column=exc.colno,
        ) from None


async def read_json_object(request: web.Request, limit: int) -> dict[str, Any]:
    """A JSON object body: 415 not JSON, 413 too large, 400 malformed, 422 not an object."""
    check_media_type(request, JSON_TYPES)
    value = parse_json(await read_body(request, limit))
    if not isinstance(value, dict):
        raise ValidationFailed([FieldError("body", "must be a JSON object")])
    return value
