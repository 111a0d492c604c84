"""Where the frontend shows a Turbo page: ``/turbo?url=<original URL>`` (docs/architecture.md section 3, frontend).

The frontend serves the route; pages link to each other through it (a shop
page's breadcrumbs to its category listings, a listing's cards to its
products), so the path is written once, here.
"""

from __future__ import annotations

from urllib.parse import urlencode

__all__ = ["turbo_path"]


def turbo_path(url: str) -> str:
    """The frontend path of the Turbo page of ``url`` (a canonical URL)."""
    return "/turbo?" + urlencode({"url": url})
