"""Sanitizing a document's content HTML (docs/architecture.md section 6, secure by default).

The allowlist is the one safe-HTML policy (``shared/pages/safehtml.py``), with the
parser's media rule: images and videos keep the partner's URLs, made absolute,
because the media cube caches them next (the kvwriter then shows only the CDN
copies). Iframes of the allowlisted video hosts survive here, so that the page
writer can show them; every other iframe goes.

Relative URLs are resolved against the item's base (its ``xml:base`` or the
feed URL), because the page will be served from another host where they would
point nowhere; a bare ``#fragment`` points into the document itself, so it is
resolved against the document's URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from shared.pages.safehtml import EMBED_HOSTS, MediaRule, SafeHtml

__all__ = ["ContentCleaner", "sanitize_html"]

#: text with only bare (attribute-less) tags from this set and plain entities cannot carry anything
#: unsafe; nh3 is skipped for it (most YML descriptions and many RSS teasers look like this). Plain means:
#: no "<" that does not open such a tag and no "&" that does not open such an entity. Neither token can
#: hold a "<" or "&", so this is the same as matching the text as a sequence of characters, entities and
#: bare tags -- but each search jumps from one "<" (or "&") to the next with a substring search: ~2 us
#: for 1 KB of text instead of ~35 us for the one regex that stepped through every character
_NOT_PLAIN_TAG = re.compile(r"<(?!/?(?:p|b|i|em|strong|br|ul|ol|li|h[1-6]|blockquote|sub|sup|s|u|small)\s*/?>)")
_NOT_PLAIN_ENTITY = re.compile(r"&(?!(?:[a-zA-Z]{2,8}|#[0-9]{1,6}|#x[0-9a-fA-F]{1,6});)")
#: plain text longer than this still goes through nh3
_PLAIN_MAX = 4096


def _plain(html: str) -> bool:
    return (
        len(html) < _PLAIN_MAX
        and ("<" not in html or not _NOT_PLAIN_TAG.search(html))
        and ("&" not in html or not _NOT_PLAIN_ENTITY.search(html))
    )


class ContentCleaner:
    """The parser's cleaner for one list of video hosts (``kvwriter.video_hosts``)."""

    def __init__(self, video_hosts: Iterable[str] = EMBED_HOSTS, *, hold_incomplete: bool = True) -> None:
        video_hosts = tuple(video_hosts)
        self._safe = SafeHtml(media=MediaRule.source, video_hosts=video_hosts)
        #: what this cleaner is made of: a worker process builds the same one (``documents.prepare_isolated``)
        self.config = (video_hosts, hold_incomplete)
        #: an item whose images or tables the policy removes is refused (``shared/pages/completeness.py``);
        #: False: published without them, with a warning (``media.hold_incomplete``)
        self.hold_incomplete = hold_incomplete
        #: the players an iframe may show (the Turbo blocks report the others)
        self.video_hosts = self._safe.players

    def clean(self, html: str, base: str | None = None, *, page_url: str | None = None) -> str:
        """Safe HTML of ``html``; relative URLs resolved against ``base``, ``#fragments`` against ``page_url``."""
        if not html:
            return ""
        if _plain(html):
            return html.strip()
        return self._safe.clean(html, base_url=base or "", page_url=page_url).strip()


_DEFAULT = ContentCleaner()


def sanitize_html(html: str, base: str | None = None, *, page_url: str | None = None) -> str:
    """Safe HTML of ``html`` with the default video hosts (``ContentCleaner`` takes configured ones)."""
    return _DEFAULT.clean(html, base, page_url=page_url)
