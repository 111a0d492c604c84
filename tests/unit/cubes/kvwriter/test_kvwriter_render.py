"""The Turbo page (cubes/kvwriter/render.py): light, self-contained, media from the CDN only."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import orjson
import pytest

from cubes.kvwriter.branding import PageBrand
from cubes.kvwriter.render import etag_for, preview_key, render
from shared.messages import DocKind, Document, Media, Product, ProductParam, SourceKind, SourceRef
from shared.pages.safehtml import MediaRule, SafeHtml
from shared.pages.shop import ShopSettings

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
SAN = SafeHtml(media=MediaRule.cdn, cdn_base="/cdn", video_hosts=["www.youtube.com"], page=True)


def make_doc(**kw: object) -> Document:
    base: dict[str, object] = {
        "url": "https://news.example/a/story",
        "host": "news.example",
        "source": SourceRef(kind=SourceKind.rss, id="feed-1"),
        "title": "Rockets & <Cats>",
        "author": "Ann Author",
        "published_at": T0,
        "content_html": "<p>Hello <b>world</b></p>",
        "content_hash": "h1",
        "version": 1,
        "seen_at": T0,
        "parsed_at": T0,
    }
    base.update(kw)
    return Document.model_validate(base)


def _srcs(page: str) -> list[str]:
    return re.findall(r'<(?:img|source|video)\b[^>]*?\s(?:src|poster)="([^"]*)"', page)


def test_page_has_the_expected_parts() -> None:
    out = render(make_doc(), SAN, written_at=T0)
    page = out.html
    assert page.startswith("<!doctype html>")
    assert '<meta name="viewport" content="width=device-width,initial-scale=1">' in page
    assert "<h1>Rockets &amp; &lt;Cats&gt;</h1>" in page
    assert "Ann Author" in page
    assert '<time datetime="2026-11-30T08:00:00+00:00">30 November 2026, 08:00 (UTC)</time>' in page
    assert "&#128640; Turbo" in page  # the rocket, as an entity: the page stays 1 byte per character
    assert "news.example" in page
    assert '<footer>Original: <a href="https://news.example/a/story"' in page
    assert "<p>Hello <b>world</b></p>" in page
    assert "<script" not in page.lower()
    assert "@media(prefers-color-scheme:dark)" in page
    # nothing is loaded from anywhere: no external stylesheet, font or script
    assert not re.search(r'(?:src|href)="https?://(?!news\.example/a/story")', page)


def test_non_cdn_images_never_reach_the_page() -> None:
    doc = make_doc(
        content_html='<p>x<img src="https://news.example/hot.jpg"><img src="https://news.example/ok.jpg"></p>',
        media=[
            Media(url="https://news.example/hot.jpg"),  # not cached: must disappear
            Media(url="https://news.example/ok.jpg", cdn_url="/cdn/img/ok.jpg"),
            Media(url="https://news.example/cover.jpg", role="cover"),  # not cached cover
        ],
    )
    out = render(doc, SAN, written_at=T0)
    assert _srcs(out.html) == ["/cdn/img/ok.jpg"]
    assert "hot.jpg" not in out.html
    assert "cover.jpg" not in out.html
    assert out.dropped_media == 2
    form = orjson.loads(out.doc_json)
    assert [m["url"] for m in form["media"]] == ["/cdn/img/ok.jpg"]
    assert "hot.jpg" not in out.doc_json.decode()


def test_cover_from_the_cdn_leads_the_page() -> None:
    doc = make_doc(media=[Media(url="https://news.example/c.jpg", role="cover", cdn_url="/cdn/img/c.jpg")])
    out = render(doc, SAN, written_at=T0)
    assert '<figure class="lead"><img src="/cdn/img/c.jpg"' in out.html
    assert out.shown_media == 1


def test_product_block() -> None:
    doc = make_doc(
        kind=DocKind.product,
        content_html="",
        summary="A good kettle",
        product=Product(
            offer_id="42",
            price="1990",
            old_price="2490",
            currency="RUR",
            available=False,
            vendor="Kettly",
            params=[ProductParam(name="Volume", value="1.7", unit="l")],
        ),
    )
    out = render(doc, SAN, written_at=T0)
    # no page language: a rouble price reads the Russian way; the words are English
    assert '<p class="price">1\u00a0990\u00a0₽<s class="old">2\u00a0490\u00a0₽</s>' in out.html
    assert '<span class="off">&minus;20%</span>' in out.html
    assert "On order" in out.html  # YML available="false": made to order, not out of stock
    assert "<dt>Volume</dt><dd>1.7 l</dd>" in out.html
    assert (
        '<a class="tc-btn tc-primary buy" href="https://news.example/a/story" rel="noopener">Go to the shop</a>'
        in out.html
    )
    assert "<p>A good kettle</p>" in out.html
    assert "Kettly" in out.text
    # the facts as the page shows them, each a block of its own (a snippet sets them apart)
    assert out.text == "A good kettle\n1 990 ₽\nKettly\nVolume: 1.7 l"


def test_a_shop_page_that_sells() -> None:
    """Breadcrumbs to the category pages, the price in its currency, delivery, notes, a buy button."""
    from shared.messages import CategoryRef, DeliveryOption

    doc = make_doc(
        url="https://shop.example/p/kettle",
        host="shop.example",
        kind=DocKind.product,
        content_html="<p>Boils fast.</p>",
        extra={"language": "ru"},
        product=Product(
            offer_id="42",
            price="1990.50",
            currency="RUB",
            category="Чайники",
            category_path=[
                CategoryRef(id="1", name="Кухня", url="https://shop.example/?turbo_category=1"),
                CategoryRef(id="7", name="Чайники", url="https://shop.example/?turbo_category=7"),
            ],
            vendor_code="KT-17",
            sales_notes="Оплата при получении",
            delivery=True,
            pickup=True,
            delivery_options=[DeliveryOption(cost="300", days="1-3"), DeliveryOption(cost="0", days="5")],
            shop="Посуда",
        ),
    )
    page = render(doc, SAN, written_at=T0).html
    assert (
        '<nav class="tc-crumbs"><a href="/turbo/shop/shop.example/category/1">Кухня</a>'
        '<a href="/turbo/shop/shop.example/category/7">Чайники</a></nav><h1>'
    ) in page
    assert '<p class="price">1\u00a0990,50\u00a0₽</p>' in page
    assert '<p class="stock in">В наличии</p>' in page
    assert 'href="https://shop.example/p/kettle" rel="noopener">Купить в магазине «Посуда»</a>' in page
    assert "Доставка: 300\u00a0₽, 1-3 дн.; бесплатно, 5 дн. · Самовывоз" in page
    assert '<p class="tc-note">Оплата при получении</p>' in page
    assert "<dt>Артикул</dt><dd>KT-17</dd>" in page


@pytest.mark.parametrize(
    ("currency", "lang", "shown"),
    [
        ("USD", None, "$1,990.50"),
        ("EUR", "ru", "1\u00a0990,50\u00a0€"),
        ("GBP", "en", "£1,990.50"),
        ("KZT", None, "1\u00a0990,50\u00a0₸"),
    ],
)
def test_prices_are_formatted_with_their_currency(currency: str, lang: str | None, shown: str) -> None:
    from shared.pages.i18n import format_price

    assert format_price("1990.50", currency, lang) == shown


def test_text_and_json_forms() -> None:
    doc = make_doc(content_html="<p>Alpha <script>bad()</script>beta</p><p>gamma</p>", summary="Sum")
    out = render(doc, SAN, written_at=T0)
    assert out.text == "Sum\nAlpha beta\ngamma"  # the summary and each paragraph a block
    form = orjson.loads(out.doc_json)
    assert form["url"] == doc.url
    assert form["version"] == 1
    assert form["content_html"] == "<p>Alpha beta</p><p>gamma</p>"
    assert form["written_at"] == T0.isoformat()
    assert form["etag"] == out.etag == etag_for("h1", 1)


def test_etag_changes_with_version_and_hash_and_is_header_safe() -> None:
    assert etag_for("abc", 1) != etag_for("abc", 2) != etag_for("abd", 2)
    assert re.fullmatch(r'"[A-Za-z0-9]*-\d+-r\d+"', etag_for('x"y\r\nz:sha', 7))


def test_preview_page_is_marked_and_keyed_apart() -> None:
    out = render(make_doc(preview=True), SAN, written_at=T0)
    assert "Preview: this page is not published" in out.html
    assert '<meta name="robots" content="noindex">' in out.html
    key = preview_key("task-1", "https://news.example/a/story")
    assert key == "preview:task-1:https://news.example/a/story"
    assert not key.startswith(("http://", "https://"))


def test_a_turbo_header_h1_that_repeats_the_title_is_shown_once() -> None:
    from cubes.kvwriter.body import without_repeated_title

    body = "<header><h1>Big  News</h1><p>lead</p></header><p>text</p>"
    assert without_repeated_title(body, "big news") == "<header><p>lead</p></header><p>text</p>"
    turbo = '<header class="tc-head"><h1>Big News</h1><h2>Sub</h2></header><p>text</p>'
    assert without_repeated_title(turbo, "Big News") == '<header class="tc-head"><h2>Sub</h2></header><p>text</p>'
    other = "<h1>Something else</h1><p>text</p>"
    assert without_repeated_title(other, "Big news") == other


def test_images_get_the_size_the_cdn_measured() -> None:
    doc = make_doc(
        content_html='<p><img src="https://news.example/a.jpg" alt="a"></p><p><img src="https://news.example/b.jpg"></p>',
        media=[
            Media(url="https://news.example/a.jpg", cdn_url="/cdn/img/a.jpg", width=1200, height=675),
            Media(url="https://news.example/b.jpg", cdn_url="/cdn/img/b.jpg"),  # not measured: no size invented
        ],
    )
    page = render(doc, SAN, written_at=T0).html
    assert '<img src="/cdn/img/a.jpg" width="1200" height="675" alt="a"' in page
    [b_tag] = re.findall(r'<img src="/cdn/img/b.jpg"[^>]*>', page)
    assert "width=" not in b_tag  # not measured: no size invented (nh3 orders its own attributes freely)


def test_a_link_into_the_page_becomes_an_in_page_anchor() -> None:
    doc = make_doc(
        content_html=(
            '<p><a href="https://news.example/a/story#c2">below</a> <a href="https://news.example/a/story#gone">x</a></p>'
            '<h2 id="c-c2">Two</h2>'
        )
    )
    page = render(doc, SAN, written_at=T0).html
    assert '<a href="#c-c2" rel=' in page
    assert 'href="https://news.example/a/story#gone"' in page  # no such id here: it stays a link to the original


def test_language_and_localized_date_at_the_source_offset() -> None:
    from datetime import timedelta, timezone

    moscow = datetime(2026, 11, 30, 11, 0, tzinfo=timezone(timedelta(hours=3)))
    page = render(make_doc(published_at=moscow, extra={"language": "ru-RU"}), SAN, written_at=T0).html
    assert page.startswith('<!doctype html><html lang="ru-RU">')
    assert '<time datetime="2026-11-30T11:00:00+03:00">30 ноября 2026, 11:00 (UTC+03:00)</time>' in page
    assert "<footer>Оригинал: " in page
    bogus = render(make_doc(extra={"language": '"><script>'}), SAN, written_at=T0).html
    assert bogus.startswith("<!doctype html><html><head>")


def test_a_category_listing_links_to_turbo_pages_and_to_its_categorys_page() -> None:
    doc = make_doc(
        url="https://shop.example/?turbo_category=7",
        host="shop.example",
        title="Чайники",
        extra={"turbo:category": "7", "turbo:offers": "120"},
        content_html=(
            '<nav class="tc-crumbs"><a href="https://shop.example/?turbo_category=1">Кухня</a></nav>'
            '<div class="tc-cards"><a class="tc-card" href="https://shop.example/p/kettle"><span>Чайник</span></a>'
            '<a href="https://elsewhere.example/x">elsewhere</a></div>'
        ),
    )
    page = render(doc, SAN, written_at=T0).html
    assert 'href="/turbo/shop/shop.example/category/1"' in page  # a category opens its category's page
    assert 'href="/turbo?url=https%3A%2F%2Fshop.example%2Fp%2Fkettle"' in page
    # the listing's own 120 offers, paged, sorted and filtered, in the page's language
    assert '<a class="tc-btn tc-primary" href="/turbo/shop/shop.example/category/7">Все товары категории (120)' in page
    assert 'href="https://elsewhere.example/x"' in page  # another site's link stays as it is
    # on an ordinary page only the listing pages' links change (they exist only as Turbo pages)
    other = render(doc.model_copy(update={"extra": {}}), SAN, written_at=T0).html
    assert 'href="https://shop.example/p/kettle"' in other
    assert 'href="/turbo/shop/shop.example/category/1"' in other
    assert "tc-primary" not in other


def test_images_offer_the_cdns_smaller_copies_in_srcset() -> None:
    doc = make_doc(
        content_html='<p><img src="https://news.example/a.jpg" alt="a"></p>',
        media=[
            Media(
                url="https://news.example/a.jpg",
                cdn_url="/cdn/img/ab/a.jpg",
                width=1200,
                height=675,
                variants=[480, 960],
            ),
            Media(
                url="https://news.example/c.jpg",
                role="cover",
                cdn_url="/cdn/img/ab/c.png",
                width=800,
                height=600,
                variants=[480],
            ),
        ],
    )
    page = render(doc, SAN, written_at=T0).html
    assert (
        '<img src="/cdn/img/ab/a.jpg" width="1200" height="675" srcset="/cdn/img/ab/a.w480.webp 480w, '
        '/cdn/img/ab/a.w960.webp 960w, /cdn/img/ab/a.jpg 1200w" sizes="(max-width: 44rem) 100vw, 42rem" alt="a"'
    ) in page
    # the lead picture too
    assert 'srcset="/cdn/img/ab/c.w480.webp 480w, /cdn/img/ab/c.png 800w"' in page


def test_every_value_of_the_page_is_escaped() -> None:
    """The page is a template that escapes by default: partner text in any field never becomes markup."""
    from shared.messages import CategoryRef, DeliveryOption

    evil = '"><script>alert(1)</script>'
    doc = make_doc(
        title=evil,
        author=evil,
        kind=DocKind.product,
        content_html="",
        summary=evil,
        extra={"language": evil},
        media=[Media(url="https://news.example/c.jpg", role="picture", cdn_url="/cdn/img/c.jpg")],
        product=Product(
            offer_id="1",
            price="10",
            old_price="20",
            vendor=evil,
            model=evil,
            shop=evil,
            sales_notes=evil,
            category_path=[CategoryRef(id="1", name=evil, url="https://news.example/?turbo_category=1&a=<b>")],
            params=[ProductParam(name=evil, value=evil, unit=evil)],
            delivery_options=[DeliveryOption(cost="5", days=evil)],
        ),
    )
    page = render(doc, SAN, written_at=T0).html
    assert "<script" not in page
    assert evil not in page
    assert page.count("&lt;script&gt;") >= 9  # title (twice), author, summary, crumbs, vendor, model, notes...
    assert 'href="/turbo/shop/news.example/category/1"' in page  # the crumb's link: its category's page


def test_a_category_listings_original_is_the_shops_site_not_a_made_up_url() -> None:
    doc = make_doc(url="https://shop.example/?turbo_category=7", host="shop.example", extra={"turbo:category": "7"})
    page = render(doc, SAN, written_at=T0).html
    assert '<a href="https://shop.example/" rel="noopener">shop.example</a></footer>' in page
    kept = make_doc(url="https://shop.example/c?lang=ru&turbo_category=7", extra={"turbo:category": "7"})
    assert 'href="https://shop.example/c?lang=ru" rel="noopener">' in render(kept, SAN, written_at=T0).html


def test_a_russian_catalogs_offer_speaks_russian_with_the_shops_cart_and_one_click_order() -> None:
    """A YML catalog declares no language: a Russian offer's page said "In stock", "Vendor", "Buy at"."""
    doc = make_doc(
        kind=DocKind.product,
        title="Чайник электрический «Заря»",
        content_html="<p>Стальной корпус и автоотключение.</p>",
        product=Product(offer_id="A 7", price="1990", currency="RUR", vendor="Заря", shop="Чайники"),
    )
    plain = render(doc, SAN, written_at=T0).html
    assert plain.startswith('<!doctype html><html lang="ru">')
    for words in ("В наличии", "Купить в магазине «Чайники»", "Производитель", "Оригинал"):
        assert words in plain
    assert "In stock" not in plain
    assert 'class="cart"' not in plain  # no cart set: the buy button goes to the offer
    shop = ShopSettings(cart_url="https://news.example/cart?add={offer_id}", order_phone="+7 495 765-43-21")
    brand = PageBrand(name=None, logo=None, accent=None, menu=(), contacts=(), shop=shop)
    page = render(doc, SAN, written_at=T0, brand=brand).html
    assert (
        '<a class="tc-btn tc-primary cart" href="https://news.example/cart?add=A%207" rel="noopener">В корзину</a>'
        in page
    )
    assert '<a class="tc-btn order phone" href="tel:+74957654321" rel="noopener">Заказать по телефону</a>' in page
    english = render(doc.model_copy(update={"extra": {"language": "en"}}), SAN, written_at=T0, brand=brand).html
    assert ">Add to cart</a>" in english
    assert ">Order by phone</a>" in english
