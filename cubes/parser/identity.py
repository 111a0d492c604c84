"""A document's identity: its canonical URL, on the feed's own host (DESIGN.md section 3, parser).

As in Turbo, an item's link *is* the page it stands for, so it must be on the
host the feed was registered for -- otherwise a feed could publish pages for
somebody else's site. ``www.`` is the one spelling difference accepted
(``example.com`` and ``www.example.com`` are one site to every webmaster).
The URL is canonical (``shared.urls.canonical_url``) everywhere after this.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.urls import canonical_url

__all__ = ["Identity", "IdentityError", "identify", "same_site"]


class IdentityError(ValueError):
    """The item cannot be a page of this feed: no usable link, or a link to another host.

    ``code`` is the problem's row in ``shared/problem_codes.py``.
    """

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Identity:
    url: str
    host: str


def _bare(host: str) -> str:
    return host[4:] if host.startswith("www.") else host


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
        raise IdentityError(
            "item has no link: a Turbo page needs the URL of the page it stands for", code="item.no_link"
        )
    try:
        url = canonical_url(link)
    except ValueError as exc:
        raise IdentityError(f"item link {link[:200]!r} is not a usable URL: {exc}", code="item.bad_link") from None
    host = _host(url)
    if feed_host and host != feed_host and not same_site(host, feed_host):
        raise IdentityError(
            f"item link is on host {host!r}, not on the feed's host {feed_host!r}; "
            "a feed may only publish pages of its own site",
            code="item.foreign_host",
        )
    return Identity(url, host)
