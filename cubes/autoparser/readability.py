"""readability.js-like candidate scores over a segmented page (docs/architecture.md section 3, autoparser).

Each element's score comes from the text blocks under it, scaled by its subtree's link density
(``readability_scores``); the top candidate is the densest container of text. Subtree sums use
preorder intervals: a block lies inside element E iff ``pre(E) <= pre(block) < end(E)``
(``interval_sums``). ``features.py`` turns the scores into columns and ``completeness.py``
measures a page against the top candidate.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cubes.autoparser.page import Page

__all__ = ["ancestor_of", "interval_sums", "readability_scores"]


def interval_sums(
    pre: npt.NDArray[np.int64],
    lo: npt.NDArray[np.int64],
    hi: npt.NDArray[np.int64],
    values: list[npt.NDArray[np.float64]],
) -> tuple[npt.NDArray[np.int64], list[npt.NDArray[np.float64]]]:
    """For each interval [lo, hi) of preorder ids: how many blocks fall in it and the sum of each value."""
    a = np.searchsorted(pre, lo, side="left")
    b = np.searchsorted(pre, hi, side="left")
    sums = []
    for v in values:
        cs = np.concatenate(([0.0], np.cumsum(v)))
        sums.append(cs[b] - cs[a])
    return b - a, sums


def readability_scores(
    page: Page,
    chars: npt.NDArray[np.float64],
    commas: npt.NDArray[np.float64],
    link: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], int]:
    """readability.js-like candidate scores per element (preorder id) and the top candidate's id.

    Each block of >= 25 chars gives ``1 + commas + min(chars / 100, 3)`` to its parent,
    half to its grandparent and a third to the one above; the sum is then scaled by
    ``1 - link density`` of the element's subtree. -1 when nothing scored.
    """
    n_el = len(page.end_of)
    scores = np.zeros(n_el + 1)
    if not page.texts:
        return scores[:-1], -1
    anc = page.anc_array()  # (n, 3); -1 maps to the spare slot at the end
    anc = np.where(anc < 0, n_el, anc)
    ok = chars >= 25
    s = np.where(ok, 1.0 + commas + np.minimum(chars / 100.0, 3.0), 0.0)
    np.add.at(scores, anc[:, 0], s)
    np.add.at(scores, anc[:, 1], s / 2.0)
    np.add.at(scores, anc[:, 2], s / 3.0)
    scores = scores[:-1]
    cand = np.flatnonzero(scores > 0)
    if cand.size == 0:
        return scores, -1
    pre = np.asarray(page.pre, dtype=np.int64)
    end = np.asarray(page.end_of, dtype=np.int64)
    _, (c_chars, c_link) = interval_sums(pre, cand, end[cand], [chars, link])
    ld = np.divide(c_link, c_chars, out=np.zeros_like(c_link), where=c_chars > 0)
    scores[cand] *= 1.0 - ld
    return scores, int(cand[np.argmax(scores[cand])])


def ancestor_of(page: Page, el_pre: int) -> list[int]:
    """The nearest block-level ancestor of element ``el_pre`` (found among the blocks' ancestor lists)."""
    for blk_pre, anc in zip(page.pre, page.anc, strict=True):
        if blk_pre == el_pre:
            return [a for a in anc[:1] if a >= 0]
        for j, a in enumerate(anc):
            if a == el_pre:
                return [x for x in anc[j + 1 : j + 2] if x >= 0]
    return []
