"""What a shop category's page lists of an offer's page, and whose shop a page is (cubes/kvwriter/offers.py)."""

from __future__ import annotations

from pathlib import Path

from cubes.kvwriter.branding import BrandingLookup
from cubes.kvwriter.handler import KvwriterHandler
from cubes.kvwriter.offers import offer_of, shop_of
from shared.config import Settings
from shared.messages import CategoryRef, DocKind, Media, MediaKind, Product, ProductParam, SourceKind, SourceRef
from shared.stores import Feed, Offer, open_stores
from tests.unit.cubes.kvwriter.test_kvwriter_render import make_doc


def kettle(**kw: object):  # type: ignore[no-untyped-def]
    values: dict[str, object] = {
        "url": "https://shop.example/p/1",
        "host": "shop.example",
        "source": SourceRef(kind=SourceKind.yml, id="feed-1"),
        "kind": DocKind.product,
        "title": "Чайник",
        "media": [
            Media(url="https://shop.example/v.mp4", kind=MediaKind.video, cdn_url="/cdn/v.mp4"),
            Media(url="https://shop.example/k.jpg", cdn_url="/cdn/img/k.jpg"),
        ],
        "product": Product(
            offer_id="1",
            price="1 990,50",
            currency="RUR",
            vendor="Заря",
            category_path=[CategoryRef(id="1", name="Кухня"), CategoryRef(id="7", name="Чайники")],
            params=[ProductParam(name="Объём", value="1,7", unit="л"), ProductParam(name="Цвет", value="белый")],
        ),
    }
    values.update(kw)
    return make_doc(**values)


def test_an_offer_carries_its_category_price_vendor_parameters_and_picture() -> None:
    assert offer_of(kettle()) == Offer(
        category="7",  # its own category, the leaf of its path
        price=1990.5,
        vendor="Заря",
        params=(("Объём", "1,7 л"), ("Цвет", "белый")),
        price_text="1 990,50",
        currency="RUR",
        picture="/cdn/img/k.jpg",  # the first image's CDN copy, not the video
    )
    unpriced = kettle(product=Product(offer_id="2", price="по запросу", category_path=[CategoryRef(id="7", name="Ч")]))
    assert offer_of(unpriced) == Offer(
        category="7", picture="/cdn/img/k.jpg"
    )  # no readable price: sorted last, shown without one
    assert offer_of(kettle(preview=True)) is None  # a preview is never listed
    assert offer_of(make_doc()) is None  # an article


def test_a_page_is_its_tenants_shop_or_its_sources() -> None:
    assert shop_of(kettle(), "t1") == "tenant:t1"
    assert shop_of(kettle(), None) == "yml:feed-1"
    listing = make_doc(url="https://shop.example/?turbo_category=7", host="shop.example", extra={"turbo:category": "7"})
    assert shop_of(listing, "t1") == "tenant:t1"
    assert shop_of(make_doc(), "t1") == ""  # neither an offer nor a listing
    assert shop_of(kettle(preview=True), "t1") == ""


async def test_the_kvwriter_stores_the_offer_under_its_tenants_shop(tmp_path: Path) -> None:
    stores = await open_stores(f"sqlite:///{tmp_path}/s.db")
    try:
        tenant = await stores.tenants.create_tenant("Посуда")
        await stores.feeds.upsert_feed(
            Feed("feed-1", "https://shop.example/yml.xml", "shop.example", "yml", tenant_id=tenant.tenant_id)
        )
        writer = KvwriterHandler(stores.pages, Settings(), brands=BrandingLookup(stores))
        await writer.write(kettle())
        page = await stores.pages.get("https://shop.example/p/1")
        assert page is not None
        assert page.shop == f"tenant:{tenant.tenant_id}"
        assert page.offer is not None
        assert page.offer.category == "7"
    finally:
        await stores.close()
