""" "Did you mean": the edit distance, and a correction from a vocabulary (engine-free; the stores' in the contract)."""

from __future__ import annotations

from shared.search.query import parse_query
from shared.search.suggest import distance, suggest


def test_distance_counts_edits_and_neighbour_swaps_and_stops_at_the_limit() -> None:
    assert distance("мост", "мост", 2) == 0
    assert distance("холодильнек", "холодильник", 2) == 1
    assert distance("bridge", "brigde", 2) == 1  # a transposition is one edit
    assert distance("кот", "котенок", 2) == 3  # past the limit: limit + 1
    assert distance("abc", "xyz", 1) == 2


class _Vocab:
    def __init__(self, docs: dict[str, int]) -> None:
        self._docs = docs

    async def candidates(self, prefix: str, min_len: int, max_len: int, limit: int) -> list[str]:
        return [t for t in sorted(self._docs) if t.startswith(prefix) and min_len <= len(t) <= max_len][:limit]

    async def docs(self, term: str) -> int:
        return self._docs.get(term, 0)


async def test_the_nearest_term_on_the_most_pages_wins_and_known_words_stay() -> None:
    vocab = _Vocab({"холодильник": 5, "холодильный": 1, "доставка": 9, "кошка": 3, "кашка": 7})
    assert await suggest(parse_query("холодильнек доставка"), vocab) == "холодильник доставка"
    assert await suggest(parse_query("кошка"), vocab) is None  # in the index: nothing to correct
    # a word the index lacks is corrected even when it is a word: the nearest on the most pages
    assert await suggest(parse_query("кочка"), vocab) == "кошка"  # one letter from кошка, two from кашка
    assert await suggest(parse_query("кошкка"), vocab) == "кошка"
    assert await suggest(parse_query('"холодильнек" мост*'), vocab) == "холодильник мост*"
