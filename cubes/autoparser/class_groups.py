"""The class / id vocabulary of segmentation (docs/architecture.md section 3, autoparser).

``CLASS_GROUPS`` names ten groups of words found in ``class`` and ``id`` attributes (navigation,
footer, comments, ...); ``class_mask`` gives the groups an attribute hits as a bitmask and
``path_step`` the ``tag.class`` step of a block's DOM path. Both are cached, bounded. The order of
``CLASS_GROUPS`` is part of the trained model's input (``features.py`` makes one column per group).
"""

from __future__ import annotations

import re

__all__ = ["CLASS_GROUPS", "GROUP_NAMES", "MASK_VECTORS", "class_mask", "path_step"]

#: class / id vocabulary, one feature per group (counted over the block and its ancestors).
#: Words chosen after readability.js' unlikely/positive candidate lists and trafilatura's
#: boilerplate selectors; a word may hit inside longer tokens ("site-footer", "postbody").
CLASS_GROUPS: dict[str, str] = {
    "nav": r"nav|menu|breadcrumb|masthead|topbar|toolbar|header|skip|pagination|pager",
    "footer": r"footer|copyright|legal|colophon|bottom",
    "comment": r"comment|disqus|repl(?:y|ies)|respond|discuss|forum",
    "share": r"share|social|facebook|twitter|whatsapp|print|email|subscri|newsletter|follow",
    "related": r"related|recommend|teaser|more|popular|trending|read-?next|also|outbrain|taboola",
    "sidebar": r"sidebar|side-|widget|aside|rail|column|extra|supplement",
    "ad": r"(?:^|[-_ ])ads?(?:$|[-_ ])|advert|sponsor|promo|banner|dfp|gpt|doubleclick|commercial",
    "content": r"article|content|post|body|entry|text|story|main|blog|prose|hentry|rich",
    "meta": r"byline|author|date|time|meta|tags?(?:$|[-_ ])|categor|caption|credit|dateline",
    "hidden": r"hidden|invisible|sr-only|screen-reader|visually-hidden|modal|popup|cookie|gdpr|consent",
}
GROUP_NAMES = tuple(CLASS_GROUPS)
_GROUP_RE = re.compile("|".join(f"(?P<{k}>{v})" for k, v in CLASS_GROUPS.items()))
_GROUP_BIT = {k: 1 << i for i, k in enumerate(GROUP_NAMES)}
#: mask -> per-group 0/1 vector, to add a mask to the ancestor counts in one step
MASK_VECTORS = [tuple((m >> b) & 1 for b in range(len(GROUP_NAMES))) for m in range(1 << len(GROUP_NAMES))]
_class_cache: dict[str, int] = {}
#: bounded so a crawl over millions of pages cannot grow it forever; class names repeat
#: heavily across pages of one host, so a few thousand entries already hit most of the time
_CLASS_CACHE_MAX = 20_000
#: digits are dropped from a DOM path's class names ("post-1234" is "post-")
_DIGITS = re.compile(r"\d+")
_steps: dict[tuple[str, str], str] = {}


def path_step(tag: str, cls: str) -> str:
    """``tag.firstclass`` with digits dropped ("post-1234" is "post-"), cached like ``class_mask``."""
    step = _steps.get((tag, cls))
    if step is None:
        first = cls.split(None, 1)
        step = f"{tag}.{_DIGITS.sub('', first[0])}" if first else tag
        if len(_steps) >= _CLASS_CACHE_MAX:
            _steps.clear()
        _steps[(tag, cls)] = step
    return step


def class_mask(value: str) -> int:
    """The CLASS_GROUPS that ``value`` (a ``class`` or ``id`` attribute) hits, one bit per group."""
    mask = _class_cache.get(value)
    if mask is None:
        mask = 0
        for m in _GROUP_RE.finditer(value.lower()):
            mask |= _GROUP_BIT[m.lastgroup or "content"]
        if len(_class_cache) >= _CLASS_CACHE_MAX:
            _class_cache.clear()
        _class_cache[value] = mask
    return mask
