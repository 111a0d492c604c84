"""Lemmas of Russian words: the one dictionary of search and Wordstat (docs/architecture.md section 3,
"frontend" search and "wordstat").

A stemmer cannot say that "люди" and "человек" are one word, nor "шёл" and
"идти", "дня" and "день" (Snowball: "люд" / "человек", "шел" / "идт"); a
dictionary can. pymorphy3 (OpenCorpora's dictionary with the C DAWG reader: a
few microseconds a word once loaded, ~0.4 s to load once a process) gives every
parse of a form; ``parse`` keeps the normal form of each, folded
(``analysis.fold``), most likely first: "стали" is both "стать" and "сталь".
Whether any parse is a dictionary word is said too, so that a caller can tell
a real lemma from the dictionary's guess for an unknown word ("коворкинга").

``forms`` is the other direction, every form of a lemma (its lexemes), for a
highlighter that must find "люди" in a text for the query word "человек".

Both are cached per word: text and queries repeat their words.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from shared.search.analysis import fold

__all__ = ["forms", "is_cyrillic", "parse"]

#: distinct words whose analysis stays in memory (~200 bytes each)
_CACHE_WORDS = 200_000
#: lemmas whose forms stay in memory (a query word's: tens to a few hundred forms each)
_CACHE_LEMMAS = 20_000

_lock = threading.Lock()
_morph: Any = None


def _analyzer() -> Any:
    global _morph
    if _morph is None:
        with _lock:
            if _morph is None:
                import pymorphy3

                _morph = pymorphy3.MorphAnalyzer()
    return _morph


def is_cyrillic(word: str) -> bool:
    """Whether ``word`` has a letter of the Cyrillic block (the dictionary's words have)."""
    return any("\u0400" <= ch <= "\u04ff" for ch in word)


@lru_cache(maxsize=_CACHE_WORDS)
def parse(form: str) -> tuple[tuple[str, ...], bool]:
    """The folded normal forms of every parse of the folded Russian ``form`` (most likely first, each
    once) and whether the dictionary knows the form (else they are its guesses)."""
    parses = _analyzer().parse(form)
    lemmas = tuple(dict.fromkeys(fold(p.normal_form) for p in parses)) or (form,)
    return lemmas, any(p.is_known for p in parses)


@lru_cache(maxsize=_CACHE_LEMMAS)
def forms(lemma: str) -> frozenset[str]:
    """Every folded form of the dictionary's lexemes whose normal form is ``lemma`` (the lemma itself at least)."""
    out = {lemma}
    for p in _analyzer().parse(lemma):
        if fold(p.normal_form) == lemma and p.is_known:
            out.update(fold(f.word) for f in p.lexeme)
    return frozenset(out)
