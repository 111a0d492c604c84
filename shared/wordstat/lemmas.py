"""Words of counted queries and their lemmas (docs/architecture.md section 3, "wordstat").

Wordstat counts a query under every form of its words: "купить слона" also
counts "куплю слонов". A stemmer cannot say that "куплю" and "купить" are one
word (Snowball: "купл", "куп"), nor "люди" and "человек"; a dictionary can. So
Russian words get their **lemmas** from pymorphy3 (OpenCorpora's dictionary,
with the C DAWG reader: ~40 µs a word, ~0.4 s to load once), every normal form
of every parse: "стали" is both "стать" and "сталь", as Wordstat counts
homonyms under both (``shared/search/morphology.py``, the dictionary search uses
too). English and other Latin words get their Snowball stem,
which is what "any form" needs there ("bridges", "bridge"). Digits are themselves.

Queries repeat (their frequencies are what is counted), so each word's analysis
is cached: a steady stream of searches is analyzed from memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from shared.search.analysis import stem, words
from shared.search.morphology import is_cyrillic, parse
from shared.search.stopwords import is_stop_word

__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_WORDS", "Word", "analyze", "analyze_word", "normalize_query"]

#: words of a counted query beyond this are not counted (a pasted paragraph is not a query)
MAX_QUERY_WORDS = 16
#: characters of a counted query at most (the limit of ``SearchQueryEvent.query``)
MAX_QUERY_CHARS = 400
#: distinct words whose analysis stays in memory (~200 bytes each)
_CACHE_WORDS = 200_000


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a query: its folded form, its lemmas (most likely first), whether it is a function word."""

    form: str
    lemmas: tuple[str, ...]
    stop: bool


@lru_cache(maxsize=_CACHE_WORDS)
def analyze_word(form: str) -> Word:
    """The analysis of one folded word."""
    if is_cyrillic(form):
        lemmas = parse(form)[0]  # the dictionary's guesses for an unknown word too: what Wordstat counts
    elif form.isdigit():
        lemmas = (form,)
    else:
        lemmas = (stem(form),)
    return Word(form=form, lemmas=lemmas, stop=is_stop_word(form))


def normalize_query(text: str) -> str:
    """A search as it is counted: its folded words in order, without the words it excluded (``-word``).

    Search operators other than ``-`` (quotes, ``*``, ``+``) only shape how pages are
    matched; the words are what the user asked for.
    """
    kept = [tok for tok in text.split() if not tok.startswith("-")]
    out = " ".join(words(" ".join(kept))[:MAX_QUERY_WORDS])
    return out if len(out) <= MAX_QUERY_CHARS else out[:MAX_QUERY_CHARS].rsplit(" ", 1)[0]


def analyze(normalized: str) -> tuple[Word, ...]:
    """The words of a normalized query (``normalize_query``), analyzed."""
    return tuple(analyze_word(w) for w in normalized.split()[:MAX_QUERY_WORDS])
