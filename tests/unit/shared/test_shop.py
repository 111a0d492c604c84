"""A shop's cart template and one-click order: what may be kept, and the links they make (shared/pages/shop.py)."""

from __future__ import annotations

import pytest

from shared.pages.shop import ShopSettings, cart_href, order_links
from shared.webmaster.branding import BrandingRefused, parse_branding

HOST = "shop.example"


def _shop(**fields: str) -> ShopSettings | None:
    return parse_branding({"shop": fields}, HOST).shop


def test_a_cart_template_is_filled_with_the_offer_encoded() -> None:
    shop = _shop(cart_url="https://shop.example/cart?add={offer_id}&back={url}")
    assert shop is not None
    assert shop.cart_url is not None
    href = cart_href(shop.cart_url, "7&admin=1#x", "https://shop.example/p/7?a=b")
    # the id cannot add a parameter or cut the URL: it is one encoded value
    assert href == "https://shop.example/cart?add=7%26admin%3D1%23x&back=https%3A%2F%2Fshop.example%2Fp%2F7%3Fa%3Db"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"cart_url": "https://shop.example/cart"}, "shop.cart_url"),  # no place for the offer
        ({"cart_url": "https://shop.example/cart?id={id}"}, "shop.cart_url"),  # an unknown place
        ({"cart_url": "https://evil.example/cart?id={offer_id}"}, "shop.cart_url"),  # another site's cart
        ({"cart_url": "https://shop.example{offer_id}/cart"}, "shop.cart_url"),  # the host from the offer
        ({"cart_url": "javascript:alert({offer_id})"}, "shop.cart_url"),
        ({"cart_url": "{url}"}, "shop.cart_url"),
        ({"cart_url": "https://shop.example/c?{offer_id}}"}, "shop.cart_url"),  # a stray brace
        ({"order_phone": "call us"}, "shop.order_phone"),
        ({"order_email": "orders@shop.example?cc=x@y.z"}, "shop.order_email"),
        ({"order_url": "https://elsewhere.example/form"}, "shop.order_url"),
        ({"order_url": "ftp://shop.example/form"}, "shop.order_url"),
    ],
)
def test_what_is_refused_names_its_field(fields: dict[str, str], field: str) -> None:
    with pytest.raises(BrandingRefused) as refused:
        parse_branding({"shop": fields}, HOST)
    assert [f for f, _ in refused.value.problems] == [field]


def test_a_one_click_order_by_phone_email_and_form() -> None:
    shop = _shop(
        order_phone="+7 (495) 765-43-21",
        order_email="orders@shop.example",
        order_url="https://www.shop.example/order?src=turbo",  # the www. alias is the same site
    )
    assert shop is not None
    assert order_links(shop, "A 1", "https://shop.example/p/1", "Чайник") == [
        ("phone", "tel:+74957654321"),
        (
            "email",
            "mailto:orders@shop.example?subject=%D0%A7%D0%B0%D0%B9%D0%BD%D0%B8%D0%BA%20%28A%201%29&body=https%3A%2F%2Fshop.example%2Fp%2F1",
        ),
        ("form", "https://www.shop.example/order?src=turbo&offer_id=A+1&url=https%3A%2F%2Fshop.example%2Fp%2F1"),
    ]


def test_empty_shop_settings_are_none() -> None:
    assert _shop() is None
    assert parse_branding({"display_name": "Shop"}, HOST).shop is None
