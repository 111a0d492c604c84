"""The search box's language: words, prefixes, phrases, exclusions and function words."""

from __future__ import annotations

from shared.search.query import MAX_TERMS, parse_query


def test_words_are_folded_and_stemmed() -> None:
    q = parse_query("Мосты  BRIDGES")
    assert [(t.word, t.stem, t.prefix) for t in q.terms] == [("мосты", "мост", False), ("bridges", "bridg", False)]


def test_prefix_phrase_and_exclusion() -> None:
    q = parse_query('мост* "Красная площадь" -пробки')
    assert [len(g) for g in q.groups] == [1, 2]
    assert q.groups[0][0].prefix
    assert [t.word for t in q.groups[1]] == ["красная", "площадь"]
    assert [t.word for t in q.excluded] == ["пробки"]
    assert q.text == 'мост* "красная площадь" -пробки'


def test_function_words_are_dropped_unless_kept_or_alone() -> None:
    assert [t.word for t in parse_query("мосты в москве").terms] == ["мосты", "москве"]
    assert [t.word for t in parse_query("работа +на дому").terms] == ["работа", "на", "дому"]
    assert parse_query("работа +на дому").text == "работа +на дому"
    assert [t.word for t in parse_query("the the").terms] == ["the", "the"]


def test_operators_typed_by_users_mean_nothing_else() -> None:
    q = parse_query('NEAR(x y) OR c:d^2 "unclosed')  # "or" is a function word, dropped like "the"
    assert [t.word for t in q.terms] == ["near", "x", "y", "c", "d", "2", "unclosed"]
    assert parse_query("*** --- !!!").empty
    assert parse_query("-только -минус").empty


def test_an_excluded_word_that_is_also_wanted_is_dropped() -> None:
    q = parse_query("мост -мосты")
    assert [t.word for t in q.terms] == ["мост"]
    assert q.excluded == ()


def test_at_most_max_terms_count() -> None:
    q = parse_query(" ".join(f"слово{i}" for i in range(40)))
    assert len(q.terms) == MAX_TERMS
