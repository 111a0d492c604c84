"""The bounds of the API's string parameters (docs/architecture.md section 6).

Every string a request names in its path, query or headers has a longest value. The OpenAPI
document states it (``maxLength``, ``openapi_parts``) and the handler checks it here, where it
reads the parameter: a longer value is answered 422 naming the parameter, never passed on.
Together the bounds keep each documented request line under the line the app reads
(``cubes.api.app.REQUEST_LINE_MAX``); a test walks the document and holds them to it.
"""

from __future__ import annotations

from aiohttp import web

from cubes.api.errors import FieldError, ValidationFailed
from shared.messages import HOST_MAX, REGION_MAX
from shared.urls import MAX_URL_LENGTH, canonical_host

__all__ = ["HOST_MAX", "ID_MAX", "REGION_MAX", "URL_MAX", "bounded", "path_host", "path_id", "too_long"]

#: an object's id in a path (32 hex digits for most, 16 for a token; a tenant's may be chosen)
ID_MAX = 128
#: a URL given as a parameter: the longest one the pipeline keeps
URL_MAX = MAX_URL_LENGTH


def too_long(name: str, value: str, max_length: int) -> FieldError | None:
    """What is wrong with ``value`` of parameter ``name``, if it is longer than ``max_length`` characters."""
    if len(value) > max_length:
        return FieldError(name, f"at most {max_length} characters (got {len(value)})")
    return None


def bounded(name: str, value: str, max_length: int) -> str:
    """``value`` when it is at most ``max_length`` characters; 422 naming ``name`` otherwise."""
    if (error := too_long(name, value, max_length)) is not None:
        raise ValidationFailed([error])
    return value


def path_id(request: web.Request, name: str) -> str:
    """The id in the path's ``name`` (at most ``ID_MAX`` characters; 422 otherwise)."""
    return bounded(name, request.match_info[name], ID_MAX)


def path_host(request: web.Request) -> str:
    """The path's ``{host}``, canonical (``shared.urls.canonical_host``); 422 naming it when it is not a host."""
    raw = bounded("host", request.match_info["host"], HOST_MAX)
    try:
        return canonical_host(raw)
    except ValueError as exc:
        raise ValidationFailed([FieldError("host", str(exc))]) from None
