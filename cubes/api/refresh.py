"""One page or image fetched again now, one image purged (docs/architecture.md sections 6 and 10).

* ``POST /api/v1/pages/refresh`` {url} -- the page fetched again by what made it:
  its feed fetched now, or the page itself for the autoparser (``shared/webmaster/refresh.py``
  says which, and who may ask), through the host's polite crawler lane.
* ``POST /api/v1/images/refresh`` {url} -- an image of your pages (its source URL)
  fetched again; new bytes are a new copy, and its pages are rendered again with it.
* ``POST /api/v1/images/purge`` {url} -- the same, and if the source no longer gives
  a good image the copy is dropped: its pages are rendered again without it.

Each answers ``202`` with the order (``refresh_id``, what it queued, ``queued``
false when the same order of the last 30 s was answered instead). Refused:
``403`` (no right on the URL's origin, another tenant's page), ``404`` (an image
no page of yours shows), ``422`` naming ``url`` (not a URL, an uploaded page,
nothing that could fetch it).
"""

from __future__ import annotations

from aiohttp import web

from cubes.api.auth import TENANT, refusal
from cubes.api.bodies import read_json_object
from cubes.api.context import ctx_of
from cubes.api.errors import ApiError, FieldError, ValidationFailed, json_response
from cubes.api.feeds import unavailable_on_outage
from shared.webmaster.access import AccessRefused
from shared.webmaster.refresh import Refreshed, Refresher, RefreshRefused

__all__ = ["add_routes", "refresher_of", "refused"]

_BODY_MAX = 8192
_REFRESHER: web.AppKey[list[Refresher]] = web.AppKey("refresher", list)


def refresher_of(request: web.Request) -> Refresher:
    """The application's one ``Refresher`` (its memory of recent orders is what keeps them bounded)."""
    held = request.app[_REFRESHER]
    if not held:
        ctx = ctx_of(request)
        held.append(Refresher(ctx.stores, ctx.publish, ctx.clock))
    return held[0]


def refused(exc: RefreshRefused) -> ApiError:
    """How the API says ``shared.webmaster.refresh``'s no: 404 for an image that is not the caller's, else 422 on
    url."""
    if exc.code == "not_found":
        return ApiError(404, "not_found", exc.message)
    return ValidationFailed([FieldError("url", exc.message)])


async def _url_of(request: web.Request) -> object:
    body = await read_json_object(request, _BODY_MAX)
    if "url" not in body:
        raise ValidationFailed([FieldError("url", "required")])
    return body["url"]


def _answer(done: Refreshed) -> web.Response:
    return json_response(done.as_dict(), status=202)


async def refresh_page(request: web.Request) -> web.StreamResponse:
    url = await _url_of(request)
    try:
        done = await unavailable_on_outage(refresher_of(request).page(url, tenant_id=request[TENANT]))
    except AccessRefused as exc:
        raise refusal(exc) from None
    except RefreshRefused as exc:
        raise refused(exc) from None
    return _answer(done)


async def _image(request: web.Request, *, purge: bool) -> web.StreamResponse:
    url = await _url_of(request)
    try:
        done = await unavailable_on_outage(refresher_of(request).image(url, tenant_id=request[TENANT], purge=purge))
    except RefreshRefused as exc:
        raise refused(exc) from None
    return _answer(done)


async def refresh_image(request: web.Request) -> web.StreamResponse:
    return await _image(request, purge=False)


async def purge_image(request: web.Request) -> web.StreamResponse:
    return await _image(request, purge=True)


def add_routes(app: web.Application) -> None:
    app[_REFRESHER] = []
    router = app.router
    router.add_post("/api/v1/pages/refresh", refresh_page, name="pages.refresh")
    router.add_post("/api/v1/images/refresh", refresh_image, name="images.refresh")
    router.add_post("/api/v1/images/purge", purge_image, name="images.purge")
