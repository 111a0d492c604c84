"""The tag vocabulary of segmentation (docs/architecture.md section 3, autoparser).

Which elements make a block of their own (``BLOCK_TAGS``), which are never visible as text
(``SKIP_TAGS``), which ancestors are reported as context features (``CONTEXT_TAGS`` and the bit
each sets in a block's context mask, ``CTX_BIT``), and which inline leaves the walk reads without
recursing (``LEAF_FAST``). ``segment.py`` reads the tree with them, ``features.py`` turns the
context mask into columns: the order of ``CONTEXT_TAGS`` is part of the trained model's input.
"""

from __future__ import annotations

__all__ = ["ARTICLE_BODY_BIT", "BLOCK_TAGS", "CONTEXT_TAGS", "CTX_BIT", "LEAF_FAST", "SKIP_TAGS", "comment_markup"]

#: elements whose text forms its own block (everything else is inline and joins its block)
BLOCK_TAGS = frozenset(
    [
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "td",
        "th",
        "pre",
        "blockquote",
        "figcaption",
        "figure",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "nav",
        "aside",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "caption",
        "form",
        "fieldset",
        "legend",
        "address",
        "center",
        "details",
        "summary",
        "body",
        "html",
        "hgroup",
        "menu",
        "dialog",
    ]
)
#: never visible as text
SKIP_TAGS = frozenset(
    [
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "embed",
        "canvas",
        "select",
        "textarea",
        "button",
        "input",
        "head",
        "link",
        "meta",
        "option",
        "datalist",
        "audio",
        "video",
        "source",
        "track",
        "map",
        "area",
    ]
)
#: ancestor tags reported as features (index = bit in the "context" mask)
CONTEXT_TAGS = (
    "article",
    "main",
    "header",
    "footer",
    "nav",
    "aside",
    "form",
    "li",
    "table",
    "figure",
    "blockquote",
    "a",
    "h",
)
CTX_BIT = {t: 1 << i for i, t in enumerate(CONTEXT_TAGS)}
for _h in ("h1", "h2", "h3", "h4", "h5", "h6"):
    CTX_BIT[_h] = CTX_BIT["h"]
for _t in ("td", "th", "tr"):
    CTX_BIT[_t] = CTX_BIT["table"]
CTX_BIT["ul"] = CTX_BIT["ol"] = CTX_BIT["li"]
#: the bit after CONTEXT_TAGS' bits in the "context" mask: inside ``itemprop="articleBody"``
ARTICLE_BODY_BIT = 1 << len(CONTEXT_TAGS)
#: inline elements the walk reads without recursing into when they have no children
LEAF_FAST = frozenset(
    [
        "a",
        "span",
        "b",
        "strong",
        "i",
        "em",
        "u",
        "s",
        "small",
        "big",
        "font",
        "code",
        "kbd",
        "var",
        "samp",
        "tt",
        "sub",
        "sup",
        "mark",
        "abbr",
        "cite",
        "q",
        "time",
        "label",
        "dfn",
        "ins",
        "del",
        "bdi",
        "bdo",
        "wbr",
        "data",
    ]
)


#: schema.org comment markup (Microdata): itemprop on the comment, or the Comment type
_COMMENT_PROPS = frozenset({"comment", "comments"})
_COMMENT_TYPE = "schema.org/Comment"


def comment_markup(itemprop: str | None, itemtype: str | None) -> bool:
    """Whether an element's ``itemprop`` / ``itemtype`` mark it as a reader comment (schema.org)."""
    return itemprop in _COMMENT_PROPS or _COMMENT_TYPE in (itemtype or "")
