"""Words, folding and stems: what the index and the queries agree on."""

from __future__ import annotations

import random
import re

import pytest

from shared.search.analysis import detect_lang, fold, page_lang, stem, stems, words


def test_russian_forms_share_a_stem() -> None:
    assert {stem(w) for w in ("мост", "мосты", "мостом", "мостами")} == {"мост"}


def test_english_forms_share_a_stem() -> None:
    assert stem("bridges") == stem("bridge")
    assert stem("running") == stem("runs") == "run"


def test_yo_and_case_fold() -> None:
    assert fold("Ёлка ЁЖ") == "елка еж"
    assert stem(fold("Ёлки")) == stem("елки")


def test_words_split_on_punctuation_hyphens_and_underscores() -> None:
    assert words("Интернет-магазин «Ёлочка»: snake_case, 2024!") == [
        "интернет",
        "магазин",
        "елочка",
        "snake",
        "case",
        "2024",
    ]


def test_mixed_script_page_is_stemmed_word_by_word() -> None:
    assert stems(words("Новые мосты and bridges")) == ["нов", "мост", "and", "bridg"]
    assert stems(["мостами", "bridges"]) == ["мост", "bridg"]


@pytest.mark.parametrize(
    ("declared", "text", "lang"),
    [
        ("ru-RU", "English text only", "ru"),
        ("en_us", "", "en"),
        (None, "Мосты через реку and a little English", "ru"),
        (None, "Bridges over the river, и немного", "en"),
        ("", "", "en"),
        ("not a language", "Москва", "ru"),
    ],
)
def test_page_language(declared: str | None, text: str, lang: str) -> None:
    assert page_lang(declared, text) == lang


def test_detect_lang_reads_letters_only() -> None:
    assert detect_lang("12345 !!!") == "en"


def _reference_lang(text: str) -> str:
    """The rule spelled out with one regex match per letter (what detect_lang counted before it counted bytes)."""
    head = text[:4000]
    cyrillic = len(re.findall(r"[\u0400-\u04ff]", head))
    latin = len(re.findall(r"[A-Za-z]", head))
    if cyrillic + latin == 0:
        return "en"
    return "ru" if cyrillic / (cyrillic + latin) >= 0.3 else "en"


@pytest.mark.parametrize(
    "text",
    [
        "ЖЖЖabcdefg",  # 3 of 10 letters Cyrillic: exactly the share, Russian
        "ЖЖabcdefgh",  # 2 of 10: English
        "\u0400\u04ffabcde",  # the block's first and last letters count
        "\u03ff\u0500\u0500\u0500abc",  # Greek and Cyrillic Supplement are not Cyrillic here
        "ёЁ Ӿ Ѐ — «ёлка»日本語 🙂 abc",
        "\ud800\udfffЖЖЖЖ ab",  # lone surrogates (a broken source's text) neither count nor fail
        "x" * 3999 + "ЖЖЖЖЖЖ",  # only the first 4,000 characters are read
        "",
    ],
)
def test_detect_lang_counts_as_the_rule_says(text: str) -> None:
    assert detect_lang(text) == _reference_lang(text)


def test_detect_lang_agrees_with_the_rule_on_random_text() -> None:
    rng = random.Random(13)
    alphabet = "abcXYZ ЖжЁёӾ\u0400\u04ff\u0500\u03ff日1 ,.\ud800🙂"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        assert detect_lang(text) == _reference_lang(text), repr(text)
