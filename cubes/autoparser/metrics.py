"""Extraction quality measures (docs/architecture.md section 3, autoparser; docs/conventions.md rule 14).

* ``token_prf``: token-level precision / recall / F1 of an extracted text against the
  ground truth, as a *bag of whitespace tokens* (multiset intersection), one page at a
  time; ``mean_prf`` averages pages (macro average, so a long page does not dominate).
* ``shingle_counts`` / ``shingle_prf``: the article-extraction benchmark's own measure, the one
  our held-out figures use: word tokens (``re`` ``\\w+``, case kept), 4-token shingles counted with
  repeats, per page the true/false positive and false negative shares (normalised so a long
  page weighs no more than a short one), then the *mean precision and mean recall* over pages
  and F1 of those two means. Shingles see word order and repeats: a caption printed three
  times costs precision here while a bag of tokens barely notices it.
* ``snippet_prf``: trafilatura's own evaluation for pages labelled with snippets: a
  ``with`` snippet found is a true positive, missing a false negative; a ``without``
  snippet found is a false positive, missing a true negative.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["PRF", "mean_prf", "shingle_counts", "shingle_prf", "snippet_counts", "snippet_prf", "token_prf"]


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float

    def as_dict(self) -> dict[str, float]:
        return {"precision": round(self.precision, 4), "recall": round(self.recall, 4), "f1": round(self.f1, 4)}


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def token_prf(predicted: str, truth: str) -> PRF:
    """Bag-of-whitespace-tokens P/R/F1. Two empty texts agree perfectly; one empty side scores 0."""
    pred = Counter(predicted.split())
    gold = Counter(truth.split())
    n_pred, n_gold = sum(pred.values()), sum(gold.values())
    if n_pred == 0 and n_gold == 0:
        return PRF(1.0, 1.0, 1.0)
    if n_pred == 0 or n_gold == 0:
        return PRF(0.0, 0.0, 0.0)
    common = sum((pred & gold).values())
    p, r = common / n_pred, common / n_gold
    return PRF(p, r, _f1(p, r))


def mean_prf(scores: Iterable[PRF]) -> PRF:
    items = list(scores)
    if not items:
        return PRF(0.0, 0.0, 0.0)
    k = len(items)
    return PRF(sum(s.precision for s in items) / k, sum(s.recall for s in items) / k, sum(s.f1 for s in items) / k)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def snippet_counts(text: str, with_: Sequence[str], without: Sequence[str]) -> tuple[int, int, int, int]:
    """(tp, fn, fp, tn) of one page."""
    t = _norm(text)
    tp = sum(1 for s in with_ if _norm(s) in t)
    fp = sum(1 for s in without if _norm(s) in t)
    return tp, len(with_) - tp, fp, len(without) - fp


def snippet_prf(counts: Iterable[tuple[int, int, int, int]]) -> PRF:
    """Micro-averaged P/R/F1 over pages (trafilatura's benchmark convention)."""
    tp = fn = fp = 0
    for a, b, c, _ in counts:
        tp, fn, fp = tp + a, fn + b, fp + c
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return PRF(p, r, _f1(p, r))


_SHINGLE_TOKEN = re.compile(r"\w+")
#: the benchmark's shingle length
SHINGLE_N = 4


def _shingles(text: str) -> Counter[tuple[str, ...]]:
    toks = _SHINGLE_TOKEN.findall(text)
    n = SHINGLE_N
    # a text shorter than one shingle is one shorter shingle (the benchmark's rule)
    return Counter(tuple(toks[i : i + n]) for i in range(max(1, len(toks) - n + 1)) if toks[i : i + n])


def shingle_counts(predicted: str, truth: str) -> tuple[float, float, float]:
    """(tp, fp, fn) shares of one page's 4-token shingles; they sum to 1 (0, 0, 0 when both are empty)."""
    pred, gold = _shingles(predicted), _shingles(truth)
    tp = float(sum((pred & gold).values()))
    fp = float(sum((pred - gold).values()))
    fn = float(sum((gold - pred).values()))
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fp == 0 else tp / (tp + fp)


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return 0.0 if tp == fn == 0 else tp / (tp + fn)


def shingle_prf(counts: Iterable[tuple[float, float, float]]) -> PRF:
    """Mean precision over pages that predicted something, mean recall over pages with a truth, F1 of both."""
    items = list(counts)
    precisions = [_precision(*c) for c in items if c[0] + c[1] > 0]
    recalls = [_recall(*c) for c in items if c[0] + c[2] > 0]
    p = sum(precisions) / len(precisions) if precisions else 0.0
    r = sum(recalls) / len(recalls) if recalls else 0.0
    return PRF(p, r, _f1(p, r))
