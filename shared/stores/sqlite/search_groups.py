"""What one group of a query is to SQLite search's walk (``search_topk.py``; docs/architecture.md s.3).

A query is groups that must all match (``SearchQuery.groups``): a word, a
prefix (``мост*``) or a phrase (``"красная площадь"``; the walk takes those of two words).
FTS5's bm25 scores each *phrase* of the MATCH expression: its IDF from the pages
that match it, its frequency the count of its instances in the title and in
the text; a word is the OR of its lemmas (``shared/search/tokens.py``), one
phrase each. The walk (``shared/stores/sql/search_walk.py``) needs two more
things of a phrase, both here:

* **its list** — the impact list whose pages include every page the phrase
  matches, ordered by a bound of its score: a term's own; for a prefix, the
  *prefix list* of its first ``PREFIX_LENGTHS`` letters (below);
* **its count in a page** — from the page's stream (``Phrase.count``).

**Prefix lists.** Beside its terms, a page's impact rows hold a token per
prefix of 3 and 4 letters of its terms (``prefix_token``: a private-use mark
then the letters — FTS5 keeps private-use characters in tokens, and no term
has one), counted as FTS5 counts a prefix query's instances: every occurrence
of every term that starts with it. So ``мос*`` is walked as one word is, and
a longer prefix (``мостов*``) walks the list of its first 4 letters (every page
it matches is on it, with a frequency at least its own, so the list's bound
holds) and counts itself in the pages' streams. Shorter prefixes (``по*``) are
ranked in SQL.
"""

from __future__ import annotations

from shared.search.query import Term
from shared.stores.sql.search_impacts import pair_token
from shared.stores.sql.search_walk import Phrase

__all__ = ["MARK", "PREFIX_LENGTHS", "phrases_of", "prefix_token"]

#: the prefix lengths with a list of their own: a query prefix's stem is mostly 3 to 5 letters (a word
#: typed in part); each length costs about one more token per distinct term of a page in the index
PREFIX_LENGTHS = (3, 4)
#: a private-use character: FTS5's unicode61 tokenizer keeps it in a token (categories L* N* Co), and a
#: term (letters and digits, ``analysis.WORD_RE``) never has one, so no prefix token is also a term
MARK = "\ue000"


def prefix_token(prefix: str) -> str:
    """The impact index's token of a prefix list."""
    return MARK + prefix


def _quoted(text: str) -> str:
    # terms are runs of letters and digits: quoted, they are literal tokens, never FTS5 syntax
    return '"' + text + '"'


def phrases_of(terms: tuple[Term, ...]) -> list[Phrase] | None:
    """The walk's view of one query group: the phrases any of which it matches (a word: each of its lemmas,
    as the MATCH expression ORs them; a phrase of two words: its pair's list, ``sql/search_impacts.py``),
    each ``match`` its FTS5 MATCH text; None when the walk cannot take it (a phrase of more words, whose
    IDF only FTS5's own match counts; a prefix shorter than any prefix list)."""
    if len(terms) == 2:
        a, b = terms[0].first, terms[1].first
        return [Phrase(_quoted(f"{a} {b}"), (pair_token(a, b),), f"{a} {b}", exact=True)]
    if len(terms) > 1:
        return None
    term = terms[0]
    if not term.prefix:
        return [Phrase(_quoted(t), (t,), t, exact=True) for t in term.lemmas or (term.stem,)]
    stem = term.stem
    if len(stem) < PREFIX_LENGTHS[0]:
        return None
    own = len(stem) in PREFIX_LENGTHS
    token = prefix_token(stem if own else stem[: PREFIX_LENGTHS[-1]])
    return [Phrase(_quoted(stem) + "*", (token,), stem, prefix=True, exact=own)]
