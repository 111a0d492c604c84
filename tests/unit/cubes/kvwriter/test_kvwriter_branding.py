"""A host's branding on its pages: worn by its tenant's pages only, applied to the pages already written, and a
logo shown once its copy is in the CDN (cubes/kvwriter/branding.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.kvwriter.branding import BrandingLookup
from cubes.kvwriter.handler import KvwriterHandler
from shared.config import Settings
from shared.messages import BrandingChanged, Document, MediaCached, MediaStatus, SourceKind, SourceRef
from shared.stores import Feed, Stores, open_stores
from shared.webmaster.branding import logo_requester, parse_branding

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
HOST = "shop.example"
LOGO = f"https://{HOST}/logo.png"
LOGO_CDN = "/cdn/img/cc/" + "c" * 64 + ".png"


def doc(url: str, feed_id: str, title: str, version: int = 1) -> Document:
    return Document(
        url=url,
        host=HOST,
        source=SourceRef(kind=SourceKind.rss, id=feed_id),
        title=title,
        content_html=f"<p>{title}: the text.</p>",
        content_hash=f"h{version}",
        version=version,
        seen_at=T0,
        parsed_at=T0,
        media_ready_at=T0,
    )


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield s
    finally:
        await s.close()


async def _tenant(stores: Stores, name: str, feed_id: str) -> str:
    t = await stores.tenants.create_tenant(name)
    await stores.tenants.add_host(t.tenant_id, HOST)
    await stores.tenants.set_verified(t.tenant_id, HOST, True)
    await stores.feeds.upsert_feed(Feed(feed_id, f"https://{HOST}/{feed_id}.xml", HOST, "rss", tenant_id=t.tenant_id))
    return t.tenant_id


async def test_a_branding_is_worn_by_its_tenants_pages_only_and_reaches_the_pages_written(stores: Stores) -> None:
    a = await _tenant(stores, "A", "fa")
    await _tenant(stores, "B", "fb")  # another holder of the same host: its pages keep their own look
    writer = KvwriterHandler(stores.pages, Settings(), images=stores.images, brands=BrandingLookup(stores))
    pages = {"a1": ("fa", "Lamps"), "a2": ("fa", "Chairs"), "b1": ("fb", "Tables")}
    for slug, (feed_id, title) in pages.items():
        url = f"https://{HOST}/{slug}"
        await writer.handle(doc(url, feed_id, title))
        await stores.hashes.check_and_set(f"feed:{feed_id}", url, "h1", now=T0)
    before = await stores.pages.get(f"https://{HOST}/a1")
    assert before is not None
    assert f'<a class="host" href="/">{HOST}</a>' in before.html

    branding = {
        "display_name": "Lamp & Co",
        "accent": "#0a7d3b",
        "logo_url": LOGO,
        "menu": [{"label": "Catalogue", "url": f"https://{HOST}/catalogue"}],
        "contacts": [{"kind": "phone", "value": "+7 495 123-45-67"}],
    }
    await stores.tenants.set_branding(a, HOST, parse_branding(branding, HOST).to_json())
    await writer.handle(BrandingChanged(host=HOST, tenant_id=a, changed_at=T0))
    for slug in ("a1", "a2"):
        page = await stores.pages.get(f"https://{HOST}/{slug}")
        assert page is not None
        assert '<a class="host" href="/">Lamp &amp; Co</a>' in page.html
        assert ":root{--acc:#0a7d3b}" in page.html
        assert f'<nav class="menu"><a href="https://{HOST}/catalogue">Catalogue</a></nav>' in page.html
        assert '<a class="contact phone" href="tel:+74951234567"' in page.html
        assert page.version == 2  # rendered again, one version up: a later edit of the source still wins
        assert 'class="logo"' not in page.html  # its copy is not in the CDN yet
    theirs = await stores.pages.get(f"https://{HOST}/b1")
    assert theirs is not None
    assert "Lamp &amp; Co" not in theirs.html
    assert theirs.version == 1

    # the logo reaches the CDN: the pages show it
    await stores.images.record_ok(LOGO, cdn_url=LOGO_CDN, mime="image/png", now=T0)
    await writer.handle(
        MediaCached(
            url=LOGO, status=MediaStatus.ok, cdn_url=LOGO_CDN, cached_at=T0, requesters=[logo_requester(a, HOST)]
        )
    )
    page = await stores.pages.get(f"https://{HOST}/a2")
    assert page is not None
    assert f'<img class="logo" src="{LOGO_CDN}"' in page.html
    # a new page of the tenant wears it at once
    await writer.handle(doc(f"https://{HOST}/a3", "fa", "Shelves"))
    fresh = await stores.pages.get(f"https://{HOST}/a3")
    assert fresh is not None
    assert "Lamp &amp; Co" in fresh.html

    # back to the default look
    await stores.tenants.set_branding(a, HOST, None)
    await writer.handle(BrandingChanged(host=HOST, tenant_id=a, changed_at=T0))
    page = await stores.pages.get(f"https://{HOST}/a1")
    assert page is not None
    assert f'<a class="host" href="/">{HOST}</a>' in page.html
    assert "--acc:#0a7d3b" not in page.html
