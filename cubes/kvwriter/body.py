"""What the page does to a body once it is sanitized (docs/architecture.md section 3, "kvwriter").

Each pass reads nh3's output, where a literal ``<`` only ever opens a tag and
attribute values are double-quoted and escaped, so a regular expression over
it is exact (``shared/pages/safehtml.py`` says why):

* ``without_repeated_title``: Turbo's ``<header><h1>`` repeats the title the
  page already shows;
* ``with_image_sizes``: every CDN image gets the ``width`` / ``height`` the CDN
  measured (``Media.width/height``), so the browser reserves its box and the
  page does not jump while images load, and the ``srcset`` of its smaller copies
  (``shared.images.variants``), so a phone downloads the copy its screen needs;
* ``with_local_anchors``: a link to this very page's ``#fragment`` (the parser
  resolves bare fragments against the document) becomes an in-page anchor when
  the body has that id (ids carry the ``c-`` prefix of the policy);
* ``with_turbo_links``: links to a catalog's category listing pages (which exist
  only as Turbo pages) go to the category's page on the frontend
  (``/turbo/shop/<host>/category/<id>``), and on a listing page every other link to
  its shop's pages goes to their Turbo pages (``/turbo?url=``).

What a pass writes into the body is spelt as nh3 spells it (``attribute``), so the
next pass, and the page's own checks, read it the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from shared.images.variants import srcset
from shared.pages.safehtml import ID_PREFIX, plain_text
from shared.pages.turbo_links import CATEGORY_PARAM, category_path, listing_category, turbo_path

__all__ = [
    "IMAGE_SIZES",
    "Measured",
    "attribute",
    "shows_image",
    "with_image_sizes",
    "with_local_anchors",
    "with_turbo_links",
    "without_repeated_title",
]

#: a leading <h1> of the body (Turbo's <header><h1> repeats the title), after sanitizing
_LEADING_H1 = re.compile(r'^\s*(<header(?: class="tc-head")?>\s*)?<h1[^>]*>(.*?)</h1>', re.S)
_IMG = re.compile(r'<img src="([^"]*)"([^>]*)>')
_ID = re.compile(r'\sid="([^"]*)"')


def attribute(value: str) -> str:
    """``value`` as nh3 writes a double-quoted attribute value: ``&`` and ``"`` escaped, nothing else."""
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("\xa0", "&nbsp;")


def shows_image(body: str, url: str) -> bool:
    """Whether the sanitized ``body`` already shows the image at ``url``."""
    return f'src="{attribute(url)}"' in body


def without_repeated_title(body: str, title: str) -> str:
    """Drop the body's leading <h1> when it only repeats the page title (shown once, above)."""
    m = _LEADING_H1.match(body)
    if m is None:
        return body
    if " ".join(plain_text(m.group(2)).split()).casefold() != " ".join(title.split()).casefold():
        return body
    start = body.index("<h1", m.start())
    return body[:start] + body[m.end() :]


#: how wide an image of the body shows: the article's column (42rem) or the whole screen below it
IMAGE_SIZES = "(max-width: 44rem) 100vw, 42rem"


@dataclass(frozen=True, slots=True)
class Measured:
    """What the CDN knows of an image: its pixels and the widths of its smaller copies."""

    width: int
    height: int
    variants: tuple[int, ...] = ()

    def attrs(self, cdn_url: str, *, box: bool = True) -> str:
        """``width height srcset sizes`` for its ``<img>`` (``box``: with the size attributes)."""
        out = f' width="{self.width}" height="{self.height}"' if box else ""
        if self.variants:
            out += f' srcset="{attribute(srcset(cdn_url, self.width, self.variants))}" sizes="{IMAGE_SIZES}"'
        return out


def with_image_sizes(body: str, sizes: Mapping[str, Measured]) -> str:
    """``width`` / ``height`` (and the copies' ``srcset``) on every ``<img>`` the CDN measured.

    ``sizes``: CDN URL -> what the CDN measured. A size or srcset the source wrote is kept.
    """
    if not sizes or "<img" not in body:
        return body

    def one(m: re.Match[str]) -> str:
        rest = m.group(2)
        url = m.group(1).replace("&amp;", "&")
        found = sizes.get(url)
        if found is None:
            return m.group(0)
        box = " width=" not in rest and " height=" not in rest
        if " srcset=" in rest:
            found = Measured(found.width, found.height)
        return f'<img src="{m.group(1)}"{found.attrs(url, box=box)}{rest}>'

    return _IMG.sub(one, body)


def with_local_anchors(body: str, page_url: str) -> str:
    """Links to ``page_url#x`` -> ``#c-x`` where the body has ``id="c-x"``."""
    prefix = f' href="{attribute(page_url)}#'
    if prefix not in body:
        return body
    ids = set(_ID.findall(body))
    if not ids:
        return body

    def one(m: re.Match[str]) -> str:
        anchor = ID_PREFIX + m.group(1)
        return f' href="#{anchor}"' if anchor in ids else m.group(0)

    return re.sub(re.escape(prefix) + r'([^"]*)"', one, body)


_CATEGORY_PARAM = CATEGORY_PARAM + "="
_HREF = re.compile(r' href="(https?://[^"/?#]+)([/?][^"]*)?"')


def with_turbo_links(body: str, host: str, *, listing: bool) -> str:
    """Links on ``host`` to category listing pages -> their category pages; on a ``listing`` page every other
    link on ``host`` -> its Turbo page."""
    if " href=" not in body or (not listing and _CATEGORY_PARAM not in body):
        return body

    def one(m: re.Match[str]) -> str:
        origin, rest = m.group(1), m.group(2) or "/"
        target = (origin + rest).replace("&amp;", "&")
        if origin.split("//", 1)[1].lower() != host or not (listing or _CATEGORY_PARAM in rest):
            return m.group(0)
        category = listing_category(target)
        path = category_path(host, category) if category is not None else turbo_path(target)
        return f' href="{attribute(path)}"'

    return _HREF.sub(one, body)
