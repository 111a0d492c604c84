"""A shop category's page on the frontend: 200 offers paged through sorted by price, filtered by vendor and by a
parameter, every word in the catalog's language, each bad parameter named, and only the live offers of the
shop that published the category, on its host (cubes/frontend/category.py over stores.shop)."""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from cubes.kvwriter.handler import KvwriterHandler
from cubes.parser.documents import prepare_items, to_document
from cubes.parser.feed import parse_feed
from shared.config import Settings
from shared.messages import SourceKind, SourceRef
from shared.pages.turbo_links import category_path
from shared.stores import Stores, open_stores

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
LISTING = "https://shop.test/?turbo_category=7"
N = 200


def catalog(prices: list[int], host: str = "shop.test", name: str = "Чайник", first: int = 0) -> bytes:
    offers = "".join(
        f'<offer id="{i}"><url>https://{host}/p/{i}</url><price>{price}</price><currencyId>RUR</currencyId>'
        f"<categoryId>7</categoryId><name>{name} {i}</name><vendor>{'Заря' if i % 4 == 0 else 'Восход'}</vendor>"
        f'<param name="Цвет">{"белый" if i % 2 else "чёрный"}</param></offer>'
        for i, price in enumerate(prices, start=first)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-12-01 10:00"><shop><name>Посуда</name>'
        f'<url>https://{host}/</url><categories><category id="1">Кухня</category>'
        '<category id="7" parentId="1">Чайники</category></categories>'
        f"<offers>{offers}</offers></shop></yml_catalog>"
    ).encode()


async def publish(stores: Stores, body: bytes, host: str, source: str, *, preview: bool = False) -> None:
    settings = Settings()
    result = parse_feed(body, url=f"https://{host}/yml.xml")
    cands, refused = prepare_items([*result.items, *result.listings], feed_host=host)
    assert refused == []
    writer = KvwriterHandler(stores.pages, settings, images=stores.images)
    for cand in cands:
        doc = to_document(cand, source=SourceRef(kind=SourceKind.yml, id=source), version=1, seen_at=T0, parsed_at=T0)
        await writer.write(doc.model_copy(update={"media_ready_at": T0, "preview": preview}))


@dataclass
class Shop:
    client: TestClient[Any, Any]
    stores: Stores
    prices: list[int]


@pytest.fixture
async def shop(tmp_path: Path) -> AsyncIterator[Shop]:
    rng = random.Random(7)
    prices = [rng.randrange(500, 9000) for _ in range(N)]
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    stores = await open_stores(settings.store.url)
    await publish(stores, catalog(prices), "shop.test", "f")
    c = TestClient(TestServer(create_app(settings, stores), host="127.0.0.1", port=0))
    await c.start_server()
    yield Shop(c, stores, prices)
    await c.close()
    await stores.close()


def _prices(page: str) -> list[Decimal]:
    return [Decimal(p.replace("\u00a0", "").replace("₽", "")) for p in re.findall(r"<b>([^<]*₽)</b>", page)]


def _cards(page: str) -> list[str]:
    return re.findall(r'<a class="tc-card" href="/turbo\?url=([^"]+)"', page)


def _next(page: str) -> str | None:
    found = re.search(r'rel="next" href="([^"]+)"', page)
    return unescape(found.group(1)) if found else None


async def test_a_category_pages_through_its_200_offers_sorted_by_price(shop: Shop) -> None:
    c, prices = shop.client, shop.prices
    listing = await (await c.get("/turbo", params={"url": LISTING})).text()
    assert 'href="/turbo/shop/shop.test/category/7"' in listing  # the listing's Turbo page leads to its offers
    assert "Все товары категории (200)" in listing
    path: str | None = category_path("shop.test", "7", [("sort", "price_asc")])
    seen: list[Decimal] = []
    pages = 0
    while path is not None:
        r = await c.get(path)
        assert r.status == 200, path
        page = await r.text()
        pages += 1
        seen += _prices(page)
        path = _next(page)
        assert pages <= 20, "the pager does not end"
    assert seen == sorted(Decimal(p) for p in prices)  # every offer once, cheapest first
    assert pages == 9  # 24 a page
    dear = await (await c.get(category_path("shop.test", "7", [("sort", "price_desc"), ("page", "2")]))).text()
    assert _prices(dear) == sorted((Decimal(p) for p in prices), reverse=True)[24:48]
    for words in ("Сначала дешевле", "Товаров: 200", "страница 2 из 9", "Производитель", "Дальше →", "← Назад"):
        assert words in dear
    assert '<html lang="ru">' in dear
    # the filters form is sent to the category's own page: its policy allows that, and nothing else
    policy = (await c.get(category_path("shop.test", "7"))).headers["Content-Security-Policy"]
    assert "form-action 'self'" in policy
    assert "script-src" not in policy
    assert 'Оригинал: <a href="https://shop.test/"' in dear  # the shop's own site, not a made-up address
    by_name = await (await c.get(category_path("shop.test", "7"))).text()
    assert "<b>По названию</b>" in by_name
    assert len(_cards(by_name)) == 24


async def test_a_category_is_filtered_by_vendor_and_by_a_parameter(shop: Shop) -> None:
    c, prices = shop.client, shop.prices
    path = category_path("shop.test", "7", [("sort", "price_asc"), ("vendor", "Заря"), ("param.Цвет", "чёрный")])
    page = await (await c.get(path)).text()
    wanted = sorted(Decimal(p) for i, p in enumerate(prices) if i % 4 == 0)  # Заря's are the even ones: black
    assert f"Товаров: {len(wanted)}" in page
    assert _prices(page) == wanted[:24]
    assert 'name="vendor" value="Заря" checked' in page
    assert 'name="param.Цвет" value="чёрный" checked' in page
    assert 'name="param.Цвет" value="белый">' in page  # the other value is offered, unchecked
    assert 'id="clear" href="/turbo/shop/shop.test/category/7?sort=price_asc">Сбросить фильтры</a>' in page
    white = await (await c.get(category_path("shop.test", "7", [("vendor", "Заря"), ("param.Цвет", "белый")]))).text()
    assert "Ничего не нашлось" in white
    # case and substrings are not a match: a filter is one exact value
    for pair in (("vendor", "заря"), ("param.Цвет", "чёрн"), ("param.Цве", "чёрный")):
        assert "Ничего не нашлось" in await (await c.get(category_path("shop.test", "7", [pair]))).text()


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"page": "0"}, "page"),
        ({"page": "-1"}, "page"),
        ({"page": "9" * 50}, "page"),
        ({"page": "2x"}, "page"),
        ({"sort": "<script>"}, "sort"),
        ({"sort": "price"}, "sort"),
        ({"vendor": "x" * 201}, "vendor"),
        ({"vendor": " "}, "vendor"),
        ({"param.": "x"}, "param."),
        ({"param.Цвет": "x" * 201}, "param.Цвет"),
    ],
)
async def test_a_parameter_out_of_its_rules_is_a_400_that_names_it(
    shop: Shop, query: dict[str, str], named: str
) -> None:
    r = await shop.client.get("/turbo/shop/shop.test/category/7", params=query)
    assert r.status == 400
    body = await r.text()
    assert f"The {named} parameter does not work" in unescape(body)
    assert "<script>" not in body


async def test_too_many_filters_a_repeated_page_and_a_page_past_the_end(shop: Shop) -> None:
    c = shop.client
    many = [("vendor", f"v{i}") for i in range(6)] + [("param.Цвет", f"c{i}") for i in range(5)]
    assert (await c.get(category_path("shop.test", "7", many))).status == 400
    assert (await c.get("/turbo/shop/shop.test/category/7?page=1&page=2")).status == 400
    r = await c.get(category_path("shop.test", "7", [("page", "10")]))  # 9 pages
    assert r.status == 404
    body = await r.text()
    assert "Такой страницы нет: в категории 9 стр." in body
    assert 'href="/turbo/shop/shop.test/category/7?page=9"' in body
    assert "tc-card" not in body
    # a parameter we do not know is ignored, as a shop's page would
    assert (await c.get("/turbo/shop/shop.test/category/7?utm_source=mail")).status == 200


async def test_a_crumb_of_an_offer_opens_its_categorys_page(shop: Shop) -> None:
    offer = await (await shop.client.get("/turbo", params={"url": "https://shop.test/p/3"})).text()
    assert 'href="/turbo/shop/shop.test/category/7"' in offer
    assert 'href="/turbo/shop/shop.test/category/1"' in offer
    kitchen = await shop.client.get("/turbo/shop/shop.test/category/1")  # only a subcategory, no offers itself
    assert kitchen.status == 200
    body = await kitchen.text()
    assert 'href="/turbo/shop/shop.test/category/7">Чайники (200)</a>' in body
    assert "Товаров: 0" in body


async def test_only_the_live_offers_of_the_listings_shop_on_its_host_are_listed(shop: Shop) -> None:
    """The attacks: another tenant's offers in the same category id on the same host, another host's
    category, a preview, a removed offer, a category id that is no listing."""
    c, stores = shop.client, shop.stores
    # another source (another tenant) publishes its own offers in a category 7 on shop.test: its listing
    # loses to the first (the store keeps one page a URL: same version), and its offers must not join
    await publish(stores, catalog([1, 2, 3], name="Чужой", first=1000), "shop.test", "other")
    # and a category 7 of its own host, evil.test
    await publish(stores, catalog([5, 6], host="evil.test", name="Злой"), "evil.test", "evil")
    # a debug upload's preview of an offer of the category
    await publish(stores, catalog([7], name="Превью", first=2000), "shop.test", "f", preview=True)
    await stores.pages.delete("https://shop.test/p/0", 5, now=T0)
    page = await (await c.get(category_path("shop.test", "7", [("sort", "price_asc")]))).text()
    found = re.search(r"Товаров: (\d+)", page)
    assert found is not None
    listing = await stores.pages.get(LISTING)
    assert listing is not None
    assert listing.shop == "yml:f"
    assert found.group(1) == str(N - 1)  # the removed one is gone
    for stranger in ("Злой", "Превью", "Чужой", "Чайник 0<"):
        assert stranger not in page
    evil = await (await c.get(category_path("evil.test", "7"))).text()
    assert re.findall(r"<span>([^<]*)</span>", evil) == ["Злой 0", "Злой 1"]
    for path in ("/turbo/shop/nowhere.test/category/7", "/turbo/shop/shop.test/category/99"):
        assert (await c.get(path)).status == 404
    # an offer's URL is no category, whatever its id says
    assert (await c.get("/turbo/shop/shop.test/category/" + "9" * 300)).status == 404


async def test_a_categorys_filter_choices_are_reused_for_a_minute_then_read_again() -> None:
    from cubes.frontend.category import FACETS_TTL_S, FacetCache
    from shared.stores import CategoryFacets

    now = [100.0]
    reads: list[int] = []

    async def read() -> CategoryFacets:
        reads.append(1)
        return CategoryFacets(vendors=[("Заря", len(reads))])

    cache = FacetCache(lambda: now[0])
    key = ("shop.test", "7", "yml:f")
    assert (await cache.get(key, read)).vendors == [("Заря", 1)]
    now[0] += FACETS_TTL_S - 1
    assert (await cache.get(key, read)).vendors == [("Заря", 1)]  # paging and sorting reuse them
    assert (await cache.get(("shop.test", "8", "yml:f"), read)).vendors == [("Заря", 2)]  # another category
    now[0] += 2
    assert (await cache.get(key, read)).vendors == [("Заря", 3)]  # a minute on: the catalog may have changed
