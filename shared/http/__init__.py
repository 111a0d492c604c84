"""HTTP fetch primitives shared by the crawler and the CLI (docs/architecture.md sections 4 and 6).

``AddressGuard`` / ``GuardedResolver`` — the SSRF guard; ``Fetcher`` — a
guarded, bounded GET that always returns a ``FetchResult``.
"""

from shared.http.fetch import Fetcher, FetchResult, max_bytes_for
from shared.http.guard import AddressGuard, GuardedResolver, address_problem
from shared.http.retry_after import parse_retry_after

__all__ = [
    "AddressGuard",
    "FetchResult",
    "Fetcher",
    "GuardedResolver",
    "address_problem",
    "max_bytes_for",
    "parse_retry_after",
]
