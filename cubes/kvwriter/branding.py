"""Which branding a page wears, and the pages to render again when it changes (docs/architecture.md section 3).

A page wears the branding of the tenant whose source published it (``shared/webmaster/branding.py``): the
tenant of its feed, or of its upload; a page of no tenant (an operator's feed, the autoparser's)
wears none. The look-ups are cached, so a page write costs two dictionary reads: a source's
tenant for ``SOURCE_TTL_S`` (a feed does not change hands; a removed one stops publishing), a
tenant's branding of a host for ``BRANDING_TTL_S`` -- and a branding change renders the pages
again anyway (``KvwriterHandler.rebrand``), so the cache only decides how soon a page written
meanwhile by another process shows it.

The logo is shown from the CDN only: its copy is looked up in the image registry with the
branding, and a logo that is not there yet comes with the ``media.cached`` that brings it
(requester ``branding:<tenant>|<host>``), which renders the pages again.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, TypeVar

from shared.messages import Document, SourceKind
from shared.pages.shop import ShopSettings
from shared.stores import Stores
from shared.webmaster.branding import Branding

__all__ = ["BRANDING_TTL_S", "SOURCE_TTL_S", "BrandingLookup", "PageBrand"]

#: how long a tenant's branding of a host is taken from memory (another process's change reaches a page
#: written meanwhile within this; the re-render that follows a change covers what was there before it)
BRANDING_TTL_S = 10.0
#: how long a source's tenant is remembered
SOURCE_TTL_S = 300.0
#: entries of each cache; the oldest is forgotten past this
_MAX = 10_000


@dataclass(frozen=True, slots=True)
class PageBrand:
    """A branding as a page shows it: the logo as its CDN copy, the contacts as links."""

    name: str | None
    logo: str | None
    accent: str | None
    menu: tuple[tuple[str, str], ...]
    #: (kind, href, text) of each contact button
    contacts: tuple[tuple[str, str, str], ...]
    #: the shop's cart template and one-click order, for its offer pages (``shared/pages/shop.py``)
    shop: ShopSettings | None = None


K = TypeVar("K")
V = TypeVar("V")


class _Cache(Generic[K, V]):
    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._items: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def get(self, key: K, now: float) -> tuple[bool, V | None]:
        hit = self._items.get(key)
        if hit is None or hit[0] <= now:
            return False, None
        return True, hit[1]

    def put(self, key: K, value: V, now: float) -> None:
        self._items[key] = (now + self.ttl_s, value)
        self._items.move_to_end(key)
        while len(self._items) > _MAX:
            self._items.popitem(last=False)

    def forget(self, key: K) -> None:
        self._items.pop(key, None)


class BrandingLookup:
    def __init__(self, stores: Stores) -> None:
        self.stores = stores
        self._tenants: _Cache[tuple[str, str], str | None] = _Cache(SOURCE_TTL_S)
        self._brands: _Cache[tuple[str, str], PageBrand | None] = _Cache(BRANDING_TTL_S)

    async def for_doc(self, doc: Document) -> PageBrand | None:
        """The branding ``doc``'s page wears (None: the default look)."""
        if doc.preview and doc.source.kind is not SourceKind.upload:
            return None
        tenant = await self.tenant_of(doc)
        return None if tenant is None else await self.brand(tenant, doc.host)

    async def tenant_of(self, doc: Document) -> str | None:
        now = time.monotonic()
        key = (doc.source.kind.value, doc.source.id)
        found, tenant = self._tenants.get(key, now)
        if found:
            return tenant
        tenant = None
        if doc.source.kind is SourceKind.upload:
            task = await self.stores.tasks.get(doc.source.id)
            tenant = task.tenant_id if task is not None else None
        elif doc.source.kind is not SourceKind.autoparser:
            feed = await self.stores.feeds.get(doc.source.id)
            tenant = feed.tenant_id if feed is not None else None
        self._tenants.put(key, tenant, now)
        return tenant

    async def brand(self, tenant_id: str, host: str) -> PageBrand | None:
        now = time.monotonic()
        found, brand = self._brands.get((tenant_id, host), now)
        if found:
            return brand
        branding = Branding.from_json(await self.stores.tenants.branding(tenant_id, host))
        brand = None if branding is None else await self._shown(branding)
        self._brands.put((tenant_id, host), brand, now)
        return brand

    def forget(self, tenant_id: str, host: str) -> None:
        """Read the branding again at the next page (it changed, or its logo came)."""
        self._brands.forget((tenant_id, host))

    async def _shown(self, b: Branding) -> PageBrand:
        logo = None
        if b.logo_url:
            rec = await self.stores.images.get(b.logo_url)
            logo = rec.cdn_url if rec is not None and rec.status.value == "ok" else None
        return PageBrand(
            name=b.display_name,
            logo=logo,
            accent=b.accent,
            menu=tuple((m.label, m.url) for m in b.menu),
            contacts=tuple((c.kind, c.href(), c.text()) for c in b.contacts),
            shop=b.shop,
        )
