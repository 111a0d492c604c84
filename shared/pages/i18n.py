"""The words a Turbo page adds to partner content, in the page's language (docs/architecture.md section 3, kvwriter).

A page speaks its source's language (``lang`` from the channel's
``<language>`` or the item's ``xml:lang``): the buttons the parser makes of
Turbo blocks ("Call", "Share") and what the kvwriter writes around the content
("In stock", the date, "Original") come from here, in Russian or English
(anything else falls back to English, the page's ``lang`` still being the
source's). Dates keep the source's UTC offset: a Moscow feed's
``Tue, 21 Apr 2015 14:15:00 +0300`` reads "21 апреля 2015, 14:15 (UTC+03:00)".
"""

from __future__ import annotations

import re
from datetime import datetime

from shared.pages.prices import MAX_CHARS, parse_price

__all__ = ["LANGUAGES", "currency_sign", "format_date", "format_price", "label", "language"]

#: languages the page's own words exist in
LANGUAGES = ("ru", "en")

_LABELS: dict[str, tuple[str, str]] = {
    # key: (ru, en)
    "call": ("Позвонить", "Call"),
    "write": ("Написать", "Write"),
    "callback": ("Заказать обратный звонок", "Request a callback"),
    "chat": ("Чат", "Chat"),
    "share": ("Поделиться", "Share"),
    "feedback": ("Связаться с нами", "Contact us"),
    "search": ("Поиск на сайте", "Search the site"),
    "listen": ("Слушать аудио", "Listen to the audio"),
    "related": ("Читайте также", "Read also"),
    "comments": ("Комментарии", "Comments"),
    "rating": ("Оценка", "Rating"),
    "of": ("из", "of"),
    "in_stock": ("В наличии", "In stock"),
    "out_of_stock": ("Нет в наличии", "Out of stock"),
    "buy": ("Купить", "Buy"),
    "buy_at": ("Купить в магазине «{shop}»", "Buy at {shop}"),
    "to_shop": ("Перейти в магазин", "Go to the shop"),
    "to_cart": ("В корзину", "Add to cart"),
    "order_phone": ("Заказать по телефону", "Order by phone"),
    "order_email": ("Заказать по почте", "Order by e-mail"),
    "order_form": ("Купить в один клик", "Buy in one click"),
    "all_offers": ("Все товары категории ({n}): сортировка и фильтры", "All {n} offers: sort and filter"),
    "sort_name": ("По названию", "By name"),
    "sort_cheap": ("Сначала дешевле", "Cheapest first"),
    "sort_dear": ("Сначала дороже", "Dearest first"),
    "subcategories": ("Подкатегории", "Subcategories"),
    "clear_filters": ("Сбросить фильтры", "Clear filters"),
    "no_such_page": ("Такой страницы нет: в категории {of} стр.", "No such page: the category has {of} pages"),
    "filter": ("Показать", "Show"),
    "prev_page": ("← Назад", "← Back"),
    "next_page": ("Дальше →", "Next →"),
    "nothing_found": ("Ничего не нашлось: снимите часть фильтров", "Nothing matches: clear some filters"),
    "page_of": ("страница {n} из {of}", "page {n} of {of}"),
    "found": ("Товаров: {n}", "Offers: {n}"),
    "on_order": ("Под заказ", "On order"),
    "days": ("дн.", "days"),
    "free": ("бесплатно", "free"),
    "delivery": ("Доставка", "Delivery"),
    "pickup": ("Самовывоз", "Pickup"),
    "store": ("Можно купить в магазине", "In-store purchase"),
    "no_delivery": ("Нет доставки", "No delivery"),
    "vendor_code": ("Артикул", "Vendor code"),
    "vendor": ("Производитель", "Vendor"),
    "model": ("Модель", "Model"),
    "category": ("Категория", "Category"),
    "original": ("Оригинал", "Original"),
    "home": ("Главная", "Home"),
    "products": ("Товары", "Products"),
    "more": ("Ещё", "More"),
    "video_on": ("Видео на {site}", "Video on {site}"),
    "watch_on": ("Смотреть на {site}", "Watch on {site}"),
}

_MONTHS = {
    "ru": (
        "января", "февраля", "марта", "апреля", "мая", "июня",
        "июля", "августа", "сентября", "октября", "ноября", "декабря",
    ),
    "en": (
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ),
}  # fmt: skip

#: YML ``currencyId`` (ISO 4217; RUR is the catalogs' old name of the rouble) -> its sign
_SIGNS = {
    "RUR": "₽", "RUB": "₽", "USD": "$", "EUR": "€", "GBP": "£", "KZT": "₸", "UAH": "₴", "BYN": "Br",
    "CNY": "¥", "JPY": "¥", "TRY": "₺", "INR": "₹",
}  # fmt: skip
#: signs written before the amount in English ($1,990); the rest follow it
_BEFORE = frozenset({"$", "£", "€", "¥", "₹"})
#: currencies whose catalogs are written for Russian readers: their prices in the Russian style
_RU_STYLE = frozenset({"RUR", "RUB", "KZT", "UAH", "BYN"})
_NBSP = "\u00a0"

#: a BCP 47 tag as feeds write it (``ru``, ``ru-RU``, ``en_US``, ``zh-Hant-TW``)
_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")


def language(tag: str | None) -> str | None:
    """``tag`` as a page's ``lang`` (``ru-RU``; ``en_US`` written ``en-US``), or None when it is not one."""
    if not tag:
        return None
    tag = tag.strip()
    if len(tag) > 35 or not _TAG.fullmatch(tag):
        return None
    return tag.replace("_", "-")


def _base(lang: str | None) -> str:
    primary = (lang or "").split("-", 1)[0].lower()
    return primary if primary in LANGUAGES else "en"


def label(key: str, lang: str | None, **values: str) -> str:
    """The page's word for ``key`` in ``lang`` (English when there is none in that language).

    ``values`` fill the placeholders of labels that have them (``buy_at``: ``shop``).
    """
    ru, en = _LABELS[key]
    text = ru if _base(lang) == "ru" else en
    return text.format(**values) if values else text


def format_date(ts: datetime, lang: str | None) -> str:
    """``21 апреля 2015, 14:15 (UTC+03:00)``: the date in ``lang``, at the source's own UTC offset."""
    months = _MONTHS[_base(lang)]
    offset = ts.utcoffset()
    if offset is None or not offset:
        zone = "UTC"
    else:
        minutes = int(offset.total_seconds()) // 60
        sign = "+" if minutes >= 0 else "-"
        zone = f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return f"{ts.day} {months[ts.month - 1]} {ts.year}, {ts.hour:02d}:{ts.minute:02d} ({zone})"


def currency_sign(currency: str | None) -> str | None:
    """₽ for RUB / RUR, $ for USD ...; None for a currency without a sign of its own."""
    return _SIGNS.get((currency or "").strip().upper())


def format_price(amount: str, currency: str | None, lang: str | None) -> str:
    """``1 990 ₽`` / ``$1,990.50``: grouped, with its currency's sign, in the page's language.

    Without a page language, the currency decides (a rouble price reads the Russian way). An
    amount that is not a price (``shared/pages/prices.py``: the parser refuses those) is shown as written,
    cut to a price's length, with its currency: never formatted, so never more than a few characters.
    """
    code = (currency or "").strip().upper()
    sign = _SIGNS.get(code) or code
    value = parse_price(amount)
    if value is None:
        shown = amount.strip()
        shown = shown if len(shown) <= MAX_CHARS else shown[: MAX_CHARS - 1] + "…"
        return f"{shown}{_NBSP}{sign}" if sign and shown else shown
    russian = _base(lang) == "ru" if lang else code in _RU_STYLE
    whole = f"{value:,.2f}" if value != value.to_integral_value() else f"{value:,.0f}"
    if russian:
        whole = whole.replace(",", _NBSP).replace(".", ",")
        return f"{whole}{_NBSP}{sign}" if sign else whole
    if sign in _BEFORE:
        return f"{sign}{whole}"
    return f"{whole}{_NBSP}{sign}" if sign else whole
