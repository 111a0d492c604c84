"""What a price is: a decimal of bounded digits and exponent (docs/architecture.md section 6, hostile content).

A partner's price is free text (YML ``<price>``, ``<oldprice>``, a delivery
option's ``cost``, a JSON product's ``price``), and a number that looks small
can be huge: ``1e2000000`` is ten characters, and formatted for a page it is
two million digits with a no-break space every three, which the sanitizer then
cleans in super-linear time. So a price is read here, once, for everyone who
reads one (the parser, which refuses what is not a price; the page's price
formatting and discount, which never format anything unbounded):

* at most ``MAX_CHARS`` characters, digits with an optional decimal point (``.``
  or ``,``), grouping spaces allowed (``1 990``, also no-break and thin
  spaces), an optional exponent of at most three digits (``1.99e3``);
* its value finite, not negative, below ``10 ** MAX_INTEGER_DIGITS`` and with at most
  ``MAX_FRACTION_DIGITS`` digits after the point once trailing zeros are dropped.

Anything else is not a price: ``parse_price`` answers None and the caller reports
it (``item.bad_price``, ``item.bad_number`` in ``shared/problems/codes.py``), its
hint being ``RULE``.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["MAX_CHARS", "MAX_FRACTION_DIGITS", "MAX_INTEGER_DIGITS", "RULE", "parse_price"]

#: a price is written in at most this many characters (``999 999 999 999 999,9999 `` is 25)
MAX_CHARS = 32
#: 10^15: above any real price in any currency (a jet in Vietnamese dong is ~10^12), with room to spare
MAX_INTEGER_DIGITS = 15
#: ISO 4217's currencies have at most 4 minor digits (the Chilean UF); more is not money
MAX_FRACTION_DIGITS = 4
#: spaces a price is grouped with: space, no-break space, thin and narrow no-break spaces
_GROUPING = str.maketrans("", "", " \u00a0\u2009\u202f")
#: the whole of a price's text once grouping is gone: digits, one decimal point, a short exponent
_FORM = re.compile(r"\+?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d{1,3})?")

#: the rule in words, for a problem's hint
RULE = (
    f"a price is a decimal number: digits, at most one decimal point ('.' or ','), at most "
    f"{MAX_FRACTION_DIGITS} digits after it, below 10^{MAX_INTEGER_DIGITS}, not negative, at most "
    f"{MAX_CHARS} characters (for example 1990, 1 990,50 or 1.99e3)"
)


def parse_price(text: str | None) -> Decimal | None:
    """``text`` as a price within the bounds above, or None when it is not one."""
    if not text:
        return None
    text = text.strip()
    if not text or len(text) > MAX_CHARS:
        return None
    bare = text.translate(_GROUPING)
    if not _FORM.fullmatch(bare):
        return None
    try:
        # the exponent is at most three digits (the form): constructing this Decimal is cheap
        value = Decimal(bare.replace(",", "."))
    except InvalidOperation:  # pragma: no cover - the form admits only what Decimal reads
        return None
    if value.is_zero():
        return Decimal(0)
    if value.adjusted() >= MAX_INTEGER_DIGITS:
        return None
    exponent = value.normalize().as_tuple().exponent
    assert isinstance(exponent, int)  # finite: the form has no NaN or Infinity
    if -exponent > MAX_FRACTION_DIGITS:
        return None
    return value
