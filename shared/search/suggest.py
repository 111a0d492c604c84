""" "Did you mean": a query that found nothing, its unknown words corrected from the index's own vocabulary
(docs/architecture.md section 3, "frontend" search).

Only a word none of whose terms is in the index is corrected (a word the index
has is never "fixed" into another). Its candidates are the index's terms that
begin with its first two letters, or with its first letter and have its length
(a typo in the second letter), at most two letters longer or shorter
(``Vocabulary.candidates``). The nearest by edit distance wins — insertions,
deletions, substitutions and transpositions of neighbours each count one, at
most one for a word of up to four letters and two for a longer one, compared
with the word as typed and with its stem — and among the nearest, the term on
the most pages. Nothing is suggested when no word could be corrected; the
store runs the corrected query before it offers it (``SearchResults.suggestion``),
so a suggestion always finds something.

A term is a lemma or a stem (``tokens.py``): a Russian lemma is shown as it is
(the dictionary's word, "холодильник"), a stem with the rest of the typed word
after it ("brigde": its stem "brigd" corrected to "bridg", shown "bridge").
"""

from __future__ import annotations

from typing import Protocol

from shared.search.analysis import stem
from shared.search.morphology import is_cyrillic
from shared.search.query import SearchQuery, Term
from shared.search.stopwords import is_stop_word
from shared.search.tokens import terms

__all__ = ["Vocabulary", "distance", "suggest"]

#: candidates a word's correction reads at most (a vocabulary range scan, then a distance each)
MAX_CANDIDATES = 5000
#: the nearest candidates whose page counts are compared
_FINALISTS = 8


class Vocabulary(Protocol):
    async def candidates(self, prefix: str, min_len: int, max_len: int, limit: int) -> list[str]:
        """Index terms starting with ``prefix`` of ``min_len`` to ``max_len`` characters (at most ``limit``)."""
        ...

    async def docs(self, term: str) -> int:
        """Pages that have ``term`` (0: not in the index)."""
        ...


def distance(a: str, b: str, limit: int) -> int:
    """The optimal string alignment distance of ``a`` and ``b``, or ``limit + 1`` when it is more than ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                d = min(d, prev2[j - 2] + 1)
            cur[j] = d
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1] if prev[-1] <= limit else limit + 1


def _limit(word: str) -> int:
    return 1 if len(word) <= 4 else 2


async def _correct(term: Term, vocab: Vocabulary) -> str | None:
    """The shown correction of one unknown word, or None."""
    word, root = term.word, stem(term.word)
    limit = _limit(word)
    lo, hi = max(1, len(root) - limit), len(word) + limit
    found = dict.fromkeys(await vocab.candidates(word[:2], lo, hi, MAX_CANDIDATES))
    found.update(dict.fromkeys(await vocab.candidates(word[:1], len(root), len(word), MAX_CANDIDATES)))
    ranked = sorted((min(distance(word, c, limit), distance(root, c, limit)), c) for c in found)
    near = [c for d, c in ranked if d <= limit and d == ranked[0][0]][:_FINALISTS]
    best, best_docs = None, 0
    for candidate in near:
        if (n := await vocab.docs(candidate)) > best_docs:
            best, best_docs = candidate, n
    if best is None:
        return None
    if is_cyrillic(best) and terms(best)[0] == best:  # a dictionary lemma: a word to show as it is
        return best
    return best + word[len(root) :] if word.startswith(root) else best


async def suggest(query: SearchQuery, vocab: Vocabulary) -> str | None:
    """The query with its unknown words corrected (its canonical text), or None when none could be."""
    changed = False
    words: dict[str, str] = {}
    for t in query.terms:  # an excluded typo excludes nothing: it is not why nothing was found
        if t.prefix or t.word in words or is_stop_word(t.word):
            continue
        if any([await vocab.docs(x) for x in t.lemmas or (t.stem,)]):
            continue
        fixed = await _correct(t, vocab)
        if fixed is not None and fixed != t.word:
            words[t.word] = fixed
            changed = True
    if not changed:
        return None
    out = query.text
    for typed, fixed in words.items():
        out = " ".join(_swap(part, typed, fixed) for part in out.split(" "))
    return out


def _swap(part: str, typed: str, fixed: str) -> str:
    """One space-separated part of a canonical query text with ``typed`` replaced (its marks kept)."""
    core = part.strip('"+-*')
    if core != typed:
        return part
    start = part.index(core)
    return part[:start] + fixed + part[start + len(core) :]
