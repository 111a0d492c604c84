"""The webmaster's part of the OpenAPI document: problems, fetches, previews, docs.

Problems are documented once: the ``Problem`` schema lists every code of
``shared/problems/codes.py`` and points at the table (``schemas/problems.md``,
``GET /api/v1/problems``, the docs page at ``/docs``).
"""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_parts import (
    JSON,
    NULLABLE_INT,
    NULLABLE_STR,
    NULLABLE_TIME,
    PUBLIC,
    STR,
    error,
    json_body,
    ok,
    op,
    path_param,
)
from cubes.api.openapi_schemas import OPTIONS_IN
from cubes.api.params import HOST_MAX
from shared.problems.codes import CODES
from shared.stores import PageState
from shared.urls import MAX_URL_LENGTH
from shared.webmaster.feeds import SERVICE_NAME_RE, SERVICES_MAX

__all__ = ["webmaster_paths", "webmaster_schemas"]

_REF = "#/components/schemas/"
_COUNTS = {"type": "object", "additionalProperties": {"type": "integer"}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF + name}


def _list(name: str) -> dict[str, Any]:
    return {"type": "array", "items": _ref(name)}


def webmaster_schemas() -> dict[str, Any]:
    return {
        "Problem": {
            "type": "object",
            "description": "A problem a webmaster can fix. Codes: schemas/problems.md, GET /api/v1/problems, /docs.",
            "required": ["code", "severity", "where", "message", "hint"],
            "properties": {
                "code": {"type": "string", "enum": list(CODES)},
                "severity": {"type": "string", "enum": ["error", "warning", "info"]},
                "where": {
                    "type": "object",
                    "properties": {
                        "feed": NULLABLE_STR,
                        "item": {**NULLABLE_INT, "description": "0-based index of the item in the body"},
                        "link": NULLABLE_STR,
                        "line": NULLABLE_INT,
                        "column": NULLABLE_INT,
                    },
                },
                "message": {"type": "string"},
                "hint": {"type": "string", "description": "how to fix it"},
                "offers": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "what to use instead, when there is something: the feeds an HTML page names "
                    "(feed.not_a_feed); absent otherwise",
                },
            },
        },
        "FetchReport": {
            "type": "object",
            "required": ["fetched_at", "result", "problems", "problem_counts"],
            "properties": {
                "fetched_at": {"type": "string", "format": "date-time"},
                "result": {"type": "string", "description": "parsed, partial, parse_error, unchanged, a fetch status"},
                "http_status": NULLABLE_INT,
                "items": NULLABLE_INT,
                "changed": {"type": "integer", "description": "new or changed items sent on to publication"},
                "unchanged": {"type": "integer"},
                "refused": {"type": "integer"},
                "removed": {"type": "integer"},
                "problems": {**_list("Problem"), "description": "the first 100, errors first"},
                "problem_counts": {**_COUNTS, "description": "every problem of the fetch, by code"},
                "more_problems": {"type": "integer"},
                "fetch_ids": {"type": "array", "items": {"type": "string"}},
            },
        },
        "PageProblems": {
            "type": "object",
            "required": ["url", "state", "status", "explanation", "live", "held", "problems"],
            "properties": {
                "url": {"type": "string"},
                "state": {"type": "string", "enum": [s.value for s in PageState]},
                "status": {"type": "string", "description": "the state in words, as the console says it"},
                "explanation": {"type": "string"},
                "live": {"type": "boolean", "description": "a version of the page is on Turbo now"},
                "held": {"type": "boolean", "description": "not published at its newest version (held back): see why"},
                "problems": _list("Problem"),
                "waiting_for": {"type": "array", "items": {"type": "object"}},
                "deadline": {"type": ["string", "null"]},
            },
        },
        "Rollup": {
            "type": "object",
            "properties": {
                "feeds": {"type": "integer"},
                "failing_feeds": {"type": "integer"},
                "items_refused": _COUNTS,
                "feed_problems": _COUNTS,
                "images_failed": _COUNTS,
                "warnings": _COUNTS,
                "conflicts": _list("Problem"),
                "conflicts_total": {"type": "integer"},
                "pages_with_problems": {"type": "integer"},
                "pages_more": {"type": "boolean"},
            },
        },
        "FeedPatch": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "autoparser": {"type": "boolean"},
                "format": {"type": "string", "enum": ["rss", "turbo", "yml", "auto"]},
                "services": {
                    "type": "array",
                    "maxItems": SERVICES_MAX,
                    "items": {"type": "string", "pattern": SERVICE_NAME_RE.pattern},
                },
                "options": OPTIONS_IN,
            },
        },
        "FetchOrder": {
            "type": "object",
            "required": ["feed_id", "fetch_id", "queued", "status_url"],
            "properties": {
                "feed_id": {"type": "string"},
                "fetch_id": {"type": "string"},
                "queued": {"type": "boolean", "description": "false: an order of the last 30 s is answered"},
                "status_url": {"type": "string"},
            },
        },
        "FetchState": {
            "type": "object",
            "required": ["feed_id", "fetch_id", "state"],
            "properties": {
                "feed_id": {"type": "string"},
                "fetch_id": {"type": "string"},
                "state": {"type": "string", "enum": ["pending", "done"]},
                "report": {"oneOf": [_ref("FetchReport"), {"type": "null"}]},
            },
        },
        "FetchList": {
            "type": "object",
            "required": ["feed_id", "fetches"],
            "properties": {"feed_id": {"type": "string"}, "fetches": _list("FetchReport")},
        },
        "PageList": {
            "type": "object",
            "required": ["feed_id", "pages"],
            "properties": {"feed_id": {"type": "string"}, "pages": _list("PageProblems")},
        },
        "CheckRequest": {
            "type": "object",
            "required": ["url"],
            "additionalProperties": False,
            "properties": {
                "url": {
                    "type": "string",
                    "maxLength": MAX_URL_LENGTH,
                    "description": "the feed's URL on a verified host of yours",
                }
            },
        },
        "CheckAccepted": {
            "type": "object",
            "required": ["task_id", "url", "status_url"],
            "properties": {
                "task_id": {"type": "string"},
                "url": {"type": "string"},
                "status_url": {"type": "string", "description": "GET it: items, problems, preview links"},
                "console_url": {"type": "string"},
            },
        },
        "SignupRequest": {
            "type": "object",
            "required": ["name"],
            "additionalProperties": False,
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 100}},
        },
        "Signup": {
            "type": "object",
            "required": ["tenant_id", "name", "token", "token_shown_once"],
            "properties": {
                "tenant_id": {"type": "string"},
                "name": {"type": "string"},
                "token": {"type": "string", "description": "the API token: shown this once, only its hash is kept"},
                "token_shown_once": {"type": "boolean"},
                "next": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "HostClaimRequest": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "url": {
                    "type": "string",
                    "maxLength": MAX_URL_LENGTH,
                    "description": "the site's URL: its origin (scheme, host, port) is where it is checked and "
                    "all the right covers",
                },
                "host": {
                    "type": "string",
                    "maxLength": HOST_MAX,
                    "description": "or the bare host name: the origin https://HOST",
                },
            },
        },
        "HostClaim": {
            "type": "object",
            "required": ["host", "verified", "verification_token", "how_to_verify"],
            "properties": {
                "host": {"type": "string"},
                "verified": {"type": "boolean", "description": "the claim is a right: its proof was found"},
                "origin": {"type": "string", "description": "scheme://host[:port]: all the right covers"},
                "alias": NULLABLE_STR,
                "verification_token": {"type": "string"},
                "how_to_verify": {"type": "object", "additionalProperties": {"type": "string"}},
                "turbo": {"type": "boolean", "description": "your Turbo pages on (PUT /api/v1/hosts/{host}/turbo)"},
                "right": _ref("Right"),
                "problems": {**_list("Problem"), "description": "what to fix about the right (a lapsing proof)"},
            },
        },
        "Right": {
            "type": "object",
            "description": "a right's life: proven, re-checked daily, ending a grace after its proof went missing",
            "properties": {
                "since": NULLABLE_TIME,
                "method": {"type": ["string", "null"], "enum": ["dns", "file", "meta", None]},
                "checked_at": NULLABLE_TIME,
                "lapsing_since": {**NULLABLE_TIME, "description": "the first re-check that missed the proof"},
                "ends_after": {**NULLABLE_TIME, "description": "the right ends at a re-check after this"},
            },
        },
        "NoticeList": {
            "type": "object",
            "required": ["notices"],
            "properties": {"notices": _list("Notice")},
        },
        "Notice": {
            "type": "object",
            "description": "a change of a right on an origin you hold or held a right on; never names another tenant",
            "required": ["notice_id", "at", "origin", "host", "change", "yours", "message"],
            "properties": {
                "notice_id": {"type": "string"},
                "at": {"type": "string", "format": "date-time"},
                "origin": {"type": "string"},
                "host": {"type": "string"},
                "change": {"type": "string", "enum": ["granted", "lapsing", "restored", "ended", "withdrawn"]},
                "yours": {"type": "boolean", "description": "the right that changed is yours"},
                "message": {"type": "string"},
                "ends_after": NULLABLE_TIME,
                "method": NULLABLE_STR,
            },
        },
        "HostOverview": {
            "type": "object",
            "description": "your claim; with a right in force, your own sources' feeds, pages and waiting documents "
            "(never another tenant's); a claim without a right shows the claim alone",
            "required": ["host", "verified"],
            "properties": {
                "host": {"type": "string"},
                "verified": {"type": "boolean"},
                "origin": {"type": "string"},
                "right": _ref("Right"),
                "problems": _list("Problem"),
                "rollup": _ref("Rollup"),
                "feeds": {"type": "array", "items": {"type": "object"}},
                "pages_with_problems": _list("PageProblems"),
                "waiting_for_images": {"type": "array", "items": {"type": "object"}},
            },
        },
        "ProblemCodes": {
            "type": "object",
            "required": ["codes"],
            "properties": {
                "codes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["code", "severity", "title", "hint"],
                        "properties": {k: {"type": "string"} for k in ("code", "severity", "title", "hint")},
                    },
                }
            },
        },
    }


_FEED = [path_param("feed_id", "feed id")]


def webmaster_paths() -> dict[str, Any]:
    return {
        "/api/v1/feeds/{feed_id}/fetch": {
            "post": op(
                "Fetch the feed now, through its host's polite crawler lane",
                ok(202, "FetchOrder", "ordered (or an order of the last 30 s answered)", Location=STR),
                (403, 404),
                tag="webmaster",
                op_id="fetchFeedNow",
                params=_FEED,
            ),
        },
        "/api/v1/feeds/{feed_id}/fetches": {
            "get": op(
                "The feed's last fetches with their problems, newest first",
                ok(200, "FetchList", "the history"),
                (404,),
                tag="webmaster",
                op_id="listFetches",
                params=_FEED,
            ),
        },
        "/api/v1/feeds/{feed_id}/fetches/{fetch_id}": {
            "get": op(
                "The outcome of a fetch-now order",
                ok(200, "FetchState", "pending, or done with the fetch's report"),
                (404,),
                tag="webmaster",
                op_id="getFetch",
                params=[*_FEED, path_param("fetch_id", "from POST .../fetch")],
            ),
        },
        "/api/v1/feeds/{feed_id}/pages": {
            "get": op(
                "The feed's live pages that lost something (an image that failed), with the problems",
                ok(200, "PageList", "pages with problems"),
                (404,),
                tag="webmaster",
                op_id="listFeedPages",
                params=_FEED,
            ),
        },
        "/api/v1/feeds/check": {
            "post": op(
                "Check a feed before registering it: fetched through the host's lane, parsed, rendered as "
                "previews, every problem reported; nothing published",
                ok(202, "CheckAccepted", "checking: follow status_url (an upload task)", Location=STR),
                (400, 403, 415, 422),
                tag="webmaster",
                op_id="checkFeed",
                body=json_body("CheckRequest"),
            ),
        },
        "/api/v1/signup": {
            "post": {
                **op(
                    "Sign up: a new tenant and its API token (shown once); rate-limited per address",
                    {201: {"description": "signed up", "content": {JSON: {"schema": _ref("Signup")}}}},
                    (400, 403, 415, 422, 429),
                    tag="onboarding",
                    op_id="signup",
                    body=json_body("SignupRequest"),
                ),
                "security": PUBLIC,
            }
        },
        "/api/v1/notices": {
            "get": op(
                "What changed about the rights on origins you hold or held a right on, newest first",
                ok(200, "NoticeList", "the notices"),
                (),
                tag="hosts",
                op_id="listNotices",
            ),
        },
        "/api/v1/hosts/{host}": {
            "get": op(
                "A host of yours: your claim and right; with the right, your feeds, roll-up of problems, pages "
                "waiting for images (never another tenant's)",
                ok(200, "HostOverview", "the host"),
                (403, 422),
                tag="hosts",
                op_id="getHost",
                params=[path_param("host", "a host you claimed", max_length=HOST_MAX)],
            ),
        },
        "/api/v1/problems": {
            "get": {
                "summary": "The table of problem codes: what each means and how to fix it",
                "operationId": "problemCodes",
                "tags": ["meta"],
                "security": PUBLIC,
                "responses": {
                    "200": {"description": "every code", "content": {JSON: {"schema": _ref("ProblemCodes")}}},
                    "503": error(503),
                },
            }
        },
        "/docs": {
            "get": {
                "summary": "This API for people: every operation, how to start, the problem codes",
                "operationId": "docs",
                "tags": ["meta"],
                "security": PUBLIC,
                "responses": {
                    "200": {"description": "HTML", "content": {"text/html": {"schema": {"type": "string"}}}},
                    "503": error(503),
                },
            }
        },
    }


def patch_feed_op() -> dict[str, Any]:
    return op(
        "Change a feed's registration: the autoparser on or off, format, services",
        ok(200, "Feed", "changed"),
        (400, 403, 404, 415, 422),
        tag="webmaster",
        op_id="patchFeed",
        params=_FEED,
        body=json_body("FeedPatch"),
    )
