"""Every Wordstat operator against frequencies counted by hand over a small set of searches."""

from __future__ import annotations

import re

import pytest

from shared.wordstat.lemmas import analyze, normalize_query
from shared.wordstat.operators import WordstatSyntaxError, matches, parse

#: counted searches: query -> how often it was searched
SEARCHES = {
    "купить слона": 10,
    "куплю слонов": 7,
    "купить слона в москве": 5,
    "купить слона дешево": 3,
    "продать слона": 4,
    "заказать слона": 2,
    "слон купить": 6,
    "купить розового слона": 1,
    "купить слона бесплатно": 2,
    "купить бесплатно слона": 1,
    "работа на дому": 8,
    "работа по дому": 9,
    "работа дома": 4,
    "билеты из москвы в париж": 11,
    "билеты из парижа в москву": 12,
    "buy elephant": 3,
    "buying elephants": 2,
    "elephant": 5,
    "стали лучше": 1,
    "сталь цена": 3,
    "стать сталью": 2,
    "стать врачом": 2,
}


def frequency(query: str) -> int:
    parsed = parse(query)
    return sum(n for q, n in SEARCHES.items() if matches(parsed, analyze(normalize_query(q))))


#: (operator query, its frequency counted by hand over SEARCHES, how)
CASES = [
    ("купить слона", 35, "any form, more words, any order: 10+7+5+3+6+1+2+1"),
    ("Купить СЛОНА", 35, "case does not matter"),
    ('"купить слона"', 23, "no other words: купить слона 10 + куплю слонов 7 + слон купить 6"),
    ("!купить слона", 28, "this form of купить: 35 less куплю слонов 7"),
    ('"!купить слона"', 16, "phrase and form: купить слона 10 + слон купить 6"),
    ("[купить слона]", 29, "купить before слона: 35 less слон купить 6"),
    ("[слона купить]", 6, "only слон купить"),
    ("(купить|заказать) слона", 37, "35 + заказать слона 2"),
    ("(купить|продать|заказать) слона", 41, "35 + 4 + 2"),
    ("купить|продать слона", 39, "a top-level | is one group: 35 + 4"),
    ("купить слона -дешево", 32, "35 less купить слона дешево 3"),
    ("купить слона -бесплатно -дешево", 29, "35 less 3, 2 and 1"),
    ("купить слона -!бесплатного", 35, "no search has that form"),
    ("слона -дешево", 38, "one word less another: слон's 41 (35 + 4 + 2) less купить слона дешево 3"),
    ("слона -купить -москва", 6, "41 less every купить (35; купить слона в москве among them): 4 + 2"),
    ("слона -!слонов", 34, "the word less one of its own forms: 41 less куплю слонов 7"),
    ("слона -слонов", 0, "the word less itself in another form: nothing is left"),
    ("сталь -цена", 3, "a word less another: стали лучше 1 + стать сталью 2"),
    ("(продать|что) слона", 41, "что is a function word: слона alone (41), продать слона among it"),
    ("(продать|заказать|купить слона) слона", 6, "4 + 2; купить слона слона needs two слон: none"),
    ("(слона|слонов) -дешево", 38, "two equal variants count once: 41 less 3"),
    ("работа на дому", 21, "на is a function word, dropped: 8 + 9 + 4"),
    ("работа +на дому", 8, "на fixed: only работа на дому"),
    ('"работа дому"', 21, "function words do not break a phrase: 8 + 9 + 4"),
    ('"работа +на дому"', 8, "the fixed на must be there"),
    ("[из москвы в париж]", 11, "order and function words inside brackets"),
    ("москва париж", 23, "any order: 11 + 12"),
    ("купить купить", 0, "each query word needs a word of its own"),
    ("buy elephant", 5, "English forms: buy elephant 3 + buying elephants 2"),
    ('"elephant"', 5, "elephant alone"),
    ("!elephants", 2, "this form only"),
    ("сталь", 6, "homonyms count under both lemmas: стали лучше 1 + сталь цена 3 + стать сталью 2"),
    ("стать", 5, "стали is also a form of стать: стали лучше 1 + стать сталью 2 + стать врачом 2"),
    ("стали", 8, "a homonym: a search with сталь or стать, each once (not 6 + 5): 1 + 3 + 2 + 2"),
    ("стали -цена", 5, "a homonym less another word: 8 less сталь цена 3"),
    ("стали -лучше", 7, "a homonym less a homonym: 8 less стали лучше 1"),
    ("стали -сталь", 2, "a homonym less one of its lemmas: стать врачом 2 (стали is сталь too)"),
]


@pytest.mark.parametrize(("query", "expected", "why"), CASES)
def test_frequency_with_operators(query: str, expected: int, why: str) -> None:
    assert frequency(query) == expected, why


def test_a_query_matching_two_alternatives_counts_once() -> None:
    # купить 35 (every купить search has слона too) and слона 41: their union, not their sum
    assert frequency("(купить|слона)") == 41


def test_canonical_text() -> None:
    assert parse('  "( Купить | заказать )  [слона  дёшево]"   -!бесплатно ').text == (
        '"(купить|заказать) [слона дешево]" -!бесплатно'
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "no word to count"),
        ("-дешево", "no word to count"),
        ("в на", "no word to count"),
        ('"купить слона', "expected '\"'"),
        ("(купить|заказать слона", "expected ')'"),
        ("[купить слона", "expected ']'"),
        ("купить ] слона", "cannot stand here"),
        ("[ ] слона", "holds no word"),
        ('"купить" слона', "after a quoted phrase"),
        ("!!", "the query ended too early"),
        ("|слона", "'|' needs a word before it"),
        ("слона|", "'|' needs a word after it"),
        ("(купить|) слона", "'|' needs a word after it"),
        ("(а|б) (в|г) (д|е) (ж|з) (и|к) (л|м) (н|о)", "more than 64 variants"),
        (" ".join(["слово"] * 17), "at most 16 words"),
    ],
)
def test_syntax_errors_say_where_and_what(query: str, message: str) -> None:
    with pytest.raises(WordstatSyntaxError, match=re.escape(message)):
        parse(query)


def test_normalize_drops_excluded_words_and_punctuation() -> None:
    assert normalize_query('Мосты* "Москвы" -пробки, ёлки!') == "мосты москвы елки"
