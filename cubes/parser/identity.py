"""A document's identity: its canonical URL, on the feed's own host (DESIGN.md section 3, parser).

As in Turbo, an item's link *is* the page it stands for, so it must be on the
host the feed was registered for -- otherwise a feed could publish pages for
somebody else's site. ``www.`` is the one spelling difference accepted
(``example.com`` and ``www.example.com`` are one site to every webmaster).
The URL is canonical (``shared.urls.canonical_url``) everywhere after this.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from shared.urls import canonical_url

__all__ = ["Identity", "IdentityError", "canonical", "identify", "same_site"]

#: a URL that ``canonical_url`` returns unchanged: lower-case ASCII host whose last label starts with
#: a letter (so not an IP address), no port or a port written plainly (checked below: in range, not the
#: scheme's default), no escapes, no dot segments, no fragment, only characters that are never
#: re-encoded. Most feed links are like this; for them the full normalization (about 20 us, the largest
#: cost of a YML offer) is skipped. A test checks the two agree on the corpus.
_SIMPLE = re.compile(
    r"(https?)://(?!xn--)(?:[a-z0-9_-]+\.)*[a-z][a-z0-9-]*(?::([1-9][0-9]{0,4}))?"
    r"(?:/[A-Za-z0-9._~!$&'()*+,;=:@/-]*)?(?:\?[A-Za-z0-9._~!$&'()*+,;=:@/?-]+)?"
)
_DEFAULT_PORT = {"http": "80", "https": "443"}


class IdentityError(ValueError):
    """The item cannot be a page of this feed: no usable link, or a link to another host."""


@dataclass(frozen=True, slots=True)
class Identity:
    url: str
    host: str


def _bare(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


#: URLs remembered: a feed fetched again repeats its links and image URLs, and a cache hit (~0.1 us) is
#: cheaper than even the fast path's regex (~1 us); as many as ``shared.urls`` keeps
_CACHED = 65_536


def canonical(url: str) -> str:
    """``shared.urls.canonical_url`` with a fast path for URLs that are canonical already."""
    # a long text is not kept: the cache would hold it
    return _canonical_cached(url) if len(url) < 2048 else canonical_url(url)


def _canonical(url: str) -> str:
    if (m := _SIMPLE.fullmatch(url)) and "/." not in url and ".xn--" not in url:
        port = m.group(2)
        if port is None or (int(port) <= 65535 and port != _DEFAULT_PORT[m.group(1)]):
            return url if url.count("/") > 2 else url + "/"
    return canonical_url(url)


_canonical_cached = functools.lru_cache(maxsize=_CACHED)(_canonical)


def _host(canonical: str) -> str:
    # the URL is canonical already: the authority is between "//" and the next "/";
    # re-parsing it (shared.urls.host_of) would double the cost of identity
    authority = canonical.split("/", 3)[2]
    if authority.startswith("["):
        return authority[: authority.index("]") + 1]
    return authority.partition(":")[0]


def same_site(host_a: str, host_b: str) -> bool:
    return _bare(host_a.lower().rstrip(".")) == _bare(host_b.lower().rstrip("."))


def identify(link: str | None, feed_host: str | None) -> Identity:
    """The canonical URL of ``link``, checked against ``feed_host`` (None: no host check)."""
    if not link:
        raise IdentityError("item has no link: a Turbo page needs the URL of the page it stands for")
    try:
        url = canonical(link)
    except ValueError as exc:
        raise IdentityError(f"item link {link[:200]!r} is not a usable URL: {exc}") from None
    host = _host(url)
    if feed_host and host != feed_host and not same_site(host, feed_host):
        raise IdentityError(
            f"item link is on host {host!r}, not on the feed's host {feed_host!r}; "
            "a feed may only publish pages of its own site"
        )
    return Identity(url, host)
