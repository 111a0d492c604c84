"""A branded host's Turbo page on a phone, in headless Chromium: its name, logo, colour, menu and contact buttons.

The page is written by the kvwriter (with the branding its tenant set, the logo's copy in the file CDN) and
served by the frontend; Chromium opens it at 390 px and reads what a reader sees: the header's name and
logo, the accent on the Turbo badge and the contact buttons, the menu. Screenshot:
``test-artifacts/browser/branded-phone.png``.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web
from PIL import Image

from cubes.frontend.app import create_app
from cubes.kvwriter.branding import BrandingLookup
from cubes.kvwriter.handler import KvwriterHandler
from shared.blobs import open_blobs
from shared.config import Settings
from shared.messages import Document, SourceKind, SourceRef
from shared.stores import Feed, open_stores
from shared.webmaster.branding import parse_branding
from tests.integration.test_browser_frontend import (  # the browser fixture and the CDP helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _shot,
    browser,  # noqa: F401 - a fixture, used by name
)

pytestmark = pytest.mark.browser

HOST = "lamps.example"
PAGE = f"https://{HOST}/catalogue/desk-lamp"
T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (10, 125, 59)).save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture
async def branded(tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"}, cdn={"url": f"file://{tmp_path}/cdn"}
    )
    stores = await open_stores(settings.store.url)
    cdn = await open_blobs(settings.cdn.url, public_base_url=settings.cdn.public_base_url)
    await cdn.put("img/0a/logo.png", _png())
    tenant = await stores.tenants.create_tenant("Lamp shop")
    await stores.tenants.add_host(tenant.tenant_id, HOST)
    await stores.tenants.set_verified(tenant.tenant_id, HOST, True)
    await stores.feeds.upsert_feed(Feed("lamps", f"https://{HOST}/feed.xml", HOST, "rss", tenant_id=tenant.tenant_id))
    branding = parse_branding(
        {
            "display_name": "Светлый дом",
            "accent": "#0a7d3b",
            "logo_url": f"https://{HOST}/logo.png",
            "menu": [
                {"label": "Каталог", "url": f"https://{HOST}/catalogue"},
                {"label": "Доставка", "url": f"https://{HOST}/delivery"},
            ],
            "contacts": [
                {"kind": "phone", "value": "+7 495 123-45-67", "label": "Позвонить"},
                {"kind": "telegram", "value": "@lamps_example"},
            ],
        },
        HOST,
    )
    await stores.tenants.set_branding(tenant.tenant_id, HOST, branding.to_json())
    await stores.images.record_ok(f"https://{HOST}/logo.png", cdn_url=cdn.public_url("img/0a/logo.png"), now=T0)
    writer = KvwriterHandler(stores.pages, settings, images=stores.images, brands=BrandingLookup(stores))
    await writer.handle(
        Document(
            url=PAGE,
            host=HOST,
            source=SourceRef(kind=SourceKind.rss, id="lamps"),
            title="Настольная лампа «Луч»",
            content_html="<p>Тёплый свет для рабочего стола: лампа с поворотным плафоном.</p>",
            content_hash="h1",
            version=1,
            seen_at=T0,
            parsed_at=T0,
            media_ready_at=T0,
        )
    )
    runner = web.AppRunner(create_app(settings, stores, cdn), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield f"http://{host}:{port}"
    await runner.cleanup()
    await cdn.close()
    await stores.close()


async def test_a_branded_hosts_page_shows_its_name_logo_colour_menu_and_contacts(
    branded: str,
    browser: Cdp,  # noqa: F811
) -> None:
    session = await _open(browser, f"{branded}/turbo?url={quote(PAGE, safe='')}", width=390, height=844, mobile=True)
    assert await _eval(browser, session, "document.querySelector('.bar .host').innerText") == "Светлый дом"
    logo = await _eval(
        browser,
        session,
        "(l => [l.naturalWidth, l.getBoundingClientRect().width])(document.querySelector('.bar .logo'))",
    )
    assert logo == [64, 28]  # the CDN's copy really loaded, shown at its place
    accent = "rgb(10, 125, 59)"
    assert await _eval(browser, session, "getComputedStyle(document.querySelector('.turbo')).backgroundColor") == accent
    buttons = await _eval(
        browser,
        session,
        "[...document.querySelectorAll('a.contact')]"
        ".map(a => [a.innerText, a.getAttribute('href'), getComputedStyle(a).backgroundColor])",
    )
    assert buttons == [["Позвонить", "tel:+74951234567", accent], ["Telegram", "https://t.me/lamps_example", accent]]
    menu = await _eval(browser, session, "[...document.querySelectorAll('nav.menu a')].map(a => a.innerText)")
    assert menu == ["Каталог", "Доставка"]
    assert await _eval(browser, session, "document.documentElement.scrollWidth") <= 390
    assert not _errors(browser)
    await _shot(browser, session, "branded-phone")
