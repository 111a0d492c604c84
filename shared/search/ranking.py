"""How search results are ordered (docs/architecture.md section 3, "frontend" search).

``score = relevance × freshness``:

* **relevance** is BM25 over the page's title and text, the title's words
  weighing ``title_weight`` times the text's (SQLite: FTS5's ``bm25()`` with
  column weights; PostgreSQL, which has no BM25: the sum over query words of
  IDF × ``ts_rank`` — a saturating, title-weighted term frequency — divided by
  the log of the page's length; the same three ingredients);
* **freshness** is ``1 + boost × half_life / (half_life + age)`` for news (a
  dated article, ``kinds.py``) and 1 for everything else: a news page published
  now counts ``1 + boost`` times, one ``half_life`` old ``1 + boost / 2`` times,
  and old news fades to plain relevance. A hyperbola rather than an exponential
  because both engines compute it with plain arithmetic.

The constants are ``[search]`` settings (``shared.config.SearchConfig``); a
request carries them to the store, so stores need no configuration of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Ranking"]


@dataclass(frozen=True, slots=True)
class Ranking:
    #: a title word weighs this many text words. 5: a page *about* the query beats one that mentions it
    title_weight: float = 5.0
    #: extra weight of brand-new news (1.0: news published now counts double)
    freshness_boost: float = 1.0
    #: age at which news keeps half its extra weight. 2 days: yesterday's news still leads, last month's does not
    freshness_half_life_s: float = 2 * 86_400.0

    def freshness(self, age_s: float) -> float:
        """The freshness factor of a news page ``age_s`` seconds old (the SQL does the same sum)."""
        half = self.freshness_half_life_s
        return 1.0 + self.freshness_boost * half / (half + max(age_s, 0.0))
