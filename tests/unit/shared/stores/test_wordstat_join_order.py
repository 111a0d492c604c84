"""Which word a wordstat join starts from (``shared/stores/sql/wordstat.py``, ``order_groups``)."""

from __future__ import annotations

from collections.abc import Sequence

from shared.stores.sql.wordstat import POSTINGS_CAP, order_groups, weights_sql


def test_a_common_form_goes_after_a_rarer_word() -> None:
    """``!карсаман черно``: a form has no searches of its own counted (``ws_lemma_counts`` holds lemmas),
    so by searches it looked the rarest and the join read its 34,632 entries, probing черный for each;
    by index entries черно|черный (8,786) comes first."""
    groups = [("=карсаман",), ("черно", "черный")]
    weights = {"черно": 50_920, "черный": 148_860}
    assert order_groups(groups, weights, [POSTINGS_CAP, 8_786]) == [("черно", "черный"), ("=карсаман",)]


def test_two_words_past_the_cap_go_by_their_searches() -> None:
    groups = [("весь", "все"), ("карсаман",)]
    weights = {"весь": 227_081, "все": 175_208, "карсаман": 1_122_423}
    assert order_groups(groups, weights, [POSTINGS_CAP, POSTINGS_CAP]) == [("весь", "все"), ("карсаман",)]
    assert order_groups(groups, weights, [POSTINGS_CAP, 40]) == [("карсаман",), ("весь", "все")]


def test_a_word_never_counted_comes_first() -> None:
    """No entries: the join ends at once."""
    assert order_groups([("слон",), ("жираф",)], {"слон": 9}, [7, 0]) == [("жираф",), ("слон",)]


def test_searches_are_read_only_to_break_a_tie_of_two_common_words() -> None:
    def in_list(column: str, values: Sequence[str]) -> tuple[str, list[object]]:
        return f"{column} IN ({', '.join('?' * len(values))})", list(values)

    groups = [("весь", "все"), ("карсаман",)]
    assert weights_sql(groups, [POSTINGS_CAP, 40], in_list) is None
    tie = weights_sql(groups, [POSTINGS_CAP, POSTINGS_CAP], in_list)
    assert tie is not None
    assert tie[1] == ["весь", "все", "карсаман"]
    assert "lemma IN (?, ?, ?)" in tie[0]
