"""A shop page's product block (docs/architecture.md section 3, kvwriter).

What a YML offer's page shows above its description, in the page's language
(``shared/i18n.py``): the breadcrumbs of its category path (each a link to the
category's listing page, a Turbo page of the same catalog), the price with its
currency's sign and the old price struck through (with the discount), whether
it is in stock or on order, the "buy" button to the offer on the shop's site,
delivery (its options: cost and days), pickup and in-store purchase, the sales
notes, and the facts: vendor code, vendor, model, every parameter with its unit.
"""

from __future__ import annotations

from html import escape

from shared.i18n import format_price, label
from shared.messages import DeliveryOption, Product
from shared.prices import parse_price
from shared.turbo_links import turbo_path

__all__ = ["breadcrumbs", "product_block", "product_text"]


def breadcrumbs(p: Product, lang: str | None) -> str:
    """``<nav class="tc-crumbs">`` of the offer's category path, each step to its listing page."""
    if not p.category_path:
        return ""
    steps = []
    for step in p.category_path:
        name = escape(step.name)
        steps.append(f'<a href="{escape(turbo_path(step.url))}">{name}</a>' if step.url else f"<span>{name}</span>")
    return f'<nav class="tc-crumbs">{"".join(steps)}</nav>'


def _discount(price: str, old: str) -> str:
    now, before = parse_price(price), parse_price(old)
    if now is None or before is None or before <= 0 or now >= before:
        return ""
    return f' <span class="off">&minus;{round((1 - now / before) * 100)}%</span>'


def _delivery(option: DeliveryOption, currency: str | None, lang: str | None) -> str:
    cost = (
        label("free", lang)
        if option.cost.strip() in ("0", "0.0", "0.00")
        else format_price(option.cost, currency, lang)
    )
    return f"{cost}, {option.days} {label('days', lang)}" if option.days else cost


def product_block(p: Product, url: str, lang: str | None) -> str:
    """The product block of the page of offer ``p``, whose shop page is at ``url``."""
    parts = ['<section class="product">']
    if p.price:
        old = ""
        if p.old_price:
            old = f'<s class="old">{escape(format_price(p.old_price, p.currency, lang))}</s>'
            old += _discount(p.price, p.old_price)
        parts.append(f'<p class="price">{escape(format_price(p.price, p.currency, lang))}{old}</p>')
    if p.available:
        parts.append(f'<p class="stock in">{escape(label("in_stock", lang))}</p>')
    else:
        parts.append(f'<p class="stock out">{escape(label("on_order", lang))}</p>')
    buy = label("buy_at", lang, shop=p.shop) if p.shop else label("to_shop", lang)
    parts.append(f'<p><a class="tc-btn tc-primary buy" href="{escape(url)}" rel="noopener">{escape(buy)}</a></p>')
    ways = []
    if p.delivery is False:
        ways.append(escape(label("no_delivery", lang)))
    elif p.delivery_options:
        options = "; ".join(escape(_delivery(o, p.currency, lang)) for o in p.delivery_options)
        ways.append(f"{escape(label('delivery', lang))}: {options}")
    elif p.delivery:
        ways.append(escape(label("delivery", lang)))
    if p.pickup:
        ways.append(escape(label("pickup", lang)))
    if p.store:
        ways.append(escape(label("store", lang)))
    if ways:
        parts.append(f'<p class="ways">{" · ".join(ways)}</p>')
    if p.sales_notes:
        parts.append(f'<p class="tc-note">{escape(p.sales_notes)}</p>')
    facts = [
        (label("vendor_code", lang), p.vendor_code),
        (label("vendor", lang), p.vendor),
        (label("model", lang), p.model),
        (label("category", lang), p.category if not p.category_path else None),
    ]
    facts += [(q.name, f"{q.value} {q.unit}" if q.unit else q.value) for q in p.params]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts if v)
    if rows:
        parts.append(f'<dl class="params">{rows}</dl>')
    parts.append("</section>")
    return "".join(parts)


def product_text(p: Product) -> str:
    """What search indexes of the product besides its title and description."""
    words = [p.vendor, p.vendor_code, p.model, p.category, p.price and f"{p.price} {p.currency or ''}".strip()]
    words += [step.name for step in p.category_path[:-1]]
    words += [f"{q.name} {q.value}" for q in p.params]
    words.append(p.sales_notes)
    return " ".join(w for w in words if w)
