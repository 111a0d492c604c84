"""What a shop category's page lists of an offer's page (docs/architecture.md section 3, kvwriter).

The kvwriter stores, in the page's row, the facts its category's page sorts and filters by
(``shared/stores/shop.py``): the offer's own category, its price as a number, vendor and parameters, and
the card's price text, currency and picture (its CDN copy, as the page shows it). ``shop_of`` says whose
shop a page is: the tenant that published it, or its source when no tenant has it (a feed added by the
operator), so a category's page never lists another tenant's offers beside the listing's own.
"""

from __future__ import annotations

from shared.messages import Document, MediaKind
from shared.pages.prices import parse_price
from shared.pages.turbo_links import listing_category
from shared.stores import Offer

__all__ = ["offer_of", "shop_of"]

#: parameters of an offer kept to filter by, and the characters of a name or value (a catalog's offer has a
#: dozen; the page shows them all, the filters need no more)
_PARAMS = 40
_CHARS = 200


def shop_of(doc: Document, tenant: str | None) -> str:
    """Whose shop ``doc``'s page is ("" for a page that is neither an offer nor a category listing, and for
    a preview, which no category lists)."""
    if doc.preview or (doc.product is None and listing_category(doc.url) is None):
        return ""
    return f"tenant:{tenant}" if tenant else f"{doc.source.kind.value}:{doc.source.id}"


def offer_of(doc: Document) -> Offer | None:
    """The facts of ``doc``'s offer its category's page lists (None: no offer in a category, or a preview)."""
    p = doc.product
    if doc.preview or p is None or not p.category_path:
        return None
    price = parse_price(p.price) if p.price else None
    picture = next((m.cdn_url for m in doc.media if m.kind is MediaKind.image and m.cdn_url), None)
    params = tuple(
        (q.name[:_CHARS], (f"{q.value} {q.unit}" if q.unit else q.value)[:_CHARS]) for q in p.params[:_PARAMS]
    )
    return Offer(
        category=p.category_path[-1].id,
        price=None if price is None else float(price),
        vendor=(p.vendor or "")[:_CHARS],
        params=params,
        price_text=p.price if price is not None and p.price else "",
        currency=p.currency or "",
        picture=picture or "",
    )
