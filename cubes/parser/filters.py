"""A feed's own filters applied to its items (docs/architecture.md section 10).

The rules are ``shared.webmaster.feed_options.FeedFilters`` (keep or drop by category or pattern, each
pattern search bounded in time); here they meet the parser's candidates. An item left out is
never silent: it is reported as ``item.filtered`` with the rule that dropped it, and a pattern
that ran out of time keeps its item and is reported as ``feed.filter_too_slow``.
"""

from __future__ import annotations

from cubes.parser.documents import Candidate
from cubes.parser.model import ItemError, Severity
from cubes.parser.status import Outcome
from shared.webmaster.feed_options import FeedFilters

__all__ = ["filtered"]


def filtered(cands: list[Candidate], filters: FeedFilters, run: Outcome) -> list[Candidate]:
    """The candidates the feed's own filters keep; each one left out is reported (``item.filtered``)."""
    kept: list[Candidate] = []
    for cand in cands:
        cats = cand.extra.get("category", [])
        verdict = filters.verdict(cand.title, cand.url, [cats] if isinstance(cats, str) else cats)
        if verdict.too_slow is not None:
            run.errors.append(
                ItemError(
                    f"the filter pattern {verdict.too_slow!r} took too long on this item: it was kept",
                    index=cand.index,
                    link=cand.url,
                    severity=Severity.warning,
                    code="feed.filter_too_slow",
                )
            )
        if verdict.kept:
            kept.append(cand)
            continue
        reason = f"left out by the feed's filters: {verdict.reason}"
        run.errors.append(
            ItemError(reason, index=cand.index, link=cand.url, severity=Severity.info, code="item.filtered")
        )
        run.results.append((cand.url, "filtered", reason))
    return kept
