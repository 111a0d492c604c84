"""What type a page is for the search filter and ranking (docs/architecture.md section 3, "frontend" search).

* ``product`` — a YML offer;
* ``news`` — an article that carries its publication date (a feed item, a dated
  upload or page): it is ranked with a freshness decay (``ranking.py``);
* ``article`` — an article without a date (an evergreen page, an undated document).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

__all__ = ["PageKind", "page_kind"]


class PageKind(StrEnum):
    news = "news"
    article = "article"
    product = "product"


def page_kind(doc_kind: str, published_at: datetime | None) -> PageKind:
    """The search type of a document of ``shared.messages.DocKind`` ``doc_kind``."""
    if doc_kind == "product":
        return PageKind.product
    return PageKind.news if published_at is not None else PageKind.article
