"""A page that lost images or tables is held back, not published as complete (docs/architecture.md
s.10).

"A Turbo page carries all the content of the original": a page that lost a
picture or a table on the way would be published as if it were whole, and
its reader would never know. So counting what a page carries counts its
images and tables as well as its text, at the two places they can be lost:

* **the parser** (``cubes/parser/documents.py``): the item's HTML, its Turbo
  blocks made static, against what the safe-HTML policy keeps of it. An image
  without a web URL (``data:``, ``javascript:``, none) or a table inside an
  element that goes with its content (``<noscript>``, ``<object>`` ...) is lost
  there; the item is refused with ``page.incomplete``, naming what was lost.
  What the blocks leave out on purpose (an ad slot, a form, an embed from a
  host that is not an allowed player) is policy, reported as
  ``page.content_dropped``, and does not hold the page.
* **the media cube and the delay cube** (``shared/pages/losses.py``): an image whose
  copy failed for good (404, not an image, too large...) is not on the page;
  the page is held with ``page.incomplete`` beside each image's own problem.
  An image only *late* (not in the CDN by the deadline), or failed for now (a 5xx,
  a timeout, the host unreachable or throttling us, after the cdn cube's tries),
  does not hold the page: it is published without it and the problem says so (a
  slow or briefly sick host must not keep a story off the air for good, and a
  held page is only tried again at the item's next version). ``holds`` is the rule.

A held page is not written; the version before it, if any, stays. Its problems
are stored *held* (``PageProblems.held``) and shown in the feed's and host's
status and the console until a version as new is published. ``media.hold_incomplete``
(default true) switches holding off: pages are then published without what
they lost, and the problems still say what.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Carried", "carried", "holds", "incomplete_message"]

#: why an image may be missing only for now (``shared.pages.losses.LATE``, the cdn cube's transient reasons)
_FOR_NOW = frozenset({"late", "timeout", "connect_error", "dns_error", "throttled", "http_5xx"})


def holds(reason: str) -> bool:
    """Whether an image missing for ``reason`` (as the cdn cube records it) holds its page back."""
    return reason not in _FOR_NOW and not reason.startswith("http_5")


_IMG = re.compile(r"<img\b", re.IGNORECASE)
_TABLE = re.compile(r"<table\b", re.IGNORECASE)
_EITHER = re.compile(r"<(?:img|table)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Carried:
    """The images and tables an HTML fragment carries."""

    images: int
    tables: int

    def lost_from(self, before: Carried) -> Carried:
        """What ``before`` had that this has not."""
        return Carried(max(0, before.images - self.images), max(0, before.tables - self.tables))

    def __bool__(self) -> bool:
        return bool(self.images or self.tables)


def carried(html: str) -> Carried:
    """The images and tables of ``html`` (an ``<img>`` inside a ``<picture>`` counts once)."""
    if "<" not in html or _EITHER.search(html) is None:  # one scan for the common teaser
        return Carried(0, 0)
    return Carried(len(_IMG.findall(html)), len(_TABLE.findall(html)))


def _share(n: int, of: int, noun: str) -> str:
    """``its image``, ``its 2 images``, ``1 of its 3 images``."""
    plural = noun if of == 1 else noun + "s"
    if n == of:
        return f"its {noun}" if n == 1 else f"its {n} {plural}"
    return f"{n} of its {of} {plural}"


def incomplete_message(lost: Carried, before: Carried, how: str, *, held: bool = True) -> str:
    """``page.incomplete``'s message: its fate (``held``: or published without), what it lost of how many,
    and how: ``the page was held back, not published: it lost its image (...)``."""
    parts = []
    if lost.images:
        parts.append(_share(lost.images, before.images, "image"))
    if lost.tables:
        parts.append(_share(lost.tables, before.tables, "table"))
    fate = "was held back, not published" if held else "was published without them"
    return f"the page {fate}: it lost {' and '.join(parts)} ({how})"
