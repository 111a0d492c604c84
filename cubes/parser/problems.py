"""The parser's problems as the webmaster sees them (DESIGN.md section 10; ``shared/problems.py``).

The parse layer speaks ``ItemError`` (reason, line, column, item index, link,
severity and a code); everything that leaves the parser -- feed status, fetch
history, upload tasks -- carries ``shared.problems.Problem`` objects built
here, with the hint of the code's row in ``shared/problem_codes.py``.
"""

from __future__ import annotations

from collections.abc import Iterable

from cubes.parser.model import ItemError
from shared.problem_codes import CODES
from shared.problems import Problem, problem

__all__ = ["to_problem", "to_problems"]

#: what a problem without a code of its own is reported as (see ``ItemError``)
_ITEM_DEFAULT = "item.unreadable"
_FEED_DEFAULT = "feed.not_readable"


def to_problem(err: ItemError, *, feed: str | None = None) -> Problem:
    code = err.code if err.code in CODES else (_ITEM_DEFAULT if err.index is not None else _FEED_DEFAULT)
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
    )


def to_problems(errors: Iterable[ItemError], *, feed: str | None = None) -> list[Problem]:
    return [to_problem(e, feed=feed) for e in errors]
