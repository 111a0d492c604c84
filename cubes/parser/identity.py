"""A document's identity: its canonical URL, on the feed's own host (docs/architecture.md section 3, parser).

As in Turbo, an item's link *is* the page it stands for, so it must be on a
host its source may publish: the feed's or upload's host, or that host's
``www.`` alias when the same tenant verified both -- and, for a tenant's source,
on the origin (scheme, host, port) of one of the tenant's rights there. What counts as the same
host is ``shared.webmaster.hosts``' rule, the one claims, verification and the API use
too (a rule of its own here let one tenant overwrite another's pages).
The URL is canonical (``shared.urls.canonical_url``) everywhere after this.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.origins import canonical_origin, origin_host
from shared.urls import canonical_url
from shared.webmaster.hosts import HostScope

__all__ = ["Identity", "IdentityError", "identify"]


class IdentityError(ValueError):
    """The item cannot be a page of this feed: no usable link, or a link to another host.

    ``code`` is the problem's row in ``shared/problems/codes.py``.
    """

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Identity:
    url: str
    host: str


def _host_and_origin(canonical: str) -> tuple[str, str]:
    origin = canonical_origin(canonical)  # the URL is canonical already: no second parse
    return origin_host(origin), origin


def identify(link: str | None, feed_host: HostScope | str | None) -> Identity:
    """The canonical URL of ``link``, checked against its source's scope (None: no host check).

    A plain host name is the scope of that host alone (no alias).
    """
    if not link:
        raise IdentityError(
            "item has no link: a Turbo page needs the URL of the page it stands for", code="item.no_link"
        )
    try:
        url = canonical_url(link)
    except ValueError as exc:
        raise IdentityError(f"item link {link[:200]!r} is not a usable URL: {exc}", code="item.bad_link") from None
    host, origin = _host_and_origin(url)
    if feed_host:
        scope = HostScope(feed_host) if isinstance(feed_host, str) else feed_host
        if not scope.admits(host, origin):
            foreign = host != scope.host and host != scope.alias
            raise IdentityError(
                scope.refusal(host, origin), code="item.foreign_host" if foreign else "host.not_verified"
            )
    return Identity(url, host)
