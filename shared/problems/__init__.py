"""Structured problems: what the webmaster is told about their content (docs/architecture.md section 10;
docs/conventions.md rule 20).

Every problem a user can fix is one ``Problem``: a stable ``code`` (the table
is ``shared/problems/codes.py``, published as ``schemas/problems.md`` and served
by ``GET /api/v1/problems``), a ``severity``, ``where`` it is (feed, item
index, item link, line, column), a ``message`` that says what happened to
*this* item, and a ``hint`` that says how to fix it. The same object goes into
feed status, fetch history, upload tasks, page views, logs and the console.

Severity is a promise about content:

* ``error`` -- something was not published as the source has it: an item (or
  the whole feed) was refused, or a page lost part of its content (an image);
* ``warning`` -- something was wrong and was recovered; nothing was lost that
  we know of, but the source should be fixed before it costs content;
* ``info`` -- worth knowing, nothing to fix now (a throttled fetch, retried).

Lists are capped where they are stored (``cap``): the first ``limit``
problems are kept in source order, the rest are counted by code, so "1,000
items refused" is one number, never a silent truncation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.problems.codes import CODES, ProblemCode

__all__ = [
    "CODES",
    "MAX_PROBLEMS",
    "Capped",
    "Problem",
    "ProblemCode",
    "Severity",
    "Where",
    "cap",
    "counts_by_code",
    "fetch_problem",
    "image_code",
    "image_problem",
    "problem",
    "problem_schema",
    "problems_from",
    "severity_counts",
]

#: problems kept per fetch, upload task or page; the rest are counted (``Capped.more``). A feed of 1,000
#: broken items keeps 100 in full -- enough to see every pattern -- and never a megabyte of status
MAX_PROBLEMS = 100


class Severity(StrEnum):
    error = "error"
    warning = "warning"
    info = "info"


class Where(BaseModel):
    """Where a problem is. Every field is optional: a feed-level problem has no item."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: the feed id (``GET /api/v1/feeds/{feed_id}``); None for uploads and pages without a feed
    feed: str | None = None
    #: the item's index in the body, 0-based (the console shows ``item index + 1``)
    item: int | None = None
    #: the item's link (for a page problem: the page's URL)
    link: str | None = None
    #: 1-based line and column in the body, when known
    line: int | None = Field(default=None, ge=0)
    column: int | None = Field(default=None, ge=0)

    def describe(self) -> str:
        """``item 3, line 12, column 5`` (empty for a problem of the whole body)."""
        parts = []
        if self.item is not None:
            parts.append(f"item {self.item + 1}")
        if self.line is not None:
            parts.append(f"line {self.line}" + (f", column {self.column}" if self.column is not None else ""))
        return ", ".join(parts)


class Problem(BaseModel):
    """One problem. Build it with ``problem(code, message, ...)``, which fills severity and hint from the table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str
    severity: Severity
    where: Where = Field(default_factory=Where)
    message: str
    hint: str
    #: what the webmaster may use instead, for the console to offer (the feeds an HTML page names);
    #: left out of ``as_dict`` when empty, so every other problem reads as it always did
    offers: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude=None if self.offers else {"offers"})

    def describe(self) -> str:
        """One line for a log or a CLI: ``[code] item 3, line 12: message``."""
        where = self.where.describe()
        return f"[{self.code}] {where + ': ' if where else ''}{self.message}"


def problem_schema() -> dict[str, Any]:
    """The JSON Schema of a problem (``schemas/problem.v1.json``), with every code of the table."""
    schema = Problem.model_json_schema(mode="serialization")
    schema["properties"]["code"]["enum"] = list(CODES)
    schema["properties"]["code"]["description"] = "a row of schemas/problems.md (GET /api/v1/problems)"
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "turbocubes:problem.v1.json", **schema}


def problem(
    code: str,
    message: str,
    *,
    feed: str | None = None,
    item: int | None = None,
    link: str | None = None,
    line: int | None = None,
    column: int | None = None,
    severity: Severity | str | None = None,
    hint: str | None = None,
    offers: Iterable[str] = (),
) -> Problem:
    """A ``Problem`` of a code from the table; ``KeyError`` for an unknown code (codes are a contract)."""
    entry = CODES[code]
    return Problem(
        code=code,
        severity=Severity(severity or entry.severity),
        where=Where(feed=feed, item=item, link=link, line=line, column=column),
        message=message,
        hint=hint or entry.hint,
        offers=tuple(offers),
    )


def problems_from(rows: Iterable[Mapping[str, Any]]) -> list[Problem]:
    """Problems read back from stored JSON (rows of unknown shape are skipped, never raised on)."""
    out = []
    for row in rows:
        try:
            out.append(Problem.model_validate(row))
        except ValueError:
            continue
    return out


def counts_by_code(problems: Iterable[Problem]) -> dict[str, int]:
    return dict(sorted(Counter(p.code for p in problems).items()))


def severity_counts(problems: Iterable[Problem]) -> dict[str, int]:
    found = Counter(p.severity.value for p in problems)
    return {s.value: found.get(s.value, 0) for s in Severity}


@dataclass(frozen=True, slots=True)
class Capped:
    """A capped list: the first problems in full, and how many of each code there were in all."""

    kept: list[Problem] = field(default_factory=list)
    #: every problem counted, kept or not
    counts: dict[str, int] = field(default_factory=dict)
    #: by severity, every problem counted
    severities: dict[str, int] = field(default_factory=dict)
    #: how many were not kept
    more: int = 0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "problems": [p.as_dict() for p in self.kept],
            "counts": self.counts,
            "severities": self.severities,
            "more": self.more,
        }


def cap(problems: Iterable[Problem], limit: int = MAX_PROBLEMS) -> Capped:
    """Keep the first ``limit`` problems (errors first, then in source order); count every one."""
    every = list(problems)
    rank = {Severity.error: 0, Severity.warning: 1, Severity.info: 2}
    ordered = sorted(every, key=lambda p: rank[p.severity])  # stable: source order within a severity
    return Capped(
        kept=ordered[:limit],
        counts=counts_by_code(every),
        severities=severity_counts(every),
        more=max(0, len(every) - limit),
    )


# --------------------------------------------------------------------------- codes of other cubes' outcomes

#: the cdn cube's failure reasons (``media.cached`` ``reason``: ``http_404``, ``not_an_image``, a
#: ``FetchStatus`` value...) -> problem code; ``late`` is the delay cube's "not cached by the deadline"
_IMAGE_CODES = {
    "not_an_image": "image.not_an_image",
    "unsupported_format": "image.unsupported",
    "corrupt": "image.unsupported",
    "empty": "image.not_an_image",
    "too_large": "image.too_large",
    "too_many_pixels": "image.too_large",
    "timeout": "image.unreachable",
    "connect_error": "image.unreachable",
    "dns_error": "image.unreachable",
    "throttled": "image.unreachable",
    "robots_denied": "image.refused",
    "blocked_address": "image.refused",
    "bad_url": "image.refused",
    "too_many_redirects": "image.http_error",
    "redirect_loop": "image.http_error",
    "late": "image.late",
}


def image_code(reason: str) -> str:
    """The problem code of an image failure reason (see ``_IMAGE_CODES``)."""
    if reason in ("http_404", "http_410"):
        return "image.not_found"
    if reason.startswith("http_"):
        return "image.http_error"
    return _IMAGE_CODES.get(reason, "image.http_error")


def image_problem(image_url: str, reason: str, *, page_url: str, feed: str | None = None) -> Problem:
    """The image at ``image_url`` is not on the page, and why (``reason`` as the cdn cube gives it). Whether
    the page was held back or published without it is the page's state (``shared/pages/state.py``)."""
    if reason == "late":
        return problem(
            image_code(reason), f"the image {image_url} was not copied to our CDN in time", feed=feed, link=page_url
        )
    shown = (
        f"it answered {reason.replace('http_', 'HTTP ')}" if reason.startswith("http_") else reason.replace("_", " ")
    )
    return problem(image_code(reason), f"the image {image_url} could not be copied: {shown}", feed=feed, link=page_url)


#: a feed fetch's ``FetchStatus`` value -> problem code (``ok`` and ``not_modified`` are no problem)
_FETCH_CODES = {
    "robots_denied": "fetch.robots_denied",
    "blocked_address": "fetch.blocked_address",
    "bad_url": "fetch.bad_url",
    "dns_error": "fetch.unreachable",
    "connect_error": "fetch.unreachable",
    "timeout": "fetch.unreachable",
    "too_large": "fetch.too_large",
    "too_many_redirects": "fetch.redirects",
    "redirect_loop": "fetch.redirects",
    "http_5xx": "fetch.server_error",
    "throttled": "fetch.throttled",
    "credentials_error": "fetch.credentials",
}


def fetch_problem(status: str, http_status: int | None, error: str | None, *, feed: str | None = None) -> Problem:
    """What a failed fetch of a feed tells its webmaster (``status``: a ``FetchStatus`` value)."""
    if status == "http_4xx":
        code = "fetch.not_found" if http_status in (404, 410) else "fetch.http_error"
    else:
        code = _FETCH_CODES.get(status, "fetch.http_error")
    what = f"HTTP {http_status}" if http_status else status.replace("_", " ")
    return problem(code, f"the feed could not be fetched: {what}" + (f" ({error})" if error else ""), feed=feed)
