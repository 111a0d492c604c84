"""The segmented page: what segmentation hands to the features (docs/architecture.md section 3, autoparser).

A ``Page`` holds parallel per-block lists (text, tag, depth, preorder id, ancestors, link and
image counts, context and class masks, DOM path, ...) and the element intervals the features use;
``ImageRef`` is one ``<img>`` with the block it sits in. ``segment.py`` fills them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

from cubes.autoparser.class_groups import CLASS_GROUPS

__all__ = ["ImageRef", "Page"]


@dataclass(slots=True)
class ImageRef:
    """An ``<img>`` of the page, with its position (preorder) and the block it sits in."""

    pre: int
    src: str
    alt: str
    width: int | None
    height: int | None
    block: int  # index of the block it belongs to (-1 = none yet)


@dataclass
class Page:
    """The segmented page: parallel per-block lists plus the element intervals the features use."""

    root: Any
    texts: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    elements: list[Any] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    pre: list[int] = field(default_factory=list)
    #: preorder ids of the three nearest block-level ancestors (-1 when there are fewer)
    anc: list[tuple[int, int, int]] = field(default_factory=list)
    link_chars: list[int] = field(default_factory=list)
    n_links: list[int] = field(default_factory=list)
    n_images: list[int] = field(default_factory=list)
    #: bitmask of CONTEXT_TAGS among ancestors (+ itemprop=articleBody)
    ctx: list[int] = field(default_factory=list)
    #: per CLASS_GROUPS: hits on the block's own element (bitmask) and counts on ancestors
    own_class: list[int] = field(default_factory=list)
    anc_class: list[tuple[int, ...]] = field(default_factory=list)
    images: list[ImageRef] = field(default_factory=list)
    #: subtree end (exclusive preorder id) of every element, indexed by its preorder id
    end_of: list[int] = field(default_factory=list)
    #: the block is one piece of an element whose text was split at <br> (see the module docstring)
    split: list[bool] = field(default_factory=list)
    #: the block's DOM path: tag.class of its element and of its three nearest block ancestors
    #: (digits dropped from class names: "post-1234" is "post-"), for host templates
    path: list[str] = field(default_factory=list)
    #: preorder id -> element, for the block-level elements (ancestors included)
    block_el: dict[int, Any] = field(default_factory=dict)
    #: the block sits inside a schema.org Comment (itemtype ...Comment, itemprop comment)
    in_comment: list[bool] = field(default_factory=list)
    #: <title> text
    html_title: str = ""
    #: preorder id of readability's top candidate, once ``page_features`` computed it (-1: none)
    top_candidate: int | None = None
    _anc: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    _anc_class: npt.NDArray[np.int64] | None = field(default=None, repr=False)
    _chars: npt.NDArray[np.int64] | None = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return len(self.texts)

    def anc_array(self) -> npt.NDArray[np.int64]:
        """``anc`` as an (n, 3) array (built once; np.asarray on a list of tuples is slow)."""
        if self._anc is None:
            flat = np.fromiter(chain.from_iterable(self.anc), dtype=np.int64, count=3 * self.n)
            self._anc = flat.reshape(self.n, 3)
        return self._anc

    def char_counts(self) -> npt.NDArray[np.int64]:
        """Each block's characters (``len`` of its text), as an array (built once, for the post-processing)."""
        if self._chars is None:
            self._chars = np.fromiter((len(t) for t in self.texts), dtype=np.int64, count=self.n)
        return self._chars

    def anc_class_array(self) -> npt.NDArray[np.int64]:
        """``anc_class`` as an (n, len(CLASS_GROUPS)) array (built once)."""
        if self._anc_class is None:
            k = len(CLASS_GROUPS)
            flat = np.fromiter(chain.from_iterable(self.anc_class), dtype=np.int64, count=k * self.n)
            self._anc_class = flat.reshape(self.n, k)
        return self._anc_class
