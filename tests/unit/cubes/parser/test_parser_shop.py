"""Shop pages that sell: offer fields, breadcrumbs, and category listing pages."""

from __future__ import annotations

import pytest

from cubes.parser import categories
from cubes.parser.documents import prepare_items, to_document
from cubes.parser.feed import parse_feed
from shared.clock import SystemClock
from shared.messages import SourceKind, SourceRef

NOW = SystemClock().now()


def shop(offers: str, header: str = "") -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-01-01 10:00"><shop>'
        "<name>Посуда</name><company>ООО Посуда</company><url>https://shop.test/</url>"
        '<currencies><currency id="RUR" rate="1"/></currencies>'
        '<categories><category id="1">Кухня</category><category id="7" parentId="1">Чайники</category>'
        '<category id="8" parentId="1">Кастрюли</category><category id="9">Пусто</category></categories>'
        f"{header}<offers>{offers}</offers></shop></yml_catalog>"
    ).encode()


KETTLE = (
    '<offer id="42" available="true"><url>https://shop.test/p/kettle</url><price>1990</price>'
    "<oldprice>2490</oldprice><currencyId>RUR</currencyId><categoryId>7</categoryId>"
    "<picture>https://shop.test/i/kettle.jpg</picture><name>Чайник</name><vendor>Kettly</vendor>"
    "<vendorCode>KT-17</vendorCode><sales_notes>Оплата при получении</sales_notes><delivery>true</delivery>"
    '<pickup>true</pickup><store>false</store><delivery-options><option cost="300" days="1-3"/></delivery-options>'
    '<param name="Объём" unit="л">1.7</param></offer>'
)
POT = (
    '<offer id="43"><url>https://shop.test/p/pot</url><price>990</price><currencyId>RUR</currencyId>'
    "<categoryId>8</categoryId><name>Кастрюля</name></offer>"
)


def test_an_offer_carries_what_its_page_shows() -> None:
    header = '<delivery-options><option cost="0" days="5"/></delivery-options>'
    result = parse_feed(shop(KETTLE + POT, header), url="https://shop.test/yml.xml")
    kettle, pot = result.items
    assert kettle.product == {
        "offer_id": "42",
        "available": True,
        "price": "1990",
        "old_price": "2490",
        "currency": "RUR",
        "vendor": "Kettly",
        "vendor_code": "KT-17",
        "sales_notes": "Оплата при получении",
        "delivery": True,
        "pickup": True,
        "store": False,
        "category": "Чайники",
        "category_path": [
            {"id": "1", "name": "Кухня", "url": "https://shop.test/?turbo_category=1"},
            {"id": "7", "name": "Чайники", "url": "https://shop.test/?turbo_category=7"},
        ],
        "params": [{"name": "Объём", "value": "1.7", "unit": "л"}],
        "delivery_options": [{"cost": "300", "days": "1-3"}],  # the offer's own, not the shop's
        "shop": "Посуда",
    }
    assert pot.product is not None
    assert pot.product["delivery_options"] == [{"cost": "0", "days": "5"}]  # the shop's
    [cand], _ = prepare_items([kettle], feed_host="shop.test")
    doc = to_document(cand, source=SourceRef(kind=SourceKind.yml, id="f"), version=1, seen_at=NOW, parsed_at=NOW)
    assert doc.product is not None
    assert [c.name for c in doc.product.category_path] == ["Кухня", "Чайники"]


def test_categories_become_listing_pages() -> None:
    result = parse_feed(shop(KETTLE + POT), url="https://shop.test/yml.xml")
    assert len(result.items) == 2  # the feed's items are its offers; listings are pages made from it
    by_url = {it.link: it for it in result.listings if it.link}
    assert sorted(by_url) == [f"https://shop.test/?turbo_category={c}" for c in ("1", "7", "8")]  # 9 is empty
    kitchen = by_url["https://shop.test/?turbo_category=1"]
    assert kitchen.title == "Кухня"
    # no offer of its own; its subcategories (id, name, offers) for its category's page on the frontend
    assert kitchen.extra == {
        "turbo:category": "1",
        "turbo:subcategories": ['["7","Чайники",1]', '["8","Кастрюли",1]'],
    }
    assert by_url["https://shop.test/?turbo_category=7"].extra == {"turbo:category": "7", "turbo:offers": "1"}
    # a parent lists its subcategories with how many offers each holds
    assert '<a class="tc-card" href="https://shop.test/?turbo_category=7"><span>Чайники (1)</span></a>' in (
        kitchen.content_html
    )
    kettles = by_url["https://shop.test/?turbo_category=7"].content_html
    assert kettles.startswith('<nav class="tc-crumbs"><a href="https://shop.test/?turbo_category=1">Кухня</a></nav>')
    assert (
        '<a class="tc-card" href="https://shop.test/p/kettle"><img src="https://shop.test/i/kettle.jpg" alt="">'
        "<span>Чайник</span><b>1\u00a0990\u00a0₽</b></a>"
    ) in kettles
    cands, refused = prepare_items([*result.items, *result.listings], feed_host="shop.test")
    assert refused == []
    assert len(cands) == 5
    assert [m.url for m in cands[3].media] == ["https://shop.test/i/kettle.jpg"]  # the card's picture is cached


def test_a_big_category_shows_its_first_cards_and_how_many_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(categories, "MAX_CARDS", 2)
    offers = "".join(
        f'<offer id="{i}"><url>https://shop.test/p/{i}</url><price>{i}</price><categoryId>8</categoryId>'
        f"<name>Кастрюля {i}</name></offer>"
        for i in range(5)
    )
    result = parse_feed(shop(offers), url="https://shop.test/yml.xml")
    pots = next(it for it in result.listings if it.link == "https://shop.test/?turbo_category=8")
    assert pots.content_html.count('class="tc-card"') == 2
    assert pots.content_html.endswith('<p class="tc-note">+ 3</p>')
