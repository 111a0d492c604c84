"""Query statistics routes (docs/architecture.md section 3, "wordstat").

* ``GET /api/v1/wordstat?q=&months=&region=&device=`` — the frequency of a query
  in Wordstat's operators: the period's total, 24 months of history, the split
  by region and device, the most searched queries it covers
  (``shared.wordstat.frequency``). Any tenant may ask: every number is an
  aggregate, and counts under ``wordstat.privacy_threshold`` are ``null``
  (shown as "< N"). A query that cannot be read is 422 with where and why.
* ``GET /api/v1/hosts/{host}/queries?months=`` — the searches that showed the pages
  of the origin the tenant's right on the host covers (``shared.wordstat.hosts``),
  most frequent first; only queries searched at least the threshold's number of
  times are listed (the rest are counted in ``hidden``).
"""

from __future__ import annotations

from aiohttp import web

from cubes.api.auth import TENANT, require_host
from cubes.api.context import ctx_of
from cubes.api.errors import FieldError, ValidationFailed, json_response
from cubes.api.params import REGION_MAX, bounded, path_host
from shared.wordstat.frequency import frequency, frequency_json
from shared.wordstat.hosts import host_queries as shown_queries
from shared.wordstat.operators import WordstatSyntaxError, parse

__all__ = ["add_routes"]

_MAX_QUERY = 300


def _months(request: web.Request, history: int) -> int:
    raw = request.query.get("months", "1")
    try:
        months = int(raw)
    except ValueError:
        months = 0
    if not 1 <= months <= history:
        raise ValidationFailed([FieldError("months", f"a whole number of months from 1 to {history}")])
    return months


async def get_wordstat(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    cfg = ctx.settings.wordstat
    region = bounded("region", request.query.get("region", ""), REGION_MAX)
    raw = request.query.get("q", "")
    text = raw.strip()
    if not text or len(raw) > _MAX_QUERY:
        raise ValidationFailed([FieldError("q", f"a query of 1 to {_MAX_QUERY} characters")])
    months = _months(request, cfg.history_months)
    try:
        query = parse(text)
    except WordstatSyntaxError as exc:
        raise ValidationFailed([FieldError("q", str(exc))]) from None
    f = await frequency(
        ctx.stores.wordstat,
        query,
        now=ctx.clock.now(),
        threshold=cfg.privacy_threshold,
        history_months=cfg.history_months,
        period_months=months,
        region=region or None,
        device=request.query.get("device") or None,
    )
    return json_response(frequency_json(f, threshold=cfg.privacy_threshold, period_months=months))


async def host_queries(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    cfg = ctx.settings.wordstat
    host = path_host(request)
    claim = await require_host(ctx.stores.tenants, request[TENANT], host)
    months = _months(request, cfg.history_months)
    now = ctx.clock.now()
    hq = await shown_queries(ctx.stores.wordstat, claim.origin, now=now, months=months, threshold=cfg.privacy_threshold)
    return json_response(
        {
            "host": host,
            "origin": claim.origin,
            "period_months": months,
            "privacy_threshold": cfg.privacy_threshold,
            "queries": [{"query": q, "impressions": n} for q, n in hq.shown],
            "hidden": hq.hidden,
        }
    )


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/api/v1/wordstat", get_wordstat, name="wordstat.frequency", allow_head=False)
    router.add_get("/api/v1/hosts/{host}/queries", host_queries, name="hosts.queries", allow_head=False)
