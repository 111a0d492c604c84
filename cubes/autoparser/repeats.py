"""Sibling repeats: runs of one structure around a block (docs/architecture.md section 3, autoparser).

Comment threads and teaser lists repeat one element shape (``li.comment`` x 30, ``div.teaser``
x 8); an article's paragraphs sit in a container that is itself unique on the page.
``sibling_repeats`` counts, for a block's element, parent and grandparent, the siblings of the
same tag and class, for three columns of the feature matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from cubes.autoparser.page import Page

__all__ = ["sibling_repeats"]


def sibling_repeats(page: Page) -> npt.NDArray[np.float64]:
    """(n, 3): how many siblings share the tag and class of the block's element, parent and grandparent.

    Comment threads and teaser lists are runs of one structure (``li.comment`` x 30,
    ``div.teaser`` x 8) around short blocks; an article's paragraphs are runs of ``p``
    inside one container that is itself unique on the page.
    """
    #: (parent, tag, class) -> siblings of that tag and class; found by lxml (``findall`` of the tag,
    #: in C), only the class compared here: a parent's other children are never touched
    same: dict[tuple[Any, str, str | None], float] = {}
    #: by preorder id: blocks share their parents, so each element is counted once
    done: dict[int, float] = {-1: 0.0}
    block_el = page.block_el

    def repeats(pre: int) -> float:
        hit = done.get(pre)
        if hit is not None:
            return hit
        el = block_el[pre]
        parent = el.getparent()
        value = 0.0
        if parent is not None:
            tag, cls = el.tag, el.get("class")
            key = (parent, tag, cls)
            found = same.get(key)
            if found is None:
                peers = parent.findall(tag)
                found = same[key] = float(sum(1 for c in peers if c.get("class") == cls))
            value = found - 1.0
        done[pre] = value
        return value

    out = np.fromiter(
        (repeats(x) for pre, (a0, a1, _) in zip(page.pre, page.anc, strict=True) for x in (pre, a0, a1)),
        dtype=np.float64,
        count=3 * page.n,
    ).reshape(page.n, 3)
    return np.log1p(out)
