"""The OpenAPI 3.1 document of the API, served at ``GET /api/v1/openapi.json``.

Hand-written as data, so it says what we mean rather than what a framework
guessed. It is kept true by tests: one walks the application's router and
asserts every route is documented and every documented operation is routed;
schemathesis fuzzes the served document against the running app and fails on
any 5xx, undocumented status code, content type, header or body shape.

Each operation documents only the statuses it can answer. The gate adds
401 / 413 / 429 / 503 to every tenant operation (see ``cubes.api.gate``).
"""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_history import history_paths
from cubes.api.openapi_notify import notify_paths, notify_schemas
from cubes.api.openapi_opml import opml_paths, opml_schemas
from cubes.api.openapi_parts import (
    ADMIN as _ADMIN,
)
from cubes.api.openapi_parts import (
    JSON as _JSON,
)
from cubes.api.openapi_parts import (
    STR as _STR,
)
from cubes.api.openapi_parts import (
    XML_TYPES as _XML_TYPES,
)
from cubes.api.openapi_parts import (
    error as _error,
)
from cubes.api.openapi_parts import (
    json_body as _json_body,
)
from cubes.api.openapi_parts import (
    ok as _ok,
)
from cubes.api.openapi_parts import (
    op as _op,
)
from cubes.api.openapi_parts import (
    path_param as _path,
)
from cubes.api.openapi_parts import (
    query_param as _query,
)
from cubes.api.openapi_refresh import refresh_paths, refresh_schemas
from cubes.api.openapi_schemas import SCHEMAS as _SCHEMAS
from cubes.api.openapi_tasks import list_uploads_op, task_list_schemas
from cubes.api.openapi_team import team_paths, team_schemas
from cubes.api.openapi_webmaster import patch_feed_op, webmaster_paths, webmaster_schemas
from cubes.api.params import HOST_MAX, REGION_MAX, URL_MAX

__all__ = ["COUNTS", "OWNERSHIP", "document"]

#: who owns what on a site (shared/webmaster/rights.py, shared/webmaster/access.py), as the document says it
OWNERSHIP = (
    "Who owns what on a site: a claim names an origin (scheme, host and port: the URL you give, https://HOST for "
    "a bare host); a tenant has one claim on a host, so claiming another origin of it ends its right on the "
    "first. The proof (a DNS TXT record, the file /.well-known/turbocubes-verify.txt, or the meta tag in "
    "the real <head> of the home page) is looked for on that origin only, redirects to another origin are not "
    "followed, every attempt names the URL the token was read from, and the right it earns covers that origin "
    "alone: a proof on one port or scheme never covers another; a feed is registered, changed, checked or "
    "fetched on demand only on an origin you hold a right on (403 origin_not_held). "
    "Several tenants may hold rights on one origin; none can remove another's right, disable its feeds or "
    "switch off its pages (Turbo off is each holder's switch for its own pages). A page belongs to the tenant "
    "whose source (a feed, its uploads) published it: only that tenant may replace or delete it while it holds "
    "a right on the page's origin (another holder publishing the URL gets conflict.other_tenant and the page "
    "stays; DELETE /api/v1/pages answers 403 page_not_owned, naming no tenant); a page of a tenant whose right "
    "ended, or of nobody (the operator's feeds, the autoparser), may be replaced or deleted by any holder. "
    "Proofs are re-checked daily (api.proof_recheck_s); a proof not found starts a grace (api.proof_grace_s, a "
    "week) and is reported to its holder at once (a notice, the problem host.proof_lapsing); the right ends "
    "when the grace runs out. A right granted, ended or given up is told to each tenant that holds or held a "
    "right on the origin, a lapse and its restoration to the right's holder alone (GET /api/v1/notices), never "
    "naming another tenant. A host's feeds, pages, problems and waiting documents are shown to the tenant whose "
    "sources they are, a claim without a right shows the claim and nothing else; the searches that showed an "
    "origin's pages (GET /api/v1/hosts/{host}/queries) go to each holder of a right on that origin, and to no "
    "holder of another port or scheme."
)

#: how the query statistics are protected (cubes/wordstat/README.md says the scheme and why each attack fails)
COUNTS = (
    "The query statistics are approximate, by design: no sequence of requests may tell a count under "
    "wordstat.privacy_threshold (5). Each counter cell (a query's searches in a month, region and device; an "
    "origin's impressions of a query in a month) keeps a secret offset (0 to 5) drawn when it is first counted, "
    "and is published once its count less the offset reaches the threshold; every number shown is a sum of "
    "published cells and of nothing else, rounded to three significant digits, so a word less another, a total "
    "less its regions, a union of rare queries give no hidden count; a client (an address, an IPv6 /64, keyed "
    "by an HMAC under a key of the day that is then dropped) counts once per query and day, so padding a "
    'guessed query from one address adds one. A count under the threshold is null, shown as "< 5". Why each '
    "attack fails and what is left: cubes/wordstat/README.md."
)


_LIMITS_PARAMS = [_path("tenant", "tenant id")]


_MONTHS = {
    "name": "months",
    "in": "query",
    "required": False,
    "description": "the period: the last N months, this one included (1 to 24; default 1)",
    "schema": {"type": "integer", "minimum": 1, "maximum": 24, "default": 1},
}


def _paths() -> dict[str, Any]:
    upload_body = {
        "required": True,
        "description": "RSS / Turbo RSS / YML as XML, or JSON documents; parsed later by the parser cube",
        "content": {
            **{t: {"schema": {"type": "string"}} for t in _XML_TYPES},
            _JSON: {"schema": {}},
        },
    }
    upload_params = [
        _query(
            "host",
            {"type": "string", "minLength": 1, "maxLength": HOST_MAX},
            required=True,
            description="a verified host of yours",
        ),
        _query(
            "format",
            {"type": "string", "enum": ["rss", "turbo", "yml", "json"]},
            required=True,
            description="how the parser reads the body",
        ),
        _query(
            "mode",
            {"type": "string", "enum": ["production", "debug"]},
            required=False,
            description="debug: previews only, nothing is published",
        ),
        {
            "name": "Idempotency-Key",
            "in": "header",
            "required": False,
            "description": "a retry with the same key returns the first task",
            "schema": {"type": "string", "minLength": 1, "maxLength": 128},
        },
    ]
    return {
        "/api/v1/openapi.json": {
            "get": {
                "summary": "This document",
                "operationId": "openapi",
                "tags": ["meta"],
                "security": [],
                "responses": {
                    "200": {"description": "OpenAPI 3.1", "content": {_JSON: {"schema": {"type": "object"}}}},
                    "503": _error(503),
                },
            }
        },
        "/api/v1/feeds": {
            "post": _op(
                "Register a feed (idempotent per URL)",
                {**_ok(201, "Feed", "registered", Location=_STR), **_ok(200, "Feed", "already registered")},
                (400, 403, 415, 422),
                tag="webmaster",
                op_id="createFeed",
                body=_json_body("FeedRequest"),
            ),
            "get": _op(
                "List your feeds with their status",
                _ok(200, "FeedList", "your feeds"),
                (),
                tag="webmaster",
                op_id="listFeeds",
            ),
        },
        "/api/v1/feeds/{feed_id}": {
            "get": _op(
                "A feed, its status, its newest fetch with every problem, its roll-up and pages that lost something",
                _ok(200, "Feed", "the feed"),
                (404,),
                tag="webmaster",
                op_id="getFeed",
                params=[_path("feed_id", "feed id")],
            ),
            "patch": patch_feed_op(),
            "delete": _op(
                "Remove a feed",
                _ok(204, None, "removed"),
                (404,),
                tag="webmaster",
                op_id="deleteFeed",
                params=[_path("feed_id", "feed id")],
            ),
        },
        "/api/v1/uploads": {
            "post": _op(
                "Upload documents; answered once they are durably queued",
                _ok(202, "Accepted", "queued", Location=_STR),
                (400, 403, 415, 422),
                tag="partner",
                op_id="createUpload",
                params=upload_params,
                body=upload_body,
            ),
            "get": list_uploads_op(),
        },
        "/api/v1/uploads/{task_id}": {
            "get": _op(
                "Status of an upload task",
                _ok(200, "Task", "the task"),
                (404,),
                tag="partner",
                op_id="getUpload",
                params=[_path("task_id", "task id from the upload")],
            ),
        },
        "/api/v1/pages": {
            "delete": _op(
                "Delete a page (a versioned tombstone)",
                _ok(202, "Deletion", "deletion queued"),
                (403, 422),
                tag="partner",
                op_id="deletePage",
                params=[
                    _query(
                        "url",
                        {"type": "string", "minLength": 1, "maxLength": URL_MAX},
                        required=True,
                        description="the page URL, on an origin you hold a right on; the page must be published "
                        "by your sources, or by a tenant that holds no right on its origin any more (or nobody)",
                    )
                ],
            ),
        },
        "/api/v1/hosts": {
            "post": _op(
                "Claim a host at an origin (its URL: scheme, host, port); verify it next. A claim of another "
                "origin moves your claim there, and a right on the old origin ends",
                {**_ok(201, "HostClaim", "claimed", Location=_STR), **_ok(200, "HostClaim", "claimed already")},
                (400, 403, 415, 422),
                tag="hosts",
                op_id="claimHost",
                body=_json_body("HostClaimRequest"),
            ),
            "get": _op(
                "Your hosts and their verification tokens",
                _ok(200, "HostList", "your hosts"),
                (),
                tag="hosts",
                op_id="listHosts",
            ),
        },
        "/api/v1/hosts/{host}/verify": {
            "post": _op(
                "Check the claim's origin for its verification token now (DNS TXT, then the file and the meta tag "
                "in the <head>, same-origin redirects only); the attempts name the URL each was read from",
                _ok(200, "Verification", "checked (see verified)"),
                (403, 404, 422),
                tag="hosts",
                op_id="verifyHost",
                params=[_path("host", "a host you added", max_length=HOST_MAX)],
            ),
        },
        "/api/v1/hosts/{host}/turbo": {
            "put": _op(
                "Switch your Turbo pages of the host on or off (another holder's pages stay as they are)",
                _ok(200, "TurboSwitch", "switched; the host's feeds are fetched now to apply it"),
                (400, 403, 404, 413, 415, 422),
                tag="hosts",
                op_id="setHostTurbo",
                params=[_path("host", "a verified host of yours", max_length=HOST_MAX)],
                body=_json_body("TurboSwitchRequest"),
            ),
        },
        "/api/v1/hosts/{host}/branding": {
            "get": _op(
                "Your branding of the host on its Turbo pages, and where its logo is (pending, ok, failed)",
                _ok(200, "BrandingView", "null branding: the default look"),
                (403, 422),
                tag="hosts",
                op_id="getHostBranding",
                params=[_path("host", "a verified host of yours", max_length=HOST_MAX)],
            ),
            "put": _op(
                "Set your branding of the host: its name, logo, accent colour, menu and contact buttons, and a "
                "shop's cart URL template ({offer_id}, {url}) and one-click order (phone, e-mail, form); your "
                "pages there are rendered again in it, and a logo not in the CDN yet is fetched",
                _ok(200, "BrandingView", "kept; your pages are being rendered again"),
                (400, 403, 413, 415, 422),
                tag="hosts",
                op_id="setHostBranding",
                params=[_path("host", "a verified host of yours", max_length=HOST_MAX)],
                body=_json_body("Branding"),
            ),
            "delete": _op(
                "Back to the default look on your pages of the host",
                _ok(204, None, "removed; your pages are being rendered again"),
                (403, 422),
                tag="hosts",
                op_id="deleteHostBranding",
                params=[_path("host", "a verified host of yours", max_length=HOST_MAX)],
            ),
        },
        "/api/v1/hosts/{host}/queries": {
            "get": _op(
                "The searches that showed the pages of your right's origin on the host",
                _ok(200, "HostQueries", "most frequent first"),
                (403, 422),
                tag="wordstat",
                op_id="hostQueries",
                params=[_path("host", "a verified host of yours", max_length=HOST_MAX), _MONTHS],
            ),
        },
        "/api/v1/wordstat": {
            "get": _op(
                "How often a query is searched, with Wordstat's operators",
                _ok(200, "Frequency", "the frequency"),
                (422,),
                tag="wordstat",
                op_id="wordstat",
                params=[
                    _query(
                        "q",
                        {"type": "string", "minLength": 1, "maxLength": 300},
                        required=True,
                        description='words in any form; "…" these words only; !word this form; +в a function '
                        "word counted; [...] this order; (a|b) either; -word excluded",
                    ),
                    _MONTHS,
                    _query(
                        "region",
                        {"type": "string", "maxLength": REGION_MAX},
                        required=False,
                        description="one region only",
                    ),
                    _query(
                        "device",
                        {"type": "string", "enum": ["desktop", "mobile", "tablet"]},
                        required=False,
                        description="one device class only",
                    ),
                ],
            ),
        },
        "/api/v1/admin/limits/{tenant}": {
            "get": _op(
                "A tenant's limits",
                _ok(200, "Limits", "effective limits"),
                (403, 404),
                tag="admin",
                op_id="getLimits",
                params=_LIMITS_PARAMS,
                security=_ADMIN,
            ),
            "put": _op(
                "Set a tenant's limits (applies at once)",
                _ok(200, "Limits", "stored and applied"),
                (400, 403, 404, 413, 415, 422),
                tag="admin",
                op_id="putLimits",
                params=_LIMITS_PARAMS,
                body=_json_body("LimitsRequest"),
                security=_ADMIN,
            ),
            "delete": _op(
                "Back to the default limits",
                _ok(200, "Limits", "defaults apply"),
                (403, 404),
                tag="admin",
                op_id="deleteLimits",
                params=_LIMITS_PARAMS,
                security=_ADMIN,
            ),
        },
    }


def document(server_url: str = "/") -> dict[str, Any]:
    """The OpenAPI 3.1 document (a fresh dict each call)."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "turbocubes API",
            "version": "1.0.0",
            "description": "Webmaster and partner APIs: feeds, uploads, page deletions, per-tenant limits, query "
            "statistics. Who owns what on a site: the hosts tag; how the query counts are protected: the wordstat tag.",
        },
        "tags": [{"name": "hosts", "description": OWNERSHIP}, {"name": "wordstat", "description": COUNTS}],
        "externalDocs": {
            "description": "for people: every operation, how to start, and the problem codes (schemas/problems.md)",
            "url": "/docs",
        },
        "servers": [{"url": server_url}],
        "security": [{"bearerToken": []}],
        "paths": {
            **_paths(),
            **webmaster_paths(),
            **refresh_paths(),
            **opml_paths(),
            **history_paths(),
            **notify_paths(),
            **team_paths(),
        },
        "components": {
            "schemas": {
                **_SCHEMAS,
                **webmaster_schemas(),
                **refresh_schemas(),
                **task_list_schemas(),
                **opml_schemas(),
                **notify_schemas(),
                **team_schemas(),
            },
            "securitySchemes": {
                "bearerToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "tenant API token from `turbocubes hosts add`, or one the tenant made "
                    "(POST /api/v1/team/tokens): its scope is the call's role (read: a viewer's, GET only; write: "
                    "an editor's; owner: everything, the team and the notifications' settings too; 403 role_forbids "
                    "otherwise)",
                },
                "adminToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "admin token; its sha256 is api.admin_token_sha256",
                },
            },
        },
    }
