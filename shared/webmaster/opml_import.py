"""An OPML file's feeds registered for a tenant, each line with its result (docs/architecture.md section 10).

The API (``POST /api/v1/feeds/opml``), the console and ``turbocubes feeds import`` call this. Each
outline is one registration through ``FeedRegistry.register`` -- the same rules as one feed added
by hand (a verified host of the tenant's, the SSRF guard, the format, the options' bounds) -- and
its result is said per line: ``added``, ``updated``, ``unchanged`` or ``refused`` with the reason.
An import is idempotent: the same file again changes nothing and says ``unchanged`` for every line
(a feed's id is its tenant and canonical URL). A store or bus outage stops the import where it is;
running it again completes it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from shared.stores import TenantStore, UpsertOutcome
from shared.webmaster import access
from shared.webmaster.feeds import KEEP, WEBMASTER_FORMATS, Authorize, FeedProblem, FeedRegistry, RegistrationRefused
from shared.webmaster.opml import OpmlLine, read_opml

__all__ = ["ImportReport", "LineResult", "import_opml", "tenant_origins_only"]

_OUTCOMES = {UpsertOutcome.inserted: "added", UpsertOutcome.updated: "updated", UpsertOutcome.unchanged: "unchanged"}


@dataclass(frozen=True, slots=True)
class LineResult:
    #: the outline's line in the file (None: past what the parser counts)
    line: int | None
    url: str
    #: added, updated, unchanged or refused
    result: str
    #: why it was refused, or what of the line could not be used
    message: str = ""
    feed_id: str | None = None
    #: its number among the file's feeds, from 1
    outline: int = 0
    #: where to look in the file, said to the webmaster: its line when no other feed shares it, else its number
    place: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "outline": self.outline,
            "url": self.url,
            "result": self.result,
            "message": self.message,
            "feed_id": self.feed_id,
        }


@dataclass(frozen=True, slots=True)
class ImportReport:
    lines: tuple[LineResult, ...]
    #: outlines past ``shared.webmaster.opml.MAX_OUTLINES``, not read
    more: int = 0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.lines:
            out[r.result] = out.get(r.result, 0) + 1
        return out


def tenant_origins_only(tenants: TenantStore, tenant_id: str) -> Authorize:
    """What a registration asks of a feed URL's origin: a right of the tenant's on it (``shared.webmaster.access``)."""

    async def owned(origin: str) -> None:
        try:
            await access.origin_claim(tenants, tenant_id, origin)
        except access.AccessRefused as exc:
            raise RegistrationRefused([FeedProblem("url", exc.message)]) from None

    return owned


def _place(line: OpmlLine, shared: bool) -> str:
    if line.line is None:
        return f"outline {line.outline}"
    return f"outline {line.outline} (line {line.line})" if shared else f"line {line.line}"


async def _one(
    registry: FeedRegistry, line: OpmlLine, tenant_id: str, authorize: Authorize, *, shared: bool
) -> LineResult:
    place = _place(line, shared)
    try:
        done = await registry.register(
            line.url,
            fmt=line.format,
            autoparser=line.autoparser,
            tenant_id=tenant_id,
            formats=WEBMASTER_FORMATS,
            authorize=authorize,
            options=KEEP if line.options is None else line.options,
        )
    except RegistrationRefused as exc:
        return LineResult(line.line, line.url[:500], "refused", str(exc), outline=line.outline, place=place)
    return LineResult(
        line.line,
        done.feed.url,
        _OUTCOMES.get(done.outcome, "updated"),
        "; ".join(line.notes),
        done.feed.feed_id,
        outline=line.outline,
        place=place,
    )


async def import_opml(registry: FeedRegistry, tenants: TenantStore, tenant_id: str, body: bytes) -> ImportReport:
    """Register every feed of the file for ``tenant_id``; ``shared.webmaster.opml.OpmlRefused`` for a file that cannot
    be
    read at all."""
    lines, more = read_opml(body)
    authorize = tenant_origins_only(tenants, tenant_id)
    on_line = Counter(line.line for line in lines)
    return ImportReport(
        tuple([await _one(registry, x, tenant_id, authorize, shared=on_line[x.line] > 1) for x in lines]), more
    )
