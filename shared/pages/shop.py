"""A shop's cart and one-click order on its Turbo pages (docs/architecture.md sections 3 and 10).

A shop page's "buy" button went to the offer's page on the shop's site. Turbo shops also took a
**cart URL template** (the shop's own cart, given the offer: ``{offer_id}`` and ``{url}``, e.g.
``https://shop.example/cart/add?id={offer_id}``) and a **one-click order**: a phone number to
call, an e-mail address to write to (its subject names the offer), or a form on the site
(given ``offer_id`` and ``url`` as query parameters). A webmaster with a right on the host sets
them as part of the host's settings (``shared/webmaster/branding.py``'s ``Branding.shop``: the API's
``PUT /api/v1/hosts/{host}/branding`` and the console's host page), and every offer page of its
sources on the host shows them from its next render (the pages already written are rendered
again, as for the rest of the branding).

Bounded and checked where they enter: a template names ``{offer_id}`` or ``{url}`` and nothing
else in braces, and filled in it is an http(s) URL on the host itself (or its ``www.`` alias): a
cart is the shop's own; the values are filled URL-encoded, so an offer id cannot add a parameter
or leave the path. A form is on the host too; a phone and an e-mail have the branding's shapes.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlencode

from pydantic import BaseModel, ConfigDict, Field

from shared.urls import canonical_url, host_of

__all__ = ["MAX_URL", "ShopSettings", "cart_href", "order_links", "shop_problems"]

MAX_URL = 1024
_FIELDS = re.compile(r"\{([^{}]*)\}")
_PLACES = frozenset({"offer_id", "url"})
#: the template's part before its first place: a scheme, a host and the start of a path or query
_FIXED_SITE = re.compile(r"^https?://[^/?#{}]+[/?#]")
_PHONE = re.compile(r"^\+?[0-9][0-9 ()-]{4,24}$")
_EMAIL = re.compile(r"^[^@\s<>\"'?&]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,24}$")
#: what the template is filled with when it is checked (an id with every character that must be encoded)
_PROBE_ID = "probe/id?&#"


class ShopSettings(BaseModel):
    """A host's shop settings (every field optional: an offer page without them links to the offer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: the shop's cart, given the offer: ``{offer_id}`` and / or ``{url}`` (the offer's page)
    cart_url: str | None = Field(
        default=None,
        max_length=MAX_URL,
        description="the shop's cart on the host, given the offer: {offer_id} and / or {url} (its page), "
        "filled URL-encoded, e.g. https://shop.example/cart/add?id={offer_id}",
    )
    #: a one-click order by phone, e-mail or the shop's form
    order_phone: str | None = Field(default=None, max_length=32, description="a one-click order by phone")
    order_email: str | None = Field(
        default=None, max_length=256, description="a one-click order by e-mail (its subject names the offer)"
    )
    order_url: str | None = Field(
        default=None,
        max_length=MAX_URL,
        description="a one-click order form on the host, given offer_id and url as query parameters",
    )

    def empty(self) -> bool:
        return not (self.cart_url or self.order_phone or self.order_email or self.order_url)


def _same_site(url: str, host: str) -> bool:
    return host_of(url).removeprefix("www.") == host.removeprefix("www.")


def cart_href(template: str, offer_id: str, url: str) -> str:
    """The cart link of an offer: ``template`` with its id and page URL, each URL-encoded."""
    values = {"offer_id": quote(offer_id, safe=""), "url": quote(url, safe="")}
    return _FIELDS.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def order_links(shop: ShopSettings, offer_id: str, url: str, title: str) -> list[tuple[str, str]]:
    """(kind, href) of each one-click order way the shop set: ``phone``, ``email``, ``form``."""
    out = []
    if shop.order_phone:
        out.append(("phone", "tel:" + re.sub(r"[^0-9+]", "", shop.order_phone)))
    if shop.order_email:
        subject = urlencode({"subject": f"{title} ({offer_id})", "body": url}, quote_via=quote)
        out.append(("email", f"mailto:{shop.order_email}?{subject}"))
    if shop.order_url:
        sep = "&" if "?" in shop.order_url else "?"
        out.append(("form", f"{shop.order_url}{sep}{urlencode({'offer_id': offer_id, 'url': url})}"))
    return out


def shop_problems(shop: ShopSettings, host: str) -> tuple[ShopSettings, list[tuple[str, str]]]:
    """``shop`` with its URLs canonical, and the (field, message) of each value that may not be kept."""
    problems: list[tuple[str, str]] = []
    update: dict[str, str] = {}
    if shop.cart_url:
        template = shop.cart_url.strip()
        names = set(_FIELDS.findall(template))
        if not names & _PLACES:
            problems.append(
                ("shop.cart_url", "a template with {offer_id} or {url}, e.g. https://shop.example/cart?add={offer_id}")
            )
        elif names - _PLACES or "{" in _FIELDS.sub("", template) or "}" in _FIELDS.sub("", template):
            problems.append(("shop.cart_url", "only {offer_id} and {url} may be in braces"))
        elif not _FIXED_SITE.match(template[: template.index("{")]):
            # an offer id in the host part could send the cart elsewhere: the site is written out
            problems.append(("shop.cart_url", "the scheme and host written out before the first {...}"))
        else:
            try:
                filled = canonical_url(cart_href(template, _PROBE_ID, f"https://{host}/p"))
            except ValueError as exc:
                problems.append(("shop.cart_url", f"an absolute http(s) URL once filled in: {exc}"))
            else:
                if not _same_site(filled, host):
                    problems.append(("shop.cart_url", f"a cart on {host} (the shop's own)"))
                update["cart_url"] = template
    if shop.order_phone and not _PHONE.match(shop.order_phone.strip()):
        problems.append(("shop.order_phone", "not a phone number (e.g. +7 495 123-45-67)"))
    if shop.order_email and not _EMAIL.match(shop.order_email.strip()):
        problems.append(("shop.order_email", "not an e-mail address (e.g. orders@shop.example)"))
    if shop.order_url:
        try:
            form = canonical_url(shop.order_url.strip())
        except ValueError as exc:
            problems.append(("shop.order_url", f"an absolute http(s) URL: {exc}"))
        else:
            if not _same_site(form, host):
                problems.append(("shop.order_url", f"a form on {host} (the shop's own)"))
            update["order_url"] = form
    return shop.model_copy(update=update), problems
