"""The query-statistics SQL both engines share (DESIGN.md section 4; contract: ``wordstat.py``).

Statements use ``?`` placeholders (PostgreSQL's runner numbers them). A list
parameter is the one thing the engines spell differently — SQLite ``IN (?, ?)``,
PostgreSQL ``= ANY(?::text[])`` — so builders take the engine's ``InList``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.stores.wordstat import Selection

__all__ = [
    "LEMMA_WEIGHTS",
    "InList",
    "candidates_sql",
    "order_groups",
]

#: (column, values) -> (SQL condition, its parameters)
InList = Callable[[str, Sequence[str]], tuple[str, list[object]]]

#: searches per lemma (all months), to start a join from the rarest word
LEMMA_WEIGHTS = "SELECT lemma, sum(n) FROM ws_lemma_counts WHERE {cond} GROUP BY lemma"


def order_groups(groups: Sequence[tuple[str, ...]], weights: dict[str, int]) -> list[tuple[str, ...]]:
    """The required words, the one with the fewest searches first: the join reads its postings and probes
    the others' (a word never searched has no postings: the join ends at once)."""
    return sorted(groups, key=lambda g: (sum(int(weights.get(lemma, 0)) for lemma in g), g))


def candidates_sql(groups: Sequence[tuple[str, ...]], sel: Selection, in_list: InList) -> tuple[str, list[object]]:
    """SQL selecting the distinct ``qid`` of ``sel`` (``groups``: its required words, ordered), and its
    parameters in order. ``CROSS JOIN`` makes SQLite keep the order (the rarest word outermost, each
    other word an index probe per row); PostgreSQL plans it by its statistics."""
    conds: list[str] = []
    params: list[object] = []
    for i, g in enumerate(groups):
        cond, p = in_list(f"t{i}.lemma", g)
        conds.append(cond)
        params.extend(p)
        if i:
            conds.append(f"t{i}.qid = t0.qid")
        if sel.max_content is not None:
            conds.append(f"t{i}.content <= ?")
            params.append(sel.max_content)
    if sel.minus:
        cond, p = in_list("m.lemma", sel.minus)
        conds.append(f"NOT EXISTS (SELECT 1 FROM ws_terms m WHERE m.qid = t0.qid AND {cond})")
        params.extend(p)
    tables = " CROSS JOIN ".join(f"ws_terms t{i}" for i in range(len(groups)))
    return f"SELECT DISTINCT t0.qid AS qid FROM {tables} WHERE {' AND '.join(conds)}", params
