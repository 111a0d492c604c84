"""What an action tells the page it redirects to (post/redirect/get; docs/architecture.md section 10).

An action that did something answers ``303 See Other`` to a page, so that reloading that page
never sends the form again. What the action has to say -- "Verified by file", the attempts of a
check that found no token, a new API token shown this once -- rides to that page in a short-lived
cookie, ``tc_flash``: ``HttpOnly``, ``SameSite=Strict``, ``Path=/console``, ``Secure`` when the
console is served over https, at most ``MAX_AGE_S`` old, read once (the page that shows it
deletes it). Its value is the JSON of what it says with an HMAC-SHA256 over it, keyed by the
session's own id (the cookie beside it), so neither another site nor another session can make a
console page say something: a flash whose signature does not verify is ignored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

import orjson
from aiohttp import web

__all__ = ["FLASH", "MAX_AGE_S", "put", "read", "spend"]

FLASH = "tc_flash"
#: a flash is read by the very next page load; one older than this is stale
MAX_AGE_S = 120
#: what a flash may carry (a cookie holds ~4 KB): longer lists are cut
_MAX_BYTES = 3000


def _sign(key: str, payload: bytes) -> str:
    return hmac.new(key.encode(), payload, hashlib.sha256).hexdigest()


def put(response: web.StreamResponse, key: str, data: dict[str, Any], *, secure: bool) -> None:
    """Make ``response`` carry ``data`` to the next page of the session whose id is ``key``."""
    payload = orjson.dumps(data)
    while len(payload) > _MAX_BYTES and data.get("attempts"):
        data = {**data, "attempts": data["attempts"][:-1]}
        payload = orjson.dumps(data)
    value = base64.urlsafe_b64encode(payload).decode().rstrip("=") + "." + _sign(key, payload)
    response.set_cookie(
        FLASH, value, max_age=MAX_AGE_S, path="/console", secure=secure, httponly=True, samesite="Strict"
    )


def read(request: web.Request, key: str) -> dict[str, Any]:
    """What an action said to the session whose id is ``key`` (``{}``: nothing, or nothing that verifies)."""
    raw = request.cookies.get(FLASH, "")
    encoded, _, signature = raw.partition(".")
    if not encoded:
        return {}
    try:
        payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except ValueError:
        return {}
    if not hmac.compare_digest(_sign(key, payload), signature):
        return {}
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def spend(request: web.Request, response: web.StreamResponse) -> None:
    """The page that showed the flash deletes it: it is said once."""
    if FLASH in request.cookies:
        response.del_cookie(FLASH, path="/console")
