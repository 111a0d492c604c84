"""A shop's offer page on a phone, in headless Chromium: the cart button with the offer's id, the one-click order,
every label in the catalog's language.

The page is written by the kvwriter from a YML offer of a Russian catalog that declares no language (YML has no
``<language>``: the words come from the page's own text), with the shop settings its tenant set (a cart URL
template and a one-click order by phone and by the shop's form), and served by the frontend; Chromium opens it at
390 px and reads what a reader sees. Screenshot: ``test-artifacts/browser/shop-phone.png``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web

from cubes.frontend.app import create_app
from cubes.kvwriter.branding import BrandingLookup
from cubes.kvwriter.handler import KvwriterHandler
from cubes.parser.documents import prepare_items, to_document
from cubes.parser.feed import parse_feed
from shared.blobs import open_blobs
from shared.config import Settings
from shared.messages import CategoryRef, DocKind, Document, Product, ProductParam, SourceKind, SourceRef
from shared.stores import Feed, open_stores
from shared.webmaster.branding import parse_branding
from tests.integration.test_browser_frontend import (  # the browser fixture and the CDP helpers
    STEP_TIMEOUT,
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


@pytest.fixture
async def category(tmp_path: Path) -> AsyncIterator[str]:
    """A catalog of 60 kettles parsed and written, its category served by the frontend."""
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    offers = "".join(
        f'<offer id="{i}"><url>https://{HOST}/p/{i}</url><price>{(i * 37) % 60 * 100 + 990}</price>'
        f"<currencyId>RUR</currencyId><categoryId>7</categoryId><name>Чайник «Заря-{i}», 1,7 л</name>"
        f'<vendor>{"Заря" if i % 3 else "Восход"}</vendor><param name="Цвет">{"белый" if i % 2 else "чёрный"}</param>'
        "</offer>"
        for i in range(60)
    )
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-12-01 10:00"><shop><name>Чайники</name>'
        f'<url>https://{HOST}/</url><categories><category id="1">Кухня</category>'
        f'<category id="7" parentId="1">Чайники</category></categories>'
        f"<offers>{offers}</offers></shop></yml_catalog>"
    ).encode()
    result = parse_feed(body, url=f"https://{HOST}/yml.xml")
    cands, _ = prepare_items([*result.items, *result.listings], feed_host=HOST)
    writer = KvwriterHandler(stores.pages, settings, images=stores.images)
    for cand in cands:
        doc = to_document(cand, source=SourceRef(kind=SourceKind.yml, id="yml"), version=1, seen_at=T0, parsed_at=T0)
        await writer.write(doc.model_copy(update={"media_ready_at": T0}))
    runner = web.AppRunner(create_app(settings, stores), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    yield f"http://{host}:{port}"
    await runner.cleanup()
    await stores.close()


async def _follow(cdp: Cdp, session: str, js: str) -> None:
    """Run ``js`` (a click on a link or a button) and wait for the page it opens to load."""
    loaded = cdp.expect(lambda e: e.get("sessionId") == session and e["method"] == "Page.loadEventFired")
    await _eval(cdp, session, js)
    await asyncio.wait_for(loaded, STEP_TIMEOUT)


_PRICES = "[...document.querySelectorAll('.tc-card b')].map(b => Number(b.innerText.replace(/[^0-9]/g, '')))"


async def test_a_category_on_a_phone_is_sorted_filtered_and_paged_by_clicking(
    category: str,
    browser: Cdp,  # noqa: F811
) -> None:
    """From an offer's crumb to its category, then by clicks only: cheapest first, the vendor Восход, page 2."""
    offer = f"{category}/turbo?url={quote(f'https://{HOST}/p/5', safe='')}"
    session = await _open(browser, offer, width=390, height=844, mobile=True)
    await _follow(browser, session, "document.querySelector('.tc-crumbs a:last-child').click()")
    assert await _eval(browser, session, "location.pathname") == f"/turbo/shop/{HOST}/category/7"
    assert await _eval(browser, session, "document.querySelector('#found').innerText") == (
        "Товаров: 60 · страница 1 из 3"
    )
    await _follow(
        browser,
        session,
        "[...document.querySelectorAll('#sorts a')].find(a => a.innerText == 'Сначала дешевле').click()",
    )
    prices = await _eval(browser, session, _PRICES)
    assert prices[:2] == [990, 1090]
    assert prices == sorted(prices)
    assert len(prices) == 24
    await _follow(
        browser,
        session,
        "document.querySelector('input[name=vendor][value=Восход]').click();document.querySelector('#apply').click()",
    )
    assert "vendor=" in await _eval(browser, session, "location.search")
    assert "sort=price_asc" in await _eval(browser, session, "location.search")  # the sort stays
    assert await _eval(browser, session, "document.querySelector('#found').innerText") == "Товаров: 20"
    first = await _eval(browser, session, _PRICES)
    assert first == sorted(first)
    assert len(first) == 20
    assert await _eval(browser, session, "document.querySelector('a[rel=next]')") is None  # one page of 20
    await _follow(browser, session, "document.querySelector('#clear').click()")
    await _follow(browser, session, "document.querySelector('a[rel=next]').click()")
    assert await _eval(browser, session, "document.querySelector('#found').innerText") == (
        "Товаров: 60 · страница 2 из 3"
    )
    second = await _eval(browser, session, _PRICES)
    assert min(second) >= max(prices)  # page 2 goes on where page 1 stopped
    assert await _eval(browser, session, "document.querySelector('a[rel=prev]').innerText") == "← Назад"
    assert await _eval(browser, session, "document.documentElement.scrollWidth") <= 390
    assert not _errors(browser)
    await _shot(browser, session, "shop-category-phone")
    await _follow(
        browser,
        session,
        "document.querySelector('input[name=\"param.Цвет\"][value=чёрный]').click();"
        "document.querySelector('#apply').click()",
    )
    assert (
        await _eval(browser, session, "document.querySelector('#found').innerText") == "Товаров: 30 · страница 1 из 2"
    )
    await _shot(browser, session, "shop-category-filtered-phone")
