"""The console's branding form carries a shop's cart and one-click order, as the API takes them (actions.py)."""

from __future__ import annotations

from cubes.frontend.console.actions import branding_form
from shared.pages.shop import ShopSettings
from shared.webmaster.branding import parse_branding

HOST = "shop.example"


def test_the_forms_shop_fields_are_the_apis_shop_settings() -> None:
    form = {
        "display_name": "Shop",
        "shop_cart_url": " https://shop.example/cart?add={offer_id} ",
        "shop_order_phone": "+7 495 765-43-21",
        "shop_order_email": "",
        "shop_order_url": "",
    }
    raw = branding_form(form)
    assert raw["shop"] == {"cart_url": "https://shop.example/cart?add={offer_id}", "order_phone": "+7 495 765-43-21"}
    assert parse_branding(raw, HOST).shop == ShopSettings(**raw["shop"])
    assert "shop" not in branding_form({"display_name": "Shop", "shop_cart_url": " "})  # empty boxes: no shop
