"""Function words of Russian and English (docs/architecture.md section 3, "frontend" search; "wordstat").

One list for both users: search drops these from a query that has other words
(they match nearly every page and only cost time), and Wordstat leaves them out
of a query's lemma set unless the user fixes one with ``+`` — as Yandex does
for prepositions, conjunctions and particles.

Deliberately shorter than Snowball's stop lists: those also hold words that carry
meaning in a query ("два", "хорошо", "нет", "first"), which a user searching
"два капитана" or "first aid" expects to count. Words are folded (lower case,
ё → е), like every term the analyzer produces.
"""

from __future__ import annotations

__all__ = ["STOP_WORDS", "is_stop_word"]

_RUSSIAN = (
    # prepositions
    "в во на с со к ко у о об обо от ото из изо до по за под подо над надо при про для без безо перед"
    " через между среди около возле вокруг после"
    # conjunctions
    " и а но или либо да ни что чтобы чтоб как если когда хотя то ли же тоже также зато однако"
    # particles
    " не бы б ж вот вон лишь уж даже ведь разве неужели"
)
_ENGLISH = (
    "a an the and or but nor of at by for with about against between into through during before after"
    " above below to from up down in out on off over under as than so if then that this these those"
    " is are was were be been being am do does did it its"
)

#: every stop word, folded
STOP_WORDS: frozenset[str] = frozenset((_RUSSIAN + " " + _ENGLISH).split())


def is_stop_word(folded: str) -> bool:
    """Whether ``folded`` (already lower-cased, ё → е) is a function word."""
    return folded in STOP_WORDS
