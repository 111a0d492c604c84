"""Normalized text for the content hash (docs/architecture.md section 3, parser: dedupe by hash).

Normalizing is where dedupe spends its time (hashing with xxh3 is nearly
free), so it is kept lean: whitespace runs collapse to one space and the
ends are trimmed -- the differences feeds produce between two fetches of an
unchanged item (re-indented templates, CRLF vs LF). Nothing else is touched:
a changed word, link or image is a change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

__all__ = ["content_fields", "squash"]


def squash(text: str | None) -> str:
    """Whitespace runs to one space, ends trimmed."""
    if not text:
        return ""
    return " ".join(text.split())


def _json(value: Mapping[str, Any] | None) -> str:
    # orjson with sorted keys: a stable text of a small dict at C speed (a YML offer's fields)
    if not value:
        return ""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def content_fields(
    *,
    title: str,
    content_html: str,
    author: str | None,
    media_urls: Iterable[str],
    product: Mapping[str, Any] | None,
    extra: Mapping[str, str | list[str]],
) -> list[str]:
    """The fields whose change makes a new version, normalized, in a fixed order.

    Not included, on purpose: fetch and parse times, and the item's own dates
    (many feeds stamp every item with the time the feed was generated).
    """
    return [
        squash(title),
        squash(content_html),
        squash(author),
        " ".join(media_urls),
        _json(product),
        _json(extra),
    ]
