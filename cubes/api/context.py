"""What every API handler reaches through ``request.app[CTX]``: engines, limits, the guard.

Built once per application at startup by ``cubes.api.app`` (stores are
opened then, not at import), closed at cleanup.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from cubes.api.auth import Authenticator
from cubes.api.limits import Limits
from cubes.api.shedding import LoadShedder
from cubes.api.throttle import Bulkhead
from shared.blobs.base import BlobStore
from shared.clock import Clock
from shared.config import Settings
from shared.http import AddressGuard
from shared.runtime.deps import Publish
from shared.stores import Stores
from shared.webmaster.rights import Rights

__all__ = ["CTX", "ApiContext", "ContextSlot", "ctx_of"]


@dataclass
class ApiContext:
    settings: Settings
    stores: Stores
    #: publish outputs and wait until each is durable (``Deps.publish``)
    publish: Publish
    clock: Clock
    #: the blob store for upload bodies over ``api.inline_body_max`` (opened on first use)
    blobs: Callable[[], Awaitable[BlobStore]]
    limits: Limits
    auth: Authenticator
    bulkhead: Bulkhead
    shedder: LoadShedder
    #: claims, proofs and re-checks, each change of rights recorded and told (``shared.webmaster.rights``)
    rights: Rights
    guard: AddressGuard
    #: the resolver the SSRF guard wraps when a feed URL's host is checked (tests map *.partner.test)
    resolver: object | None = None


class ContextSlot:
    """Holds the context once startup built it (an application's state is frozen after start)."""

    ctx: ApiContext | None = None


CTX: web.AppKey[ContextSlot] = web.AppKey("turbocubes_api", ContextSlot)


def ctx_of(request: web.Request) -> ApiContext:
    ctx = request.app[CTX].ctx
    assert ctx is not None, "the API context is built at application startup"
    return ctx
