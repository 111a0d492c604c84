"""Self-labelling: blocks become title / body / boilerplate by aligning text (docs/architecture.md section 3).

No hand labels. Given a page and a reference text of its main content (an RSS
full text, or a corpus' expected output) each block is labelled by how much of it
the reference contains:

* blocks of >= 3 tokens: the share of their token 3-shingles found among the
  reference's shingles; ``>= BODY_SHINGLE_SHARE`` is body. Shingles, not single
  tokens, so a menu of common words ("news", "home", "the") does not match by chance.
* shorter blocks (a heading, "Photo: AP"): body when their token sequence occurs
  in the reference *and* a body block lies within ``SHORT_NEIGHBOURHOOD`` blocks;
  otherwise boilerplate.
* title: a block of at most ``TITLE_MAX_TOKENS`` tokens whose token set matches the
  reference title with Jaccard >= ``TITLE_JACCARD``.

With partial references (trafilatura's ``with`` / ``without`` snippets) only the
blocks a snippet falls in are labelled; the rest get weight 0 (unknown). Blocks holding a
``comments`` snippet are boilerplate: a comment is not the article.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from shared.pages.wordcount import CJK_TOKEN

__all__ = [
    "BODY",
    "BOILERPLATE",
    "CLASS_NAMES",
    "TITLE",
    "label_blocks",
    "label_by_snippets",
    "tokens",
]

BOILERPLATE, BODY, TITLE = 0, 1, 2
CLASS_NAMES = ("boilerplate", "body", "title")

#: a block is body when at least half of its 3-shingles are in the reference (measured: 0.3-0.7
#: change the labelled-body token F1 on the readability corpus by < 0.01; 0.5 is the middle)
BODY_SHINGLE_SHARE = 0.5
SHORT_NEIGHBOURHOOD = 2
TITLE_MAX_TOKENS = 40
TITLE_JACCARD = 0.8

#: words; CJK scripts have no spaces, so each of their characters is a token
_TOKEN = CJK_TOKEN


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (punctuation dropped), the unit of alignment."""
    return _TOKEN.findall(text.lower())


def _shingles(toks: Sequence[str], n: int = 3) -> set[tuple[str, ...]]:
    return {tuple(toks[i : i + n]) for i in range(len(toks) - n + 1)}


def _is_title(btoks: list[str], title_set: set[str]) -> bool:
    if not title_set or not btoks or len(btoks) > TITLE_MAX_TOKENS:
        return False
    bset = set(btoks)
    return len(bset & title_set) / len(bset | title_set) >= TITLE_JACCARD


def label_blocks(texts: Sequence[str], reference: str, title: str = "") -> npt.NDArray[np.int64]:
    """Labels (BOILERPLATE / BODY / TITLE) of ``texts`` against a full reference text."""
    ref = tokens(reference)
    ref_sh = _shingles(ref)
    ref_joined = " " + " ".join(ref) + " "
    title_set = set(tokens(title))
    n = len(texts)
    labels = np.full(n, BOILERPLATE, dtype=np.int64)
    short: list[int] = []
    toks_all = [tokens(t) for t in texts]
    for i, bt in enumerate(toks_all):
        if _is_title(bt, title_set):
            labels[i] = TITLE
        elif len(bt) >= 3:
            sh = _shingles(bt)
            if sum(1 for s in sh if s in ref_sh) >= BODY_SHINGLE_SHARE * len(sh):
                labels[i] = BODY
        elif bt:
            short.append(i)
    body = labels == BODY
    # on a page with no long block matched (a tiny page), short blocks stand on their own
    alone = not body.any()
    for i in short:
        lo, hi = max(0, i - SHORT_NEIGHBOURHOOD), min(n, i + SHORT_NEIGHBOURHOOD + 1)
        if (alone or body[lo:hi].any()) and (" " + " ".join(toks_all[i]) + " ") in ref_joined:
            labels[i] = BODY
    return labels


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def label_by_snippets(
    texts: Sequence[str],
    with_: Sequence[str],
    without: Sequence[str],
    title: str = "",
    comments: Sequence[str] = (),
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Partial labels from snippets: (labels, weights); weight 0 marks an unknown block.

    A snippet labels the blocks that contain it, and the blocks it contains when
    they are at least ``_MIN_PART`` characters long (a snippet may span blocks).
    """
    n = len(texts)
    labels = np.full(n, BOILERPLATE, dtype=np.int64)
    weights = np.zeros(n)
    normed = [_norm(t) for t in texts]
    title_set = set(tokens(title))

    def mark(snippets: Sequence[str], label: int, weight: float) -> None:
        for snip in snippets:
            s = _norm(snip)
            if not s:
                continue
            for i, b in enumerate(normed):
                if s in b or (len(b) >= _MIN_PART and b in s):
                    labels[i] = label
                    weights[i] = weight

    # order matters: a block with both a "with" and a "without" snippet stays body
    mark(without, BOILERPLATE, 1.0)
    # user comments are not the article (the benchmarks' ground truth and readability's leave them
    # out): boilerplate to learn from, the signal comment-thread pages lacked
    mark(comments, BOILERPLATE, 1.0)
    mark(with_, BODY, 1.0)
    for i, t in enumerate(texts):
        if _is_title(tokens(t), title_set):
            labels[i] = TITLE
            weights[i] = 1.0
    return labels, weights


#: a block shorter than this is not labelled just because a snippet contains it ("Home")
_MIN_PART = 30
