"""The query-statistics SQL both engines share (docs/architecture.md section 4; contract: ``wordstat.py``).

Statements use ``?`` placeholders (PostgreSQL's runner numbers them). A list
parameter is the one thing the engines spell differently — SQLite ``IN (?, ?)``,
PostgreSQL ``= ANY(?::text[])`` — so builders take the engine's ``InList``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.stores.wordstat import Selection

__all__ = [
    "POSTINGS_CAP",
    "InList",
    "candidates_sql",
    "order_groups",
    "postings_sql",
    "weights_sql",
]

#: (column, values) -> (SQL condition, its parameters)
InList = Callable[[str, Sequence[str]], tuple[str, list[object]]]

#: searches per lemma (all months), to break a tie of two words past ``POSTINGS_CAP``
LEMMA_WEIGHTS = "SELECT lemma, sum(n) FROM ws_lemma_counts WHERE {cond} GROUP BY lemma"
#: index entries of a word counted up to this many: past it the word is common, and which of two such
#: words is rarer is left to their searches (``LEMMA_WEIGHTS``); counting costs ~0.5 ms per 10,000 (SQLite)
POSTINGS_CAP = 20_000


def postings_sql(groups: Sequence[tuple[str, ...]], in_list: InList) -> tuple[str, list[object]]:
    """SQL of (group's position, its index entries up to ``POSTINGS_CAP``) for each required word.

    What a join costs is the first word's entries (each probes the other words), and searches are a
    poor guess of that: a form (``!слона``, ``=слона``) has no searches counted of its own, and a
    common word's searches are many in few queries. Counted up to a cap, a rare word costs its few
    entries to count and a common one ``POSTINGS_CAP``."""
    parts: list[str] = []
    params: list[object] = []
    for i, g in enumerate(groups):
        cond, p = in_list("lemma", g)
        parts.append(
            f"SELECT {i} AS g, (SELECT count(*) FROM (SELECT 1 FROM ws_terms WHERE {cond} LIMIT {POSTINGS_CAP}) e)"
        )
        params.extend(p)
    return " UNION ALL ".join(parts), params


def weights_sql(
    groups: Sequence[tuple[str, ...]], postings: Sequence[int], in_list: InList
) -> tuple[str, list[object]] | None:
    """SQL of (lemma, searches) for the required words when their searches must break a tie -- two or
    more words past ``POSTINGS_CAP``, both common -- else None (their index entries decide alone)."""
    if sum(n >= POSTINGS_CAP for n in postings) < 2:
        return None
    cond, p = in_list("lemma", sorted({lemma for g in groups for lemma in g}))
    return LEMMA_WEIGHTS.format(cond=cond), p


def order_groups(
    groups: Sequence[tuple[str, ...]], weights: dict[str, int], postings: Sequence[int] | None = None
) -> list[tuple[str, ...]]:
    """The required words, the one with the fewest index entries first (``postings``, aligned with
    ``groups``), then the fewest searches: the join reads the first word's entries and probes the
    others' (a word never searched has no entries: the join ends at once)."""
    cost = list(postings) if postings is not None else [0] * len(groups)
    order = sorted(
        range(len(groups)),
        key=lambda i: (cost[i], sum(int(weights.get(lemma, 0)) for lemma in groups[i]), groups[i]),
    )
    return [groups[i] for i in order]


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
        if sel.min_content is not None:
            conds.append(f"t{i}.content >= ?")
            params.append(sel.min_content)
    if sel.minus:
        cond, p = in_list("m.lemma", sel.minus)
        conds.append(f"NOT EXISTS (SELECT 1 FROM ws_terms m WHERE m.qid = t0.qid AND {cond})")
        params.extend(p)
    tables = " CROSS JOIN ".join(f"ws_terms t{i}" for i in range(len(groups)))
    return f"SELECT DISTINCT t0.qid AS qid FROM {tables} WHERE {' AND '.join(conds)}", params
