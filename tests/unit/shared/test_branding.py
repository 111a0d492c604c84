"""A host's branding is bounded where it enters: nothing it holds can reach the page as anything but text."""

from __future__ import annotations

import pytest

from shared.webmaster.branding import MAX_MENU, BrandingRefused, logo_requester, logo_waiters, parse_branding

HOST = "shop.example"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"accent": "red"}, "accent"),
        ({"accent": "#e8490f;}body{display:none"}, "accent"),  # an injection into the page's style
        ({"accent": "#e8490"}, "accent"),
        ({"display_name": "x" * 61}, "display_name"),
        ({"display_name": "   "}, "display_name"),
        ({"menu": [{"label": "Home", "url": "https://evil.example/"}]}, "menu[0].url"),
        ({"menu": [{"label": "Home", "url": "javascript:alert(1)"}]}, "menu[0].url"),
        ({"menu": [{"label": "a", "url": f"https://{HOST}/{i}"} for i in range(MAX_MENU + 1)]}, "menu"),
        ({"logo_url": "https://cdn.evil.example/logo.png"}, "logo_url"),
        ({"contacts": [{"kind": "phone", "value": "call me"}]}, "contacts[0].value"),
        ({"contacts": [{"kind": "email", "value": "a@b"}]}, "contacts[0].value"),
        ({"contacts": [{"kind": "telegram", "value": "@x"}]}, "contacts[0].value"),
        ({"contacts": [{"kind": "url", "value": "https://elsewhere.example/"}]}, "contacts[0].value"),
        ({"contacts": [{"kind": "fax", "value": "123"}]}, "contacts.0.kind"),
        ({"colour": "#fff"}, "colour"),
    ],
)
def test_what_may_not_be_a_branding_is_refused_naming_its_field(raw: dict[str, object], field: str) -> None:
    with pytest.raises(BrandingRefused) as caught:
        parse_branding(raw, HOST)
    assert field in [f for f, _ in caught.value.problems], caught.value.problems


def test_a_branding_is_kept_canonical() -> None:
    b = parse_branding(
        {
            "display_name": "  Lamp   Shop ",
            "accent": "#0A7D3B",
            "logo_url": "HTTPS://www.Shop.Example/logo.png",
            "menu": [{"label": "Lamps", "url": "https://shop.example/lamps"}],
            "contacts": [
                {"kind": "phone", "value": "+7 (495) 123-45-67"},
                {"kind": "email", "value": "hello@shop.example", "label": "Write to us"},
                {"kind": "telegram", "value": "@lamp_shop"},
            ],
        },
        HOST,
    )
    assert b.display_name == "Lamp Shop"
    assert b.accent == "#0a7d3b"
    assert b.logo_url == "https://www.shop.example/logo.png"  # www. is the host's alias
    assert [c.href() for c in b.contacts] == ["tel:+74951234567", "mailto:hello@shop.example", "https://t.me/lamp_shop"]
    assert [c.text() for c in b.contacts] == ["+7 (495) 123-45-67", "Write to us", "Telegram"]


def test_the_logo_requester_names_its_tenant_and_host() -> None:
    assert logo_waiters([logo_requester("t1", HOST), "media:https://x/1", "branding:broken"]) == [("t1", HOST)]
