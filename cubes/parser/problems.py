"""The parser's problems as the webmaster sees them (docs/architecture.md section 10; ``shared/problems/__init__.py``).

The parse layer speaks ``ItemError`` (reason, line, column, item index, link,
severity and a code); everything that leaves the parser -- feed status, fetch
history, upload tasks -- carries ``shared.problems.Problem`` objects built
here, with the hint of the code's row in ``shared/problems/codes.py``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from cubes.parser.model import ItemError, Severity
from shared.problems import MAX_PROBLEMS, Capped, Problem, problem
from shared.problems.codes import CODES

__all__ = ["capped", "code_of", "to_problem", "to_problems"]

#: what a problem without a code of its own is reported as (see ``ItemError``)
_ITEM_DEFAULT = "item.unreadable"
_FEED_DEFAULT = "feed.not_readable"


def code_of(err: ItemError) -> str:
    """``err``'s code in the table (a missing or unknown one: the default of its kind)."""
    if err.code in CODES:
        return err.code
    return _ITEM_DEFAULT if err.index is not None else _FEED_DEFAULT


def to_problem(err: ItemError, *, feed: str | None = None) -> Problem:
    code = code_of(err)
    return problem(
        code,
        err.reason,
        feed=feed,
        item=err.index,
        link=err.link,
        line=err.line,
        column=err.column,
        severity=err.severity.value,
        hint=err.hint,
        offers=err.offers,
    )


def to_problems(errors: Iterable[ItemError], *, feed: str | None = None) -> list[Problem]:
    return [to_problem(e, feed=feed) for e in errors]


def capped(errors: Sequence[ItemError], *, feed: str | None = None, limit: int = MAX_PROBLEMS) -> Capped:
    """``shared.problems.cap`` of the errors' problems, building only the ``limit`` kept ones.

    A catalog of 100,000 refused offers has 100,000 errors: every one is counted by code and
    severity, but only the first ``limit`` (errors first, in source order) become ``Problem``
    objects -- each costs a validated model, ~10 us (``bench/problems.py``).
    """
    rank = {Severity.error: 0, Severity.warning: 1, Severity.info: 2}
    ordered = sorted(errors, key=lambda e: rank.get(e.severity, 2))  # stable: source order within a severity
    severities = Counter(e.severity.value for e in errors)
    return Capped(
        kept=[to_problem(e, feed=feed) for e in ordered[:limit]],
        counts=dict(sorted(Counter(code_of(e) for e in errors).items())),
        severities={s: severities.get(s, 0) for s in ("error", "warning", "info")},
        more=max(0, len(errors) - limit),
    )
