"""An item's free-text numbers and dates, bounded where the parser reads them (docs/architecture.md section 6).

A partner writes numbers as text, and a number short to write can be costly to
use: ``<price>1e2000000</price>`` is ten characters and two million digits once
formatted; a date in the year 9999 at ``-14:00`` is past what the stores can read
back. So each reader checks the numbers it takes, with the rules here:

* a product's **price** (``shared/pages/prices.py``: a decimal of bounded digits and
  exponent) -- an offer whose price is not one is refused (``item.bad_price``):
  a shop page must not show a price the shop did not mean;
* its **old price** and each **delivery option** (``cost`` a price, ``days``
  ``N`` or ``N-M`` of at most three digits) -- left out when they are not, the
  offer published without them (``item.bad_number``, a warning);
* an item's **dates** -- kept between ``MIN_DATE`` and ``MAX_DATE`` (in UTC);
  outside, left out with a warning (``item.bad_date``).

What goes wrong is told, never dropped silently: ``Refused`` carries the code and
message of a refusal, the notes of what was left out become the item's warnings.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from cubes.parser.model import Note
from shared.pages.prices import RULE, parse_price

__all__ = ["MAX_DATE", "MIN_DATE", "Refused", "bounded_date", "delivery_options", "product_numbers"]

#: the earliest date an item keeps: the Unix epoch, before any feed (the web began in 1991)
MIN_DATE = datetime(1970, 1, 1, tzinfo=UTC)
#: the latest: far enough for a scheduled event, near enough that every conversion and store holds it
MAX_DATE = datetime(2100, 1, 1, tzinfo=UTC)
#: a delivery option's days: "2", "1-3" (YML: 32 and more mean "on order")
_DAYS = re.compile(r"\d{1,3}(?:-\d{1,3})?")


class Refused(ValueError):
    """An item that cannot be published as written: its code (``shared/problems/codes.py``) and why."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def _shown(text: str) -> str:
    """A partner's text quoted in a message: never more than a few dozen characters of it."""
    return repr(text if len(text) <= 40 else text[:39] + "…")


def product_numbers(product: dict[str, Any]) -> list[Note]:
    """Check ``product``'s numbers in place: ``Refused`` for a price that is not one; what was left out.

    ``product``: a YML offer's or a JSON product's fields (``shared.messages.Product`` keywords).
    """
    notes: list[Note] = []
    price = product.get("price")
    if price is not None and parse_price(price) is None:
        raise Refused("item.bad_price", f"the price {_shown(price)} is not a price: {RULE}")
    old = product.get("old_price")
    if old is not None and parse_price(old) is None:
        del product["old_price"]
        notes.append(Note("item.bad_number", f"the old price {_shown(old)} is not a price, left out: {RULE}"))
    options = product.get("delivery_options")
    if options:
        kept, note = delivery_options(options)
        if note is not None:
            product["delivery_options"] = kept
            notes.append(note)
    return notes


def delivery_options(options: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Note | None]:
    """The options whose ``cost`` is a price and ``days`` a number or a range; the note of the others."""
    kept = [o for o in options if _option_ok(o)]
    if len(kept) == len(options):
        return options, None
    bad = next(o for o in options if not _option_ok(o))
    return kept, Note(
        "item.bad_number",
        f"{len(options) - len(kept)} delivery option(s) left out (the first: cost {_shown(str(bad.get('cost')))}, "
        f"days {_shown(str(bad.get('days')))}): the cost must be a price and the days a number of at most "
        "three digits or a range of two (1-3)",
    )


def _option_ok(option: dict[str, Any]) -> bool:
    days = option.get("days")
    return parse_price(option.get("cost")) is not None and (days is None or bool(_DAYS.fullmatch(days)))


def bounded_date(value: datetime | None, what: str) -> tuple[datetime | None, Note | None]:
    """``value`` when it lies between ``MIN_DATE`` and ``MAX_DATE``; else None and the note saying so."""
    if value is None:
        return None, None
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if MIN_DATE <= aware <= MAX_DATE:  # compared as instants, without converting (which can overflow)
        return value, None
    return None, Note(
        "item.bad_date",
        f"the {what} {value.isoformat()} is outside {MIN_DATE.year}-{MAX_DATE.year}: left out",
    )
