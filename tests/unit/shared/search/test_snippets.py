"""Snippets mark whole words by their terms (lemmas, stems) and pick the passage that holds the most query words."""

from __future__ import annotations

from shared.search.query import parse_query
from shared.search.snippets import highlight, make_snippet


def _marked(text: str, query: str) -> list[str]:
    s = highlight(text, parse_query(query).terms)
    return [piece for piece, marked in s.parts() if marked]


def test_whole_words_only() -> None:
    # the defect this guards: "the" was marked inside "northern"
    assert _marked("The northern lights over the bay", "the lights") == ["lights"]
    assert _marked("northern", "the") == []


def test_marks_every_form_of_a_word() -> None:
    assert _marked("Мост, мосты и мостом; Ёлка и елки", "мост ёлка") == ["Мост", "мосты", "мостом", "Ёлка", "елки"]


def test_marks_irregular_forms_the_index_matches() -> None:
    # the index joins these by their lemmas; the highlighter finds them by the dictionary's forms
    assert _marked("Люди и человек; Шёл снег, идти далеко", "человек идти") == ["Люди", "человек", "Шёл", "идти"]
    assert _marked("Дети пошли в школу", "ребёнок") == ["Дети"]
    assert _marked("двух кошек и кошку", "кошка") == ["кошек", "кошку"]


def test_prefix_marks_longer_words() -> None:
    assert _marked("мостовая и мост, но не помост", "мост*") == ["мостовая", "мост"]


def test_passage_with_the_most_distinct_words_wins() -> None:
    filler = "Слово без смысла. " * 40
    text = filler + "Здесь только мост. " + filler + "Мост и площадь рядом. " + filler
    s = make_snippet(text, parse_query("мост площадь").terms, width=120)
    assert "Мост и площадь рядом" in s.text
    assert s.text.startswith("…")
    assert s.text.endswith("…")
    assert [p for p, m in s.parts() if m] == ["Мост", "площадь"]


def test_no_match_in_text_gives_its_start() -> None:
    s = make_snippet("Первые слова страницы. " * 30, parse_query("заголовок").terms, width=60)
    assert s.text.startswith("Первые слова")
    assert s.text.endswith("…")
    assert s.marks == ()
    assert len(s.text) <= 61


def test_passage_cuts_on_word_boundaries() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu"
    s = make_snippet(text, parse_query("kappa").terms, width=30)
    for word in s.text.strip("…").split():
        assert word in text.split()
    assert "kappa" in s.text


def test_short_text_is_whole_and_unmarked_spans_are_escaped_by_callers() -> None:
    s = make_snippet("<b>мост</b> & co", parse_query("мост").terms)
    assert s.text == "<b>мост</b> & co"
    assert s.parts() == [("<b>", False), ("мост", True), ("</b> & co", False)]


def test_marks_land_on_their_words_when_folding_changes_the_texts_length() -> None:
    # "İ" lower-cases to two characters: the words are then found in the text itself, at its own offsets
    text = "İİ İstanbul: МОСТЫ, Мостом и ёлки"
    assert len(text.lower()) != len(text)
    assert _marked(text, "мост ёлка") == ["МОСТЫ", "Мостом", "ёлки"]
    assert _marked("Istanbul: МОСТЫ, Мостом и ёлки", "мост ёлка") == ["МОСТЫ", "Мостом", "ёлки"]


def test_blocks_are_set_apart_and_a_leading_byline_is_skipped() -> None:
    # what the kvwriter's text gives (shared/pages/safehtml.py plain_text): one block a line
    card = "Чайник эмалированный, 2 л\n2 490 ₽\nСковорода чугунная 26 см\n3 190 ₽"
    assert make_snippet(card, parse_query("чайник").terms).text == (
        "Чайник эмалированный, 2 л · 2 490 ₽ · Сковорода чугунная 26 см · 3 190 ₽"
    )
    post = "Posted on 2026-11-26 by Sam Ashdown\nChisel on the stone\nFor years I used a honing guide."
    assert make_snippet(post, parse_query("honing").terms).text == (
        "Chisel on the stone · For years I used a honing guide."  # the heading apart, no byline first
    )
    assert make_snippet(post, parse_query("zzz").terms).text.startswith("Chisel on the stone")
    by_name = make_snippet(post, parse_query("ashdown").terms)
    assert by_name.text.startswith("Posted on")  # a byline the reader searched for stays
    assert [p for p, m in by_name.parts() if m] == ["Ashdown"]
    ru = "Автор: Иван Петров, 12 ноября\nНовый мост открыли утром."
    assert make_snippet(ru, parse_query("мост").terms).text == "Новый мост открыли утром."
    # a first block that is no byline stays: a sentence ends the block, so a space follows it
    assert make_snippet("Мост открыли.\nПо нему прошли.", parse_query("мост").terms).text == (
        "Мост открыли. По нему прошли."
    )
