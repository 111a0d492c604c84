"""A shop page's product block (docs/architecture.md section 3, kvwriter).

What a YML offer's page shows above its description, in the page's language
(``shared/pages/i18n.py``): the breadcrumbs of its category path (each a link to the
category's listing page, a Turbo page of the same catalog), the price with its
currency's sign and the old price struck through (with the discount), whether
it is in stock or on order, the shop's cart button (its template filled with the
offer: ``shared/pages/shop.py``) and its one-click order ways when the shop set them,
the "buy" button to the offer on the shop's site,
delivery (its options: cost and days), pickup and in-store purchase, the sales
notes, and the facts: vendor code, vendor, model, every parameter with its unit.

``product_view`` decides every word; ``html/product.html`` and ``html/crumbs.html``
print them, escaped (``shared/pages/templates.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.messages import DeliveryOption, Product
from shared.pages.i18n import format_price, label
from shared.pages.prices import parse_price
from shared.pages.safehtml import BLOCK_BREAK
from shared.pages.shop import ShopSettings, cart_href, order_links
from shared.pages.turbo_links import category_path
from shared.urls import host_of

__all__ = ["ProductView", "product_text", "product_view"]


@dataclass(frozen=True, slots=True)
class ProductView:
    """What the product block and the breadcrumbs say, as plain text (the template escapes it)."""

    crumbs: list[tuple[str, str | None]]  # (category name, its category page's path or None)
    price: str | None
    old_price: str | None
    discount: int | None  # percent off the old price
    in_stock: bool
    stock: str
    url: str  # the offer on the shop's site
    buy: str
    cart: tuple[str, str] | None  # (its words, its link): the shop's cart with this offer
    orders: list[tuple[str, str, str]]  # (kind, words, link) of each one-click order way
    ways: list[str]  # delivery, pickup, in-store purchase
    notes: str | None
    facts: list[tuple[str, str]]


def _discount(price: str, old: str) -> int | None:
    now, before = parse_price(price), parse_price(old)
    if now is None or before is None or before <= 0 or now >= before:
        return None
    return round((1 - now / before) * 100)


def _delivery(option: DeliveryOption, currency: str | None, lang: str | None) -> str:
    cost = (
        label("free", lang)
        if option.cost.strip() in ("0", "0.0", "0.00")
        else format_price(option.cost, currency, lang)
    )
    return f"{cost}, {option.days} {label('days', lang)}" if option.days else cost


def _ways(p: Product, lang: str | None) -> list[str]:
    ways = []
    if p.delivery is False:
        ways.append(label("no_delivery", lang))
    elif p.delivery_options:
        options = "; ".join(_delivery(o, p.currency, lang) for o in p.delivery_options)
        ways.append(f"{label('delivery', lang)}: {options}")
    elif p.delivery:
        ways.append(label("delivery", lang))
    if p.pickup:
        ways.append(label("pickup", lang))
    if p.store:
        ways.append(label("store", lang))
    return ways


def product_view(
    p: Product, url: str, lang: str | None, *, shop: ShopSettings | None = None, title: str = ""
) -> ProductView:
    """The product block of the page of offer ``p`` (titled ``title``), whose shop page is at ``url``, with the
    ``shop``'s cart and one-click order when it set them."""
    cart = (label("to_cart", lang), cart_href(shop.cart_url, p.offer_id, url)) if shop and shop.cart_url else None
    orders = (
        [(kind, label(f"order_{kind}", lang), href) for kind, href in order_links(shop, p.offer_id, url, title)]
        if shop
        else []
    )
    facts = [
        (label("vendor_code", lang), p.vendor_code),
        (label("vendor", lang), p.vendor),
        (label("model", lang), p.model),
        (label("category", lang), p.category if not p.category_path else None),
    ]
    facts += [(q.name, f"{q.value} {q.unit}" if q.unit else q.value) for q in p.params]
    return ProductView(
        # each crumb opens its category's page on the frontend: its offers paged, sorted and filtered
        crumbs=[
            (step.name, category_path(host_of(step.url), step.id) if step.url else None) for step in p.category_path
        ],
        price=format_price(p.price, p.currency, lang) if p.price else None,
        old_price=format_price(p.old_price, p.currency, lang) if p.price and p.old_price else None,
        discount=_discount(p.price, p.old_price) if p.price and p.old_price else None,
        in_stock=bool(p.available),
        stock=label("in_stock" if p.available else "on_order", lang),
        url=url,
        buy=label("buy_at", lang, shop=p.shop) if p.shop else label("to_shop", lang),
        cart=cart,
        orders=orders,
        ways=_ways(p, lang),
        notes=p.sales_notes or None,
        facts=[(k, v) for k, v in facts if v],
    )


def product_text(p: Product, lang: str | None) -> str:
    """What search indexes of the product besides its title and description, as the page shows it (its
    price formatted, each fact with its name and unit), one fact a block (``safehtml.BLOCK_BREAK``)."""
    facts = [p.price and format_price(p.price, p.currency, lang), p.vendor, p.model, p.vendor_code]
    facts += [step.name for step in p.category_path[:-1]]
    facts.append(p.category)
    facts += [f"{q.name}: {q.value} {q.unit}" if q.unit else f"{q.name}: {q.value}" for q in p.params]
    facts.append(p.sales_notes)
    return BLOCK_BREAK.join(" ".join(f.split()) for f in facts if f)
