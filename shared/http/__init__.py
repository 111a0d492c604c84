"""HTTP fetch primitives shared by the crawler and the CLI (DESIGN.md sections 4 and 6).

``AddressGuard`` / ``GuardedResolver`` — the SSRF guard; ``Fetcher`` — a
guarded, bounded GET that always returns a ``FetchResult``.
"""

from shared.http.fetch import Fetcher, FetchResult, max_bytes_for, parse_retry_after
from shared.http.guard import AddressGuard, GuardedResolver, address_problem

__all__ = [
    "AddressGuard",
    "FetchResult",
    "Fetcher",
    "GuardedResolver",
    "address_problem",
    "max_bytes_for",
    "parse_retry_after",
]
