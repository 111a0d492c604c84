"""Search snippets: the best passage of a page, with the matched words marked (docs/architecture.md s.3, search).

A word is marked only when it is a whole word that the index would match to a
query word: one of its terms (``tokens.terms``: lemmas, or the stem) is one of
the query word's, or, for a prefix ``мост*``, starts with the prefix's stem;
never letters inside another word ("the" is not marked in "northern").

The passage is the window of about ``SNIPPET_CHARS`` characters that holds the
most distinct query words, then the most matches; ties go to the earliest. It
starts and ends on word boundaries, with "…" where the text was cut. The text's
blocks (``safehtml.BLOCK_BREAK``: paragraphs, headings, captions, a card's
fields, a product's facts) are set apart by " · " where a block does not end a
sentence itself, so a heading never runs into the paragraph after it nor a name
into its price. A passage that would start with a byline ("Posted on … by …",
"Автор: …, 12 ноября") starts after it, unless the byline holds a query word.

Matching is done on terms, so it is as costly as analyzing every word: on a
long page that is most of a search's time. A regular expression (in C) finds
first the words that *could* match — those beginning with the first letters of
a form of a query word's lemma (the dictionary's forms: "человек" has "люди"),
or with a query stem less its last letter, since a Snowball stem is a prefix of
its word but for a final letter ("happy" → "happi") — and only those are analyzed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from shared.search.analysis import fold, stem
from shared.search.morphology import forms, is_cyrillic
from shared.search.query import Term
from shared.search.tokens import terms as terms_of

__all__ = ["SNIPPET_CHARS", "Snippet", "highlight", "make_snippet"]

#: the length of a passage (about two lines of a result list)
SNIPPET_CHARS = 240
#: how far into a page the passage is looked for: past this a page is seldom read, and it bounds the cost
_SCAN_CHARS = 100_000
#: context kept before the first matched word of a passage
_LEAD_CHARS = 40
#: what sets a block apart from the next in a snippet when it does not end a sentence itself
_BLOCK_SEPARATOR = " · "
#: a block ending in one of these runs on into the next with a space
_SENTENCE_END = frozenset(".!?…:;,")
_SOFT_BREAK = re.compile(r"(?<=[.!?…:;,])\n")
_BREAKS = re.compile(r"\s*\n\s*")
#: a first block this short that reads as a byline (a date, "by", "автор") is skipped at a passage's start
_BYLINE_CHARS = 120
_BYLINE = re.compile(
    r"^(?:posted|published|updated|written|by|автор|опубликовано|обновлено|текст|фото)\b"
    r"|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b"
    r"|\b\d{1,2}\s+(?:янв|фев|мар|апр|ма[йя]|июн|июл|авг|сен|окт|ноя|дек)"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b",
    re.IGNORECASE,
)
#: letters of a lemma's form that make a head of the pre-filter (shorter forms are heads whole)
_HEAD_LETTERS = 3
_NOT_WORD = re.compile(r"[\W_]")
_WORD_CHAR = re.compile(r"[^\W_]")


@dataclass(frozen=True, slots=True)
class Snippet:
    """A piece of plain text and the ``(start, end)`` spans in it to highlight."""

    text: str
    marks: tuple[tuple[int, int], ...] = ()

    def parts(self) -> list[tuple[str, bool]]:
        """The text cut into ``(piece, marked)`` pieces, for a template to escape and wrap."""
        out: list[tuple[str, bool]] = []
        pos = 0
        for start, end in self.marks:
            if start > pos:
                out.append((self.text[pos:start], False))
            out.append((self.text[start:end], True))
            pos = end
        if pos < len(self.text):
            out.append((self.text[pos:], False))
        return out


def _stem_head(stem_: str) -> str:
    return stem_[:-1] if len(stem_) > 1 else stem_


@functools.lru_cache(maxsize=20_000)
def _form_heads(lemma: str) -> frozenset[str]:
    """The beginnings of a dictionary lemma's forms: for each group of forms that share their first
    ``_HEAD_LETTERS`` letters, all that the group shares ("новост" for новость's; "челове" and "люд" for
    человек's), so that few words of a text are taken for a form and analyzed."""
    groups: dict[str, list[str]] = {}
    for f in forms(lemma):
        groups.setdefault(f[:_HEAD_LETTERS], []).append(f)
    return frozenset(_common(g) for g in groups.values())


def _common(words: list[str]) -> str:
    """The letters every one of ``words`` starts with (those of the first and the last in order are)."""
    first, last = min(words), max(words)
    n = 0
    while n < len(first) and first[n] == last[n]:
        n += 1
    return first[:n]


def _heads(term: Term) -> set[str]:
    """The beginnings one of which a word must have to match ``term`` (the module docstring)."""
    if term.prefix:
        return {_stem_head(term.stem)} if term.stem else set()
    out: set[str] = set()
    for lemma in term.lemmas or (term.stem,):
        found = _form_heads(lemma) if is_cyrillic(lemma) else frozenset()
        if len(found) > 1 or (found and len(forms(lemma)) > 1):  # a dictionary lemma: its forms' beginnings
            out.update(found)
        elif lemma:  # a stem: its word starts with it, but for a final letter
            out.add(_stem_head(lemma))
    # a head that starts with another is covered by it
    return {h for h in out if not any(h != o and h.startswith(o) for o in out)}


class _Matcher:
    """Finds the whole words of a text that match a query's terms, with the index of the term."""

    def __init__(self, terms: Sequence[Term]) -> None:
        self.terms = [t for t in terms if t.stem or t.lemmas]
        self._lemmas = [frozenset(t.lemmas) for t in self.terms]
        heads = sorted(set().union(*(_heads(t) for t in self.terms)), key=len, reverse=True)
        # ё and е are one letter to the index: the pattern accepts either where the stem has е
        alts = "|".join(re.escape(h).replace("е", "[её]") for h in heads)
        # no look-behind for the word's start: tried at every letter it was 2/3 of a snippet's time; a match
        # that starts inside a word is dropped below (it runs to that word's end, so it hides no real one)
        self.pattern = re.compile(rf"(?:{alts})[^\W_]*", re.IGNORECASE) if heads else None
        # the same words found in the folded text, whose letters sit where the text's do: a pattern of plain
        # letters, case-sensitive, is tried at each position 2.5 times faster than the case-blind one
        self.folded = re.compile("(?:" + "|".join(re.escape(h) for h in heads) + r")[^\W_]*") if heads else None
        self._memo: dict[str, int] = {}

    def which(self, word: str) -> int:
        """The index of the first term ``word`` matches, or -1."""
        hit = self._memo.get(word)
        if hit is None:
            folded = fold(word)
            found = terms_of(folded)
            hit = -1
            for i, t in enumerate(self.terms):
                if t.prefix:
                    if folded.startswith(t.stem) or any(x.startswith(t.stem) for x in (*found, stem(folded))):
                        hit = i
                        break
                elif not self._lemmas[i].isdisjoint(found) or (not t.lemmas and stem(folded) == t.stem):
                    hit = i
                    break
            if len(self._memo) >= _MEMO_MAX:
                self._memo.clear()
            self._memo[word] = hit
        return hit

    def matches(self, text: str) -> list[tuple[int, int, int]]:
        """``(start, end, term index)`` of every matching word of ``text``."""
        if self.pattern is None or self.folded is None:
            return []
        folded = fold(text)
        # folding keeps a text's length but for a few letters ("İ" lower-cases to two): then the case-blind way
        found = self.folded.finditer(folded) if len(folded) == len(text) else self.pattern.finditer(text)
        out = []
        inside = _WORD_CHAR.match
        for m in found:
            start, end = m.span()
            if start and inside(text, start - 1):
                continue
            i = self.which(text[start:end])
            if i >= 0:
                out.append((start, end, i))
        return out


#: words a matcher remembers the verdict of (a query's matcher serves all its results, and the next queries)
_MEMO_MAX = 4096


@functools.lru_cache(maxsize=256)
def _matcher(terms: tuple[Term, ...]) -> _Matcher:
    """One matcher per query: its pattern is compiled and its words stemmed once for all the results."""
    return _Matcher(terms)


def highlight(text: str, terms: Sequence[Term]) -> Snippet:
    """``text`` whole (a title, say) with its matching words marked."""
    return Snippet(text, tuple((s, e) for s, e, _ in _matcher(tuple(terms)).matches(text)))


def _word_start(text: str, pos: int) -> int:
    """``pos`` moved back to the start of the word it is in (or left where it is, between words)."""
    while pos > 0 and not _NOT_WORD.match(text[pos - 1]):
        pos -= 1
    return pos


def _word_end(text: str, pos: int) -> int:
    """``pos`` moved back to the end of the last whole word before it."""
    if pos >= len(text):
        return len(text)
    while pos > 0 and not _NOT_WORD.match(text[pos]):
        pos -= 1
    return pos


def _best_start(found: list[tuple[int, int, int]], width: int) -> int:
    """Index into ``found`` (in text order) of the match that starts the best window (most distinct terms,
    most matches; the first of equals), a window being the matches that start less than ``width`` less the
    lead after it. Both ends only move forward: each match enters and leaves the window's counts once."""
    span = width - min(_LEAD_CHARS, width // 4)
    counts: dict[int, int] = {}
    best, best_key = 0, (-1, -1)
    j = 0
    n = len(found)
    for i, (start, _, term) in enumerate(found):
        if j <= i:  # a window holds its first match at least
            j = i + 1
            counts = {term: 1}
        limit = start + span
        while j < n and found[j][0] < limit:
            t = found[j][2]
            counts[t] = counts.get(t, 0) + 1
            j += 1
        key = (len(counts), j - i)
        if key > best_key:
            best, best_key = i, key
        left = counts[term] - 1  # the match leaves the window before the next one's
        if left:
            counts[term] = left
        else:
            del counts[term]
    return best


def _shown(text: str) -> tuple[str, int]:
    """``text`` as a snippet shows it (its blocks set apart, whitespace collapsed) and where the passage may
    start at the earliest: after a leading byline, else 0."""
    text = text[:_SCAN_CHARS]
    if "\n" not in text:
        return " ".join(text.split()), 0
    text = _BREAKS.sub("\n", text).strip()
    # a block that ends a sentence runs on with a space, any other is set apart (three passes in C)
    shown = " ".join(_SOFT_BREAK.sub(" ", text).replace("\n", _BLOCK_SEPARATOR).split())
    first, _, rest = text.partition("\n")
    first = " ".join(first.split())
    if rest and len(first) <= _BYLINE_CHARS and _BYLINE.search(first):
        return shown, len(first) + (1 if first[-1] in _SENTENCE_END else len(_BLOCK_SEPARATOR))
    return shown, 0


def make_snippet(text: str, terms: Sequence[Term], width: int = SNIPPET_CHARS) -> Snippet:
    """The best passage of ``text`` for ``terms`` (its start when nothing matches), marked."""
    text, earliest = _shown(text)
    matcher = _matcher(tuple(terms))
    found = matcher.matches(text)
    if earliest and any(s < earliest for s, _, _ in found):
        earliest = 0  # the byline holds a query word: it is what the reader looks for
    if found:
        first = found[_best_start(found, width)][0]
        start = _word_start(text, max(0, first - min(_LEAD_CHARS, width // 4)))
        # a passage that would run past the end slides back to show a full width
        start = _word_start(text, max(earliest, min(start, len(text) - width)))
    else:
        start = earliest
    end = _word_end(text, start + width) if start + width < len(text) else len(text)
    if end <= start:  # one word longer than the whole width: cut inside it
        end = min(len(text), start + width)
    piece = text[start:end].strip(" ,;:-·")
    offset = start + (len(text[start:end]) - len(text[start:end].lstrip(" ,;:-·")))
    lead = "…" if start > earliest else ""
    tail = "…" if end < len(text) else ""
    shift = len(lead) - offset
    marks = tuple((s + shift, e + shift) for s, e, _ in found if s >= offset and e <= offset + len(piece))
    return Snippet(lead + piece + tail, marks)
