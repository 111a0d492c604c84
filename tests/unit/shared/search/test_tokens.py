"""The index's terms: a known Russian word's every lemma, any other word's stem; a text's stream."""

from __future__ import annotations

from shared.search.analysis import stem
from shared.search.tokens import MAX_INDEX_CHARS, SEPARATOR, stream, terms


def test_irregular_forms_share_a_lemma_a_stemmer_misses() -> None:
    for a, b in (("кошка", "кошек"), ("человек", "люди"), ("идти", "шел"), ("день", "дня"), ("ребенок", "дети")):
        assert stem(a) != stem(b)
        assert set(terms(a)) & set(terms(b)), (a, b)


def test_an_ambiguous_form_has_every_lemma_most_likely_first() -> None:
    assert terms("стали")[:1] == ("стать",)
    assert "сталь" in terms("стали")


def test_unknown_russian_english_and_digits_are_stems() -> None:
    assert terms("коворкинга") == (stem("коворкинга"),)  # the dictionary would only guess
    assert terms("bridges") == ("bridg",)
    assert terms("2026") == ("2026",)


def test_a_stream_puts_the_first_terms_in_order_then_the_others() -> None:
    s = stream("Стали дороже стали")
    assert s.first == ["стать", "дорогой", "стать"]
    assert SEPARATOR in s.tokens
    assert s.tokens.index(SEPARATOR) == 3  # after the words, before the other lemmas of "стали"
    assert s.tokens.count("сталь") == 2
    assert len(s) == len(s.tokens)
    plain = stream("мост через реку")
    assert plain.tokens == ["мост", "через", "река"]  # nothing ambiguous: no separator


def test_the_stream_reads_a_bounded_share_of_a_hostile_page() -> None:
    s = stream("слово " * (MAX_INDEX_CHARS // 3))
    assert len(s.first) == MAX_INDEX_CHARS // len("слово ") + 1
