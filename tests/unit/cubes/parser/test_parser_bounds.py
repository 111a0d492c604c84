"""Every free-text number and size of an item is bounded where the parser reads it (``cubes/parser/bounds.py``).

Each case failed before: a hostile price was published (and formatted into millions of digits), a
rating of 1e999 failed the whole upload (OverflowError), a date in the year 9999 at -14:00 was stored
and made its page answer 500, an offer's or a JSON document's content had no size limit.
"""

from __future__ import annotations

import orjson

from cubes.parser.documents import prepare_items
from cubes.parser.feed import Limits, parse_feed
from cubes.parser.model import ItemError
from cubes.parser.yml import MAX_DEPTH

SHOP = "https://shop.test"


def catalog(offer: str, header: str = "") -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-01-01 10:00"><shop><name>S</name>'
        f'<url>{SHOP}/</url><currencies><currency id="RUR" rate="1"/></currencies>'
        '<categories><category id="1">C</category></categories>'
        f"{header}<offers>{offer}</offers></shop></yml_catalog>"
    ).encode()


def offer(fields: str, oid: str = "1") -> str:
    return f'<offer id="{oid}"><url>{SHOP}/p/{oid}</url><name>N{oid}</name><categoryId>1</categoryId>{fields}</offer>'


def codes(errors: list[ItemError]) -> list[tuple[str | None, str]]:
    return [(e.code, e.severity.value) for e in errors]


def test_an_offer_whose_price_is_not_a_price_is_refused_and_said_why() -> None:
    for price in ("1e2000000", "1e400000", "-5", "NaN", "дорого"):
        body = catalog(offer(f"<price>{price}</price>") + offer("<price>1990</price>", "2"))
        result = parse_feed(body, url=f"{SHOP}/yml.xml")
        assert [it.link for it in result.items] == [f"{SHOP}/p/2"], price
        [refused] = result.errors
        assert (refused.code, refused.index, refused.link) == ("item.bad_price", 0, f"{SHOP}/p/1")
        assert "is not a price" in refused.reason
        assert len(refused.reason) < 400
        # the listing page's card of the refused offer is not made either: its price is never formatted
        assert all("1e" not in it.content_html for it in result.listings)


def test_an_old_price_or_delivery_option_that_is_not_a_number_is_left_out_with_a_warning() -> None:
    fields = (
        "<price>10</price><oldprice>1e-400000</oldprice>"
        '<delivery-options><option cost="1e400000" days="1"/><option cost="300" days="99999999999"/>'
        '<option cost="0" days="1-3"/></delivery-options>'
    )
    result = parse_feed(catalog(offer(fields)), url=f"{SHOP}/yml.xml")
    [item] = result.items
    assert item.product is not None
    assert "old_price" not in item.product
    assert item.product["delivery_options"] == [{"cost": "0", "days": "1-3"}]
    [cand], errs = prepare_items([item], feed_host="shop.test")
    assert errs == []
    assert codes(cand.warnings) == [("item.bad_number", "warning")] * 2


def test_the_shops_own_bad_delivery_option_is_told_once() -> None:
    header = '<delivery-options><option cost="1e999" days="1"/><option cost="100" days="2"/></delivery-options>'
    body = catalog(offer("<price>1</price>") + offer("<price>2</price>", "2"), header)
    result = parse_feed(body, url=f"{SHOP}/yml.xml")
    assert [it.product["delivery_options"] for it in result.items if it.product] == [[{"cost": "100", "days": "2"}]] * 2
    cands, _ = prepare_items(result.items, feed_host="shop.test")
    assert [len(c.warnings) for c in cands] == [1, 0]


def test_a_json_product_whose_price_is_not_a_price_is_refused() -> None:
    docs = [
        {"url": f"{SHOP}/p/{i}", "title": "T", "product": {"offer_id": str(i), "price": price}}
        for i, price in enumerate(["1e2000000", "100"])
    ]
    result = parse_feed(orjson.dumps({"documents": docs}), declared_format=None)
    assert [it.link for it in result.items] == [f"{SHOP}/p/1"]
    assert codes(result.errors) == [("item.bad_price", "error")]


def test_a_rating_that_is_not_a_small_number_is_not_shown_and_nothing_fails() -> None:
    for value in ("1e999", "nan", "inf", "-1", "10000"):
        html = (
            '<div itemscope itemtype="http://schema.org/Rating">'
            f'<meta itemprop="ratingValue" content="{value}"><meta itemprop="bestRating" content="5"></div><p>x</p>'
        )
        body = (
            '<rss version="2.0" xmlns:turbo="http://turbo.yandex.ru"><channel><title>t</title>'
            f'<item turbo="true"><title>T</title><link>{SHOP}/a</link>'
            f"<turbo:content><![CDATA[{html}]]></turbo:content></item></channel></rss>"
        ).encode()
        result = parse_feed(body, url=f"{SHOP}/feed")
        [cand], errs = prepare_items(result.items, feed_host="shop.test")  # before: OverflowError / ValueError
        assert errs == [], value
        assert "tc-rating" not in cand.content_html
        assert codes(cand.warnings) == [("turbo.unsupported_block", "warning")]


def test_a_date_no_store_can_hold_is_left_out_with_a_warning() -> None:
    for date in ("9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "Fri, 31 Dec 9999 23:59:59 -1200"):
        body = (
            '<rss version="2.0"><channel><title>t</title><item><title>T</title>'
            f"<link>{SHOP}/a</link><pubDate>{date}</pubDate><description>x</description></item></channel></rss>"
        ).encode()
        [cand], _ = prepare_items(parse_feed(body, url=f"{SHOP}/feed").items, feed_host="shop.test")
        assert cand.published is None, date
        assert codes(cand.warnings) == [("item.bad_date", "warning")], date
    docs = [{"url": f"{SHOP}/j", "title": "T", "published_at": "9999-12-31T23:59:59-14:00"}]
    [cand], _ = prepare_items(parse_feed(orjson.dumps(docs)).items, feed_host="shop.test")
    assert cand.published is None
    assert codes(cand.warnings) == [("item.bad_date", "warning")]
    body = (
        '<rss version="2.0"><channel><title>t</title><item><title>T</title>'
        f"<link>{SHOP}/a</link><pubDate>Tue, 21 Apr 2015 14:15:00 +0300</pubDate></item></channel></rss>"
    ).encode()
    [cand], _ = prepare_items(parse_feed(body, url=f"{SHOP}/feed").items, feed_host="shop.test")
    assert cand.published is not None
    assert cand.warnings == []


def test_every_format_holds_an_item_to_the_size_limit() -> None:
    limits = Limits(max_item_bytes=10_000)
    big = "<p>" + "&nbsp;" * 5_000 + "</p>"
    yml = catalog(
        offer(f"<price>1</price><description><![CDATA[{big}]]></description>") + offer("<price>1</price>", "2")
    )
    docs = orjson.dumps(
        {"documents": [{"url": f"{SHOP}/a", "title": "T", "content_html": big}, {"url": f"{SHOP}/b", "title": "T"}]}
    )
    for body in (yml, docs):
        result = parse_feed(body, url=f"{SHOP}/feed", limits=limits)
        assert len(result.items) == 1
        assert codes(result.errors) == [("item.too_large", "error")]


def test_a_category_chain_of_any_depth_is_read_with_its_path_cut() -> None:
    # before: 500 levels of parentId failed the whole catalog with a RecursionError (and every offer of a
    # 5,000-level chain would have carried 5,000 crumbs)
    n = 5_000
    cats = '<category id="0">C0</category>' + "".join(
        f'<category id="{i}" parentId="{i - 1}">C{i}</category>' for i in range(1, n)
    )
    offers = offer(f"<price>1</price><categoryId>{n - 1}</categoryId>".replace("<categoryId>1</categoryId>", ""))
    body = catalog(offers).replace(b'<category id="1">C</category>', cats.encode())
    result = parse_feed(body, url=f"{SHOP}/yml.xml")
    [item] = result.items
    assert item.product is not None
    assert len(item.product["category_path"]) == MAX_DEPTH
    assert item.product["category_path"][-1]["id"] == str(n - 1)
    assert len(result.listings) == MAX_DEPTH
    [cand], _ = prepare_items(result.items, feed_host="shop.test")
    assert codes(cand.warnings) == [("yml.deep_categories", "warning")]
