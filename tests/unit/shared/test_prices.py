"""A price is a decimal of bounded digits and exponent (``shared/pages/prices.py``), and formatting one stays small."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shared.pages.i18n import format_price
from shared.pages.prices import MAX_CHARS, parse_price


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1990", Decimal("1990")),
        ("1 990,50", Decimal("1990.50")),
        ("1\u00a0990.5", Decimal("1990.5")),
        (" 5 ", Decimal(5)),
        ("1.99e3", Decimal("1990")),
        ("0", Decimal(0)),
        ("0.0001", Decimal("0.0001")),
        ("10.000000", Decimal(10)),  # trailing zeros are not digits of the price
        ("99999999999999.9999", Decimal("99999999999999.9999")),
        (".5", Decimal("0.5")),
    ],
)
def test_prices_as_shops_write_them(text: str, value: Decimal) -> None:
    assert parse_price(text) == value


@pytest.mark.parametrize(
    "text",
    [
        "1e2000000",  # two million digits once formatted: the price that froze the pipeline
        "1e400000",
        "1e15",
        "1000000000000000",
        "1e-400000",
        "0.00001",
        "-5",
        "NaN",
        "Infinity",
        "inf",
        "1e3e3",
        "1,2,3",
        "12 руб.",
        "по запросу",
        "1" * (MAX_CHARS + 1),
        "",
        "0x10",
    ],
)
def test_what_is_not_a_price(text: str) -> None:
    assert parse_price(text) is None


@pytest.mark.parametrize("amount", ["1e2000000", "1e400000", "9" * 100_000, "1e-400000"])
def test_formatting_a_hostile_amount_stays_a_few_characters(amount: str) -> None:
    # before: 1e400000 was formatted into 533,334 characters (2,666,667 for 1e2000000)
    for lang in ("ru", "en", None):
        shown = format_price(amount, "RUB", lang)
        assert len(shown) <= MAX_CHARS + 2, (amount, lang, len(shown))


def test_formatting_real_prices_is_unchanged() -> None:
    assert format_price("1990.50", "RUB", "ru") == "1\u00a0990,50\u00a0₽"
    assert format_price("1.99e3", "USD", "en") == "$1,990"
    assert format_price("по запросу", "RUB", "ru") == "по запросу\u00a0₽"  # as written: not a number
