"""What one group of a query is to SQLite search's walk (``search_topk.py``; docs/architecture.md s.3).

A query is groups that must all match (``SearchQuery.groups``): a word, a
prefix (``мост*``) or a phrase (``"красная площадь"``; the walk declines those).
FTS5's bm25 scores each group as one *phrase*: its IDF from the pages that
match it, its frequency the count of its instances in the title and in the
text. The walk needs two more things of a group, both here:

* **its list** — the impact list whose pages include every page the group
  matches, ordered by a bound of the group's score: a word's own; for a
  prefix, the *prefix list* of its first ``PREFIX_LENGTHS`` letters (below);
* **its count in a page** — from the page's stems as ``search_topk`` reads them
  (``count``).

**Prefix lists.** Beside its stems, a page's impact rows hold a token per
prefix of 3 and 4 letters of its stems (``prefix_token``: a private-use mark
then the letters — FTS5 keeps private-use characters in tokens, and no stem
has one), counted as FTS5 counts a prefix query's instances: every occurrence
of every stem that starts with it. So ``мос*`` is walked as one word is, and
a longer prefix (``мостов*``) walks the list of its first 4 letters (every page
it matches is on it, with a frequency at least its own, so the list's bound
holds) and counts itself in the pages' stems. Shorter prefixes (``по*``) are
ranked in SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from shared.search.query import Term

__all__ = ["PREFIX_LENGTHS", "Group", "GroupKind", "group_of", "prefix_token"]

#: the prefix lengths with a list of their own: a query prefix's stem is mostly 3 to 5 letters (a word
#: typed in part); each length costs about one more token per distinct stem of a page in the index
PREFIX_LENGTHS = (3, 4)
#: a private-use character: FTS5's unicode61 tokenizer keeps it in a token (categories L* N* Co), and a
#: stem (letters and digits, ``analysis.WORD_RE``) never has one, so no prefix token is also a stem
_MARK = "\ue000"


def prefix_token(prefix: str) -> str:
    """The impact index's token of a prefix list."""
    return _MARK + prefix


class GroupKind(Enum):
    word = "word"
    #: a prefix with a list of its own (its length is one of ``PREFIX_LENGTHS``)
    prefix = "prefix"
    #: a longer prefix: it walks the list of its first letters, a superset
    long_prefix = "long_prefix"


@dataclass(frozen=True, slots=True)
class Group:
    kind: GroupKind
    #: the word's stem, or the prefix
    stem: str
    #: the impact list the walk reads (a token of ``search_imp``)
    list: str
    #: what bm25 calls the group's phrase, as FTS5 MATCH text (its document frequency is counted on it)
    match: str

    @property
    def exact(self) -> bool:
        """Whether a row of the group's list carries the group's own counts (a word, a prefix of its own)."""
        return self.kind in (GroupKind.word, GroupKind.prefix)

    def count(self, text: str) -> int:
        """The group's instances in ``text`` (stems between single spaces, and one at each end)."""
        if self.kind is not GroupKind.word:
            return text.count(f" {self.stem}")  # every stem that starts with the prefix
        needle = f" {self.stem} "
        n = text.count(needle)  # in C, no list of words made
        if n and f" {self.stem}{needle}" in text:
            # the stem twice in a row: the two share a space, and str.count finds one; count them one by one
            n, i = 0, text.find(needle)
            while i >= 0:
                n += 1
                i = text.find(needle, i + 1)
        return n


def _quoted(text: str) -> str:
    # stems are runs of letters and digits: quoted, they are literal tokens, never FTS5 syntax
    return '"' + text + '"'


def group_of(terms: tuple[Term, ...]) -> list[Group] | None:
    """The walk's view of one query group: the terms any of which it matches (a word: each of its lemmas,
    as the MATCH expression ORs them); None when the walk cannot take it (a phrase, a prefix shorter than
    any prefix list)."""
    if len(terms) > 1:
        return None
    if not terms[0].prefix:
        return [Group(GroupKind.word, t, t, _quoted(t)) for t in terms[0].lemmas or (terms[0].stem,)]
    found = _prefix(terms[0].stem)
    return None if found is None else [found]


def _prefix(stem: str) -> Group | None:
    if len(stem) < PREFIX_LENGTHS[0]:
        return None
    if len(stem) in PREFIX_LENGTHS:
        return Group(GroupKind.prefix, stem, prefix_token(stem), _quoted(stem) + "*")
    return Group(GroupKind.long_prefix, stem, prefix_token(stem[: PREFIX_LENGTHS[-1]]), _quoted(stem) + "*")
