"""The search box's query language (docs/architecture.md section 3, "frontend" search).

What a user may type, parsed once into a ``SearchQuery`` that both store engines
compile (SQLite: an FTS5 MATCH over stems; PostgreSQL: a ``to_tsquery`` text):

* ``мост bridges`` — every word must match, in any form: a page matches a word
  when one of its words shares a term with it (``tokens.terms``: the lemmas of a
  Russian word, every one of an ambiguous form; the stem of any other word);
* ``мост*`` — a prefix: any word with a term that starts with the stem of ``мост``
  (so ``мосты*`` finds "мостовая" too);
* ``"красная площадь"`` — a phrase: these words next to each other, in this
  order, each in any form (their first terms, ``tokens.py``);
* ``-пробки`` — pages with this word (in any form) are left out;
* ``+в`` — a function word kept: others ("в", "the") are dropped from a query that
  has other words, since they match nearly every page and only cost time.

Anything else is text: unknown punctuation separates words, an unbalanced quote
ends at the end of the query, FTS or tsquery syntax typed by a user means nothing.
At most ``MAX_TERMS`` words count; the rest are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shared.search.analysis import WORD_RE, fold, stem
from shared.search.stopwords import is_stop_word
from shared.search.tokens import terms

__all__ = ["MAX_TERMS", "SearchQuery", "Term", "parse_query"]

#: words beyond this add nothing to relevance and only cost time
MAX_TERMS = 16
#: a quoted phrase, a word with its operator marks, or anything else (skipped)
_TOKEN = re.compile(r'"(?P<phrase>[^"]*)"?|(?P<op>[-+]?)(?P<word>[^\W_]+)(?P<star>\*?)')


@dataclass(frozen=True, slots=True)
class Term:
    """One word of a query: as typed (folded), its stem, whether it is a prefix, and its index terms."""

    word: str
    stem: str
    prefix: bool = False
    #: ``tokens.terms`` of the word, most likely first (a prefix matches on its stem instead)
    lemmas: tuple[str, ...] = ()

    @property
    def first(self) -> str:
        """The term a phrase matches on (``tokens.py``: a stream's first terms)."""
        return self.lemmas[0] if self.lemmas else self.stem


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """A parsed query. ``groups``: each must match — one word, or a phrase of several in order."""

    groups: tuple[tuple[Term, ...], ...] = ()
    excluded: tuple[Term, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing to look for (no positive word): the search answers no results."""
        return not self.groups

    @property
    def terms(self) -> tuple[Term, ...]:
        """Every positive word, in order (what a snippet highlights)."""
        return tuple(t for g in self.groups for t in g)

    @property
    def text(self) -> str:
        """The query written back in its canonical form (for display and query statistics)."""
        parts = []
        for g in self.groups:
            if len(g) > 1:
                parts.append('"' + " ".join(t.word for t in g) + '"')
            else:
                keep = "+" if is_stop_word(g[0].word) else ""
                parts.append(keep + g[0].word + ("*" if g[0].prefix else ""))
        parts.extend("-" + t.word for t in self.excluded)
        return " ".join(parts)


def _term(word: str, prefix: bool = False) -> Term:
    folded = fold(word)
    return Term(word=folded, stem=stem(folded), prefix=prefix, lemmas=terms(folded))


def parse_query(text: str) -> SearchQuery:
    """Parse what the user typed. Never fails: any text is a (possibly empty) query."""
    groups: list[tuple[tuple[Term, ...], bool]] = []  # (group, kept on purpose)
    excluded: list[Term] = []
    count = 0
    for m in _TOKEN.finditer(text):
        if count >= MAX_TERMS:
            break
        phrase = m.group("phrase")
        if phrase is not None:
            words = WORD_RE.findall(phrase)[: MAX_TERMS - count]
            if words:
                groups.append((tuple(_term(w) for w in words), True))
                count += len(words)
            continue
        op, word, star = m.group("op"), m.group("word"), m.group("star")
        count += 1
        if op == "-":
            excluded.append(_term(word))
        else:
            groups.append(((_term(word, prefix=bool(star)),), op == "+" or bool(star)))
    meaningful = [g for g, kept in groups if kept or len(g) > 1 or not is_stop_word(g[0].word)]
    # a query of function words only ("the who") keeps them: there is nothing else to look for
    chosen = meaningful or [g for g, _ in groups]
    # a word both wanted and excluded ("мост -мосты") is wanted: excluding it would leave nothing
    positive = {x for g in chosen for t in g for x in t.lemmas}
    return SearchQuery(groups=tuple(chosen), excluded=tuple(t for t in excluded if positive.isdisjoint(t.lemmas)))
