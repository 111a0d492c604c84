"""The words a Turbo page adds to partner content, in the page's language (DESIGN.md section 3, kvwriter).

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

__all__ = ["LANGUAGES", "format_date", "label", "language"]

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
    "to_shop": ("Перейти в магазин", "Go to the shop"),
    "delivery": ("Доставка", "Delivery"),
    "pickup": ("Самовывоз", "Pickup"),
    "store": ("Купить в магазине", "Buy in a store"),
    "no_delivery": ("Нет доставки", "No delivery"),
    "vendor_code": ("Артикул", "Vendor code"),
    "vendor": ("Производитель", "Vendor"),
    "model": ("Модель", "Model"),
    "category": ("Категория", "Category"),
    "original": ("Оригинал", "Original"),
    "home": ("Главная", "Home"),
    "products": ("Товары", "Products"),
    "more": ("Ещё", "More"),
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


def label(key: str, lang: str | None) -> str:
    """The page's word for ``key`` in ``lang`` (English when there is none in that language)."""
    ru, en = _LABELS[key]
    return ru if _base(lang) == "ru" else en


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
