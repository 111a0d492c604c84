"""Extraction quality measures (DESIGN.md section 3, autoparser; STYLE.md rule 14).

* ``token_prf``: token-level precision / recall / F1 of an extracted text against the
  ground truth, as a *bag of whitespace tokens* (multiset intersection), one page at a
  time; ``mean_prf`` averages pages (macro average, so a long page does not dominate).
* ``snippet_prf``: trafilatura's own evaluation for pages labelled with snippets: a
  ``with`` snippet found is a true positive, missing a false negative; a ``without``
  snippet found is a false positive, missing a true negative.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["PRF", "mean_prf", "snippet_counts", "snippet_prf", "token_prf"]


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
