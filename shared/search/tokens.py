"""What the search index holds for a word and for a text (docs/architecture.md section 3, "frontend" search).

Index and query go through this one analyzer, the one Wordstat uses
(``morphology.py``): a word's **terms** are

* a Russian word the dictionary knows: every lemma of every parse, most likely
  first ("люди" → человек; "стали" → стать, сталь; "дня" → день), so every form
  of a word finds every other, irregular ones included;
* any other word — English, a Russian word the dictionary does not know (a
  name, a neologism: its lemmas would be guesses, different for each form),
  digits — its Snowball stem (``analysis.stem``), as before lemmas.

A text's **stream** (``stream``) is what the SQLite index stores per column and
what PostgreSQL's ``tsvector`` is built from: first every word's first term, in
the text's order, so a phrase ("красная площадь") is those terms next to each
other; then, after ``SEPARATOR`` (a token no query has, so no phrase spans the
two parts), the other terms of the ambiguous words. A word's term counts once
per occurrence of a word that has it, wherever it stands, which is what BM25's
term frequency reads. Words are cached (``morphology.parse``; the stems'
Snowball calls are cheap).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from shared.search.analysis import WORD_RE, stem, words
from shared.search.morphology import is_cyrillic, parse

__all__ = ["MAX_INDEX_CHARS", "SEPARATOR", "Stream", "stream", "stream_of", "terms"]

#: characters of a page's text the index reads: a word past them is not found (its snippet scan reads
#: 100,000, and a page is seldom longer); it bounds a hostile page's cost and PostgreSQL's tsvector
#: (1 MB at most: 200,000 characters of the shortest words stay under it)
MAX_INDEX_CHARS = 200_000
#: between a stream's first terms and the others: a private-use character, which FTS5's tokenizer keeps
#: as a token and no word (letters and digits) ever is
SEPARATOR = "\ue001"
#: distinct words whose terms stay in memory
_CACHE_WORDS = 200_000


@lru_cache(maxsize=_CACHE_WORDS)
def terms(folded: str) -> tuple[str, ...]:
    """The index terms of one folded word (the module docstring)."""
    if is_cyrillic(folded):
        lemmas, known = parse(folded)
        # a normal form is one word in the dictionary; were one not (a hyphen), the index would split it
        if known and all(WORD_RE.fullmatch(lemma) for lemma in lemmas):
            return lemmas
    return (stem(folded),)


class Stream:
    """A text's terms as the index holds them: ``first`` (one per word, in order) and ``more``."""

    __slots__ = ("first", "more")

    def __init__(self, first: list[str], more: list[str]) -> None:
        self.first = first
        self.more = more

    @property
    def tokens(self) -> list[str]:
        """The stream as one token list (``SEPARATOR`` between the parts when there is a second)."""
        return [*self.first, SEPARATOR, *self.more] if self.more else self.first

    def __len__(self) -> int:
        return len(self.first) + (len(self.more) + 1 if self.more else 0)


def stream(text: str) -> Stream:
    """The index stream of ``text`` (its first ``MAX_INDEX_CHARS`` characters)."""
    return stream_of(words(text[:MAX_INDEX_CHARS]))


def stream_of(folded: Sequence[str]) -> Stream:
    """The index stream of a text's folded words."""
    first: list[str] = []
    more: list[str] = []
    for word in folded:
        t = terms(word)
        first.append(t[0])
        if len(t) > 1:
            more.extend(t[1:])
    return Stream(first, more)
