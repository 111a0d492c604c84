"""What a counter cell of query statistics publishes (docs/architecture.md section 3, "wordstat").

Why this rule, and why each attack on the threshold fails: ``cubes/wordstat/README.md``.

A **cell** is one counter row: a query's searches in one month, region and device
(``ws_counts``), or one host's impressions for one query in one month (``ws_hosts``).
Each cell draws a secret **offset** when it is first counted, 0 to
``wordstat.privacy_noise``, kept in its row (``hide``) beside the **lift** that
centres it (``lift``: half the noise, so a sum of many cells is not biased low). A
cell publishes

* nothing while its count less its offset is under ``wordstat.privacy_threshold``;
* its count less its offset plus its lift once that reaches the threshold.

So a published cell always had at least the threshold's number of searches, and what
it shows and the moment it appears are one number, ``count - offset``, whatever
sequence of searches led there. Every number a reader sees is a sum of published
cells, and nothing else: a word's counters (``ws_lemma_counts``) and a query's
total (``ws_queries.total``) are kept as the sums of its published cells by every
batch (``visible_changes``), so a hidden cell is in no answer at all.

The lemma counters are sums for one threshold, recorded in ``ws_meta``; a batch
counted under another threshold rebuilds them first (``shared/stores/sql/wordstat_privacy.py``), and a read
under another threshold than the recorded one sums the cells instead.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["CellKey", "Change", "Privacy", "published", "visible_changes"]

#: a cell's key as the store makes it: (query, month, region, device) or (host, month, query)
CellKey = tuple[object, ...]
#: one cell touched by a batch: (qid, month, region, device, count before, count after, offset, lift)
Change = tuple[int, int, str, str, int, int, int, int]


@dataclass(frozen=True, slots=True)
class Privacy:
    """How a batch's new cells are hidden: the threshold and the noise (``wordstat.privacy_*``)."""

    threshold: int
    #: a new cell's offset is drawn from 0..noise; 0: exact counts (tools and tests that count by hand)
    noise: int = 0
    #: the offset of a new cell, from its key; None: uniform from 0..noise (``secrets``: not guessable)
    draw: Callable[[CellKey], int] | None = None

    @property
    def lift(self) -> int:
        """Added to a published cell's count less its offset: the offset's mean, rounded down."""
        return self.noise // 2

    def offset(self, cell: CellKey) -> int:
        """A new cell's secret offset."""
        if self.draw is not None:
            return self.draw(cell)
        return secrets.randbelow(self.noise + 1) if self.noise else 0


def published(n: int, hide: int, lift: int, threshold: int) -> int:
    """What a cell of ``n`` searches publishes: 0 (hidden), or ``n - hide + lift``."""
    return n - hide + lift if n - hide >= threshold else 0


def visible_changes(
    changes: Iterable[Change], keys_of: Mapping[int, Sequence[str]], threshold: int
) -> tuple[list[tuple[str, int, str, str, int]], list[tuple[int, int]]]:
    """What a batch's cell changes add to the counters of published searches, keys sorted (no deadlocks):
    (lemma or lemma set, month, region, device, added) rows, and (qid, added) to each query's total.

    ``keys_of`` maps a query to the lemmas and lemma sets it is counted under. A cell adds what it
    publishes after the batch less what it published before: nothing while hidden, all of it when it
    appears, the batch's searches after."""
    lemmas: dict[tuple[str, int, str, str], int] = {}
    totals: dict[int, int] = {}
    for qid, month, region, device, before, after, hide, lift in changes:
        added = published(after, hide, lift, threshold) - published(before, hide, lift, threshold)
        if not added:
            continue
        totals[qid] = totals.get(qid, 0) + added
        for key in keys_of[qid]:
            cell = (key, month, region, device)
            lemmas[cell] = lemmas.get(cell, 0) + added
    return sorted((*k, n) for k, n in lemmas.items()), sorted(totals.items())
