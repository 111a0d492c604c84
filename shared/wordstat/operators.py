"""Wordstat's operator language, parsed into variants that are matched against counted queries.

docs/architecture.md section 3 ("wordstat"). A counted query is a sequence of words, each
with its folded form and lemmas (``lemmas.py``). What a frequency query means:

* ``купить слона`` — **base frequency**: every counted query that contains each
  of these words in any form (more words, any order); function words typed
  without an operator ("в", "the") are left out, as Wordstat does;
* ``"купить слона"`` — **phrase**: these words in any form and any order, and no
  other word but function words;
* ``!слона`` — this **form** only; ``+в`` — a function word that **must** be
  there (in that form); inside ``[...]`` every word counts, function words too;
* ``[из москвы в париж]`` — **order**: these words appear in this order (other
  words may stand between them); any form unless ``!``;
* ``(купить|заказать) слона`` — **either**: one of the alternatives (each may be
  several words); a query whose top level has ``|`` is one group;
* ``-дешево`` — **exclude** every counted query with this word in any form
  (``-!дешево``: in this form).

Each query word is matched by a different word of the counted query (so
``купить купить`` needs it twice). ``parse`` expands the alternatives into
``Variant``s (at most ``MAX_VARIANTS``); a counted query matches the whole
query when it matches any variant. A malformed query raises ``WordstatSyntaxError``
with the position and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product

from shared.search.analysis import fold
from shared.wordstat.lemmas import MAX_QUERY_WORDS, Word, analyze_word

__all__ = [
    "MAX_VARIANTS",
    "Ordered",
    "Variant",
    "WordOp",
    "WordstatQuery",
    "WordstatSyntaxError",
    "matches",
    "parse",
    "variant_matches",
]

#: alternatives expand into at most this many variants ((a|b) (c|d) (e|f) is 8)
MAX_VARIANTS = 64
#: words of one frequency query at most (each is a look-up and a match)
MAX_WORDS = MAX_QUERY_WORDS
_TOKEN = re.compile(r'\s+|(?P<sym>["\[\]()|!+\-])|(?P<word>[^\W_]+)|(?P<other>.)')


class WordstatSyntaxError(ValueError):
    """A frequency query that cannot be read; ``position`` is the 0-based character where it went wrong."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at character {position + 1})")
        self.position = position


@dataclass(frozen=True, slots=True)
class WordOp:
    """One word of a frequency query. ``exact``: this form only; ``fixed``: counts even as a function word."""

    word: Word
    exact: bool = False
    fixed: bool = False

    @property
    def dropped(self) -> bool:
        """A function word without an operator: not required."""
        return self.word.stop and not self.fixed and not self.exact

    def accepts(self, w: Word) -> bool:
        if self.exact or (self.fixed and self.word.stop):
            return w.form == self.word.form
        return not set(self.word.lemmas).isdisjoint(w.lemmas)

    def text(self) -> str:
        return ("!" if self.exact else "+" if self.fixed and self.word.stop else "") + self.word.form


@dataclass(frozen=True, slots=True)
class Ordered:
    """``[...]``: words in this order."""

    words: tuple[WordOp, ...]


Item = WordOp | Ordered


@dataclass(frozen=True, slots=True)
class Variant:
    """One way to match: every item required, none of ``minus``; ``phrase``: no other word."""

    items: tuple[Item, ...]
    minus: tuple[WordOp, ...] = ()
    phrase: bool = False

    @property
    def required(self) -> tuple[WordOp, ...]:
        """Every word that must be matched, in order (ordered groups flattened)."""
        out: list[WordOp] = []
        for item in self.items:
            if isinstance(item, Ordered):
                out.extend(item.words)
            elif not item.dropped:
                out.append(item)
        return tuple(out)


@dataclass(frozen=True, slots=True)
class WordstatQuery:
    variants: tuple[Variant, ...]
    #: the query written back canonically (folded, one space between tokens)
    text: str


# --------------------------------------------------------------------------- parsing


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str, int]] = []  # (kind, value, position)
        for m in _TOKEN.finditer(text):
            if m.group("sym"):
                self.tokens.append(("sym", m.group("sym"), m.start()))
            elif m.group("word"):
                self.tokens.append(("word", fold(m.group("word")), m.start()))
            # other characters (punctuation) separate words, like in the search box
        self.end = len(text)
        self.i = 0
        self.words = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, sym: str | None = None) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise WordstatSyntaxError(f"expected {sym!r}" if sym else "the query ended too early", self.end)
        if sym is not None and tok[1] != sym:
            raise WordstatSyntaxError(f"expected {sym!r}, found {tok[1]!r}", tok[2])
        self.i += 1
        return tok

    def word(self, *, in_brackets: bool = False) -> WordOp:
        exact = fixed = False
        while (tok := self.peek()) is not None and tok[1] in ("!", "+"):
            self.i += 1
            exact, fixed = exact or tok[1] == "!", fixed or tok[1] == "+"
        tok = self.take()
        if tok[0] != "word":
            raise WordstatSyntaxError(f"expected a word, found {tok[1]!r}", tok[2])
        self.words += 1
        if self.words > MAX_WORDS:
            raise WordstatSyntaxError(f"a query has at most {MAX_WORDS} words", tok[2])
        return WordOp(analyze_word(tok[1]), exact=exact, fixed=fixed or in_brackets)

    def ordered(self) -> Ordered:
        self.take("[")
        words: list[WordOp] = []
        while (tok := self.peek()) is not None and tok[1] != "]":
            words.append(self.word(in_brackets=True))
        self.take("]")
        if not words:
            raise WordstatSyntaxError("[ ] holds no word", self.tokens[self.i - 1][2])
        return Ordered(tuple(words))

    def sequence(self, stop: tuple[str, ...]) -> list[list[Item]]:
        """Items up to one of ``stop``: the alternatives they make (a group multiplies them)."""
        alts: list[list[Item]] = [[]]
        while (tok := self.peek()) is not None and tok[1] not in stop:
            if tok[1] == "[":
                item: Item = self.ordered()
                alts = [[*a, item] for a in alts]
            elif tok[1] == "(":
                group = self.group()
                alts = [a + g for a, g in product(alts, group)]
            elif tok[1] in ('"', "-", "]", ")", "|"):
                raise WordstatSyntaxError(f"{tok[1]!r} cannot stand here", tok[2])
            else:
                op = self.word()
                alts = [[*a, op] for a in alts]
            if len(alts) > MAX_VARIANTS:
                raise WordstatSyntaxError(f"alternatives make more than {MAX_VARIANTS} variants", tok[2])
        return alts

    def group(self) -> list[list[Item]]:
        start = self.take("(")
        alts = self.alternatives(")")
        self.take(")")
        if not any(alts):
            raise WordstatSyntaxError("( ) holds no word", start[2])
        return alts

    def alternatives(self, close: str) -> list[list[Item]]:
        alts = self.sequence(("|", close, '"', "-"))
        while (tok := self.peek()) is not None and tok[1] == "|":
            if not all(alts):
                raise WordstatSyntaxError("'|' needs a word before it", tok[2])
            self.i += 1
            alts += self.sequence(("|", close, '"', "-"))
            if not all(alts):
                raise WordstatSyntaxError("'|' needs a word after it", tok[2])
        return alts

    def query(self) -> WordstatQuery:
        minus: list[WordOp] = []
        positive: list[list[Item]] | None = None
        phrase = False
        while (tok := self.peek()) is not None:
            if tok[1] == "-":
                self.i += 1
                minus.append(self.word())
                continue
            if positive is not None:
                raise WordstatSyntaxError("words after a quoted phrase", tok[2])
            if tok[1] == '"':
                self.i += 1
                positive = self.alternatives('"')
                self.take('"')
                phrase = True
            else:
                positive = self.alternatives("")
        variants = tuple(Variant(items=tuple(items), minus=tuple(minus), phrase=phrase) for items in (positive or []))
        if not any(v.required for v in variants):
            raise WordstatSyntaxError("the query has no word to count (only function or excluded words)", 0)
        return WordstatQuery(variants=variants, text=_canonical(self.tokens))


def _canonical(tokens: Sequence[tuple[str, str, int]]) -> str:
    out = ""
    for _kind, value, _ in tokens:
        glue = out and not out.endswith(("!", "+", "-", "[", "(", "|")) and value not in ("]", ")", "|")
        if (value == '"' and out.count('"') % 2 == 1) or (out.endswith('"') and out.count('"') % 2 == 1):
            glue = False
        out += (" " if glue else "") + value
    return out.replace(" |", "|")


def parse(text: str) -> WordstatQuery:
    """Parse a frequency query (see the module docstring); raises ``WordstatSyntaxError``."""
    return _Parser(text).query()


# --------------------------------------------------------------------------- matching


def _fits(ops: Sequence[WordOp], groups: Sequence[int], words: Sequence[Word], *, cover: bool) -> bool:
    """Whether each op gets a distinct word of ``words`` (ops of one ordered group left to right);
    with ``cover``, also leaving no content word unmatched. Backtracking: queries have few words."""
    used = [False] * len(words)
    last: dict[int, int] = {}

    def walk(k: int) -> bool:
        if k == len(ops):
            return not cover or all(used[i] or words[i].stop for i in range(len(words)))
        g = groups[k]
        for i in range(last.get(g, -1) + 1 if g >= 0 else 0, len(words)):
            if used[i] or not ops[k].accepts(words[i]):
                continue
            used[i] = True
            prev = last.get(g, -1)
            if g >= 0:
                last[g] = i
            if walk(k + 1):
                return True
            used[i] = False
            if g >= 0:
                last[g] = prev
        return False

    return walk(0)


def variant_matches(v: Variant, words: Sequence[Word]) -> bool:
    """Whether a counted query (its analyzed words) is counted under variant ``v``."""
    if any(m.accepts(w) for m in v.minus for w in words):
        return False
    ops: list[WordOp] = []
    groups: list[int] = []
    for n, item in enumerate(v.items):
        if isinstance(item, Ordered):
            ops.extend(item.words)
            groups.extend([n] * len(item.words))
        elif not item.dropped:
            ops.append(item)
            groups.append(-1)
    # a phrase covers every content word: a search with other words is another phrase
    if v.phrase and sum(1 for w in words if not w.stop) > len(ops):
        return False
    return _fits(ops, groups, words, cover=v.phrase)


def matches(query: WordstatQuery, words: Sequence[Word]) -> bool:
    """Whether a counted query (its analyzed words) is counted under ``query``."""
    return any(variant_matches(v, words) for v in query.variants)
