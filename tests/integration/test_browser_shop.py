"""A shop's offer page on a phone, in headless Chromium: the cart button with the offer's id, the one-click order,
every label in the catalog's language.

The page is written by the kvwriter from a YML offer of a Russian catalog that declares no language (YML has no
``<language>``: the words come from the page's own text), with the shop settings its tenant set (a cart URL
template and a one-click order by phone and by the shop's form), and served by the frontend; Chromium opens it at
390 px and reads what a reader sees. Screenshot: ``test-artifacts/browser/shop-phone.png``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web

from cubes.frontend.app import create_app
from cubes.kvwriter.branding import BrandingLookup
from cubes.kvwriter.handler import KvwriterHandler
from shared.blobs import open_blobs
from shared.branding import parse_branding
from shared.config import Settings
from shared.messages import CategoryRef, DocKind, Document, Product, ProductParam, SourceKind, SourceRef
from shared.stores import Feed, open_stores
from tests.integration.test_browser_frontend import (  # the browser fixture and the CDP helpers
    Cdp,
    _errors,
    _eval,
    _open,
    _shot,
    browser,  # noqa: F401 - a fixture, used by name
)

pytestmark = pytest.mark.browser

HOST = "chainiki.example"
PAGE = f"https://{HOST}/p/kettle-7"
OFFER = "A-17/ru"  # an id with characters a URL must encode
T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"}, cdn={"url": f"file://{tmp_path}/cdn"}
    )
    stores = await open_stores(settings.store.url)
    cdn = await open_blobs(settings.cdn.url, public_base_url=settings.cdn.public_base_url)
    tenant = await stores.tenants.create_tenant("Чайники")
    await stores.tenants.add_host(tenant.tenant_id, HOST)
    await stores.tenants.set_verified(tenant.tenant_id, HOST, True)
    await stores.feeds.upsert_feed(Feed("yml", f"https://{HOST}/yml.xml", HOST, "yml", tenant_id=tenant.tenant_id))
    branding = parse_branding(
        {
            "shop": {
                "cart_url": f"https://{HOST}/cart/add?offer={{offer_id}}&from=turbo",
                "order_phone": "+7 495 765-43-21",
                "order_url": f"https://{HOST}/quick-order",
            }
        },
        HOST,
    )
    await stores.tenants.set_branding(tenant.tenant_id, HOST, branding.to_json())
    writer = KvwriterHandler(stores.pages, settings, images=stores.images, brands=BrandingLookup(stores))
    await writer.handle(
        Document(
            url=PAGE,
            host=HOST,
            source=SourceRef(kind=SourceKind.yml, id="yml"),
            kind=DocKind.product,
            title="Чайник электрический «Заря», 1,7 л",
            content_html="<p>Стальной корпус, закрытая спираль, автоотключение.</p>",
            product=Product(
                offer_id=OFFER,
                price="1990",
                old_price="2490",
                currency="RUR",
                category="Чайники",
                category_path=[
                    CategoryRef(id="1", name="Кухня"),
                    CategoryRef(id="7", name="Чайники"),
                ],
                vendor="Заря",
                params=[ProductParam(name="Объём", value="1,7", unit="л")],
                delivery=True,
                shop="Чайники и кофе",
            ),
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


async def test_a_shop_page_on_a_phone_has_a_cart_button_with_the_offers_id(
    shop: str,
    browser: Cdp,  # noqa: F811
) -> None:
    session = await _open(browser, f"{shop}/turbo?url={quote(PAGE, safe='')}", width=390, height=844, mobile=True)
    cart = await _eval(
        browser, session, "(a => [a.innerText, a.getAttribute('href')])(document.querySelector('a.cart'))"
    )
    assert cart == ["В корзину", f"https://{HOST}/cart/add?offer={quote(OFFER, safe='')}&from=turbo"]
    box = await _eval(
        browser, session, "(r => [r.width, r.bottom])(document.querySelector('a.cart').getBoundingClientRect())"
    )
    assert box[0] >= 120
    assert box[1] <= 844
    orders = await _eval(
        browser, session, "[...document.querySelectorAll('a.order')].map(a => [a.innerText, a.getAttribute('href')])"
    )
    assert orders == [
        ["Заказать по телефону", "tel:+74957654321"],
        [
            "Купить в один клик",
            f"https://{HOST}/quick-order?offer_id={quote(OFFER, safe='')}&url={quote(PAGE, safe='')}",
        ],
    ]
    words = await _eval(browser, session, "document.querySelector('.product').innerText")
    for russian in ("В наличии", "Купить в магазине «Чайники и кофе»", "Производитель", "Доставка"):
        assert russian in words
    for english in ("In stock", "Buy at", "Vendor", "Delivery"):
        assert english not in words
    assert await _eval(browser, session, "document.documentElement.lang") == "ru"
    assert await _eval(browser, session, "document.documentElement.scrollWidth") <= 390
    assert not _errors(browser)
    await _shot(browser, session, "shop-phone")
