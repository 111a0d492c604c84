"""An origin -- scheme, host and port -- is what a right on a site covers (docs/architecture.md section 6,
"Sites have owners").

A tenant proves control of ``https://shop.example:8443`` by a token served there; that proves
nothing about ``http://shop.example:8080``, which another party may run on the same machine. So a
claim names an origin (the URL the tenant gave, or ``https://host`` by default), a proof is looked
for on that origin only, and the right it earns covers pages on that origin only.

Origins are canonical (``shared.urls.canonical_url``): scheme and host in lower case, the host in
its canonical spelling (punycode, IPv6 in brackets, an IPv4 address in dotted quads whatever its
spelling), the port only when it is not the scheme's default. Two spellings of one origin are one
string, so comparing origins is comparing strings.
"""

from __future__ import annotations

from shared.urls import canonical_url

__all__ = ["canonical_origin", "default_origin", "origin_host", "origin_of", "origin_port", "try_origin"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of an absolute http(s) URL, canonical; ``ValueError`` when unusable."""
    return canonical_origin(canonical_url(url))


def canonical_origin(canonical: str) -> str:
    """``origin_of`` a URL that is canonical already (a page's key, a parsed item's URL): no parsing.

    Its authority is between ``//`` and the next ``/``; canonicalizing it again would double the cost
    where every item or search hit asks.
    """
    scheme, _, rest = canonical.partition("://")
    return f"{scheme}://{rest.partition('/')[0]}"


def try_origin(url: str) -> str | None:
    """``origin_of``, or None for anything that is not an absolute http(s) URL."""
    try:
        return origin_of(url.strip())
    except ValueError:
        return None


def origin_host(origin: str) -> str:
    """The canonical host of an origin (``[::1]`` for IPv6, brackets kept)."""
    authority = origin.partition("://")[2]
    if authority.startswith("["):
        return authority[: authority.index("]") + 1]
    return authority.partition(":")[0]


def origin_port(origin: str) -> int:
    """The port an origin is served on (the scheme's default when it names none)."""
    scheme, _, authority = origin.partition("://")
    tail = authority.rpartition("]")[2] if authority.startswith("[") else authority
    _, colon, port = tail.partition(":")
    return int(port) if colon else _DEFAULT_PORTS[scheme]


def default_origin(host: str) -> str:
    """Where a claim of a bare host (no URL given) is checked and what its right covers: https, port 443."""
    return f"https://{host}"
