"""The shop store's contract, run against every engine: a category's offers of one shop on one host, paged,
sorted and filtered, from the page table (shared/stores/shop.py)."""

from __future__ import annotations

from shared.stores import CategoryFacets, Offer, OfferQuery, Page, Sort, Stores, UpsertOutcome
from tests.contract.store_contract import page

SHOP = "tenant:t1"


def offer_page(i: int, price: float | None, **offer: object) -> Page:
    facts: dict[str, object] = {
        "category": "7",
        "price": price,
        "vendor": "Заря" if i % 2 else "Восход",
        "params": (("Цвет", "белый" if i % 3 else "чёрный"), ("Объём", "1,7 л")),
        "price_text": "" if price is None else f"{price:g}",
        "currency": "RUR",
        "picture": f"/cdn/{i}.jpg",
    }
    facts.update(offer)
    return page(1, f"https://shop.example/p/{i}", title=f"Чайник {i:03d}", shop=SHOP, offer=Offer(**facts))  # type: ignore[arg-type]


class ShopStoreContract:
    """Mixed into each engine's store suite, whose ``stores`` fixture it uses."""

    async def test_an_offers_facts_round_trip_with_its_page(self, stores: Stores) -> None:
        p = offer_page(1, 1990.5)
        assert await stores.pages.upsert(p) is UpsertOutcome.inserted
        got = await stores.pages.get(p.url)
        assert got is not None
        assert (got.shop, got.offer) == (SHOP, p.offer)
        plain = page(1, "https://shop.example/about")
        await stores.pages.upsert(plain)
        got = await stores.pages.get(plain.url)
        assert got is not None
        assert (got.shop, got.offer) == ("", None)

    async def test_a_category_is_paged_sorted_and_filtered(self, stores: Stores) -> None:
        prices = [(i * 37) % 50 * 10.0 + 100 for i in range(30)]
        await stores.pages.upsert_many([offer_page(i, p) for i, p in enumerate(prices)] + [offer_page(99, None)])
        q = OfferQuery("shop.example", "7", SHOP, Sort.price_asc, limit=10)
        seen: list[float | None] = []
        for offset in range(0, 40, 10):
            total, cards = await stores.shop.offers(_at(q, offset))
            assert total == 31
            seen += [c.offer.price for c in cards]
        assert seen == [*sorted(prices), None]  # no price: last
        total, cards = await stores.shop.offers(_at(q, 0, sort=Sort.price_desc))
        assert [c.offer.price for c in cards] == sorted(prices, reverse=True)[:10]
        total, cards = await stores.shop.offers(_at(q, 0, sort=Sort.name, limit=3))
        assert [c.title for c in cards] == ["Чайник 000", "Чайник 001", "Чайник 002"]
        assert (cards[0].offer.picture, cards[0].offer.currency) == ("/cdn/0.jpg", "RUR")
        total, cards = await stores.shop.offers(_at(q, 0, vendors=("Заря",), params=(("Цвет", "чёрный"),), limit=50))
        assert sorted(int(c.url.rsplit("/", 1)[1]) for c in cards) == [
            i for i in [*range(30), 99] if i % 2 and not i % 3
        ]
        assert total == len(cards)
        # exact and case-sensitive on both engines, never a substring
        for vendors, params in ((("заря",), ()), ((), (("Цвет", "чёрн"),)), ((), (("Цве", "чёрный"),))):
            assert (await stores.shop.offers(_at(q, 0, vendors=vendors, params=params)))[0] == 0
        assert await stores.shop.offers(_at(q, 40)) == (31, [])  # past the end

    async def test_only_the_shops_live_offers_of_the_host_and_category(self, stores: Stores) -> None:
        await stores.pages.upsert_many(
            [
                offer_page(1, 100),
                offer_page(2, 100, category="8"),  # another category
                page(1, "https://shop.example/p/3", shop="tenant:t2", offer=Offer(category="7", price=1)),
                page(1, "https://other.example/p/4", shop=SHOP, offer=Offer(category="7", price=1)),
                offer_page(5, 100),
            ]
        )
        await stores.pages.delete("https://shop.example/p/5", 2)
        total, cards = await stores.shop.offers(OfferQuery("shop.example", "7", SHOP))
        assert (total, [c.url for c in cards]) == (1, ["https://shop.example/p/1"])
        facets = await stores.shop.facets("shop.example", "7", SHOP)
        assert facets == CategoryFacets(
            vendors=[("Заря", 1)], params=[("Объём", [("1,7 л", 1)]), ("Цвет", [("белый", 1)])]
        )

    async def test_facets_count_vendors_and_parameter_values(self, stores: Stores) -> None:
        await stores.pages.upsert_many([offer_page(i, 10.0 * i) for i in range(12)])
        facets = await stores.shop.facets("shop.example", "7", SHOP)
        assert facets.vendors == [("Восход", 6), ("Заря", 6)]
        assert facets.params == [("Объём", [("1,7 л", 12)]), ("Цвет", [("белый", 8), ("чёрный", 4)])]


def _at(q: OfferQuery, offset: int, **change: object) -> OfferQuery:
    values = {f: getattr(q, f) for f in OfferQuery.__dataclass_fields__}
    values.update(offset=offset, **change)
    return OfferQuery(**values)
