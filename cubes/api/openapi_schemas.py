"""The component schemas of the OpenAPI document (``openapi.py``): the API's request and answer bodies.

Data, written by hand like the rest of the document; the webmaster's schemas (problems, fetches,
onboarding) are in ``openapi_webmaster.py``.
"""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_parts import NULLABLE_INT as _NULLABLE_INT
from cubes.api.openapi_parts import NULLABLE_STR as _NULLABLE_STR
from cubes.api.openapi_parts import NULLABLE_TIME as _NULLABLE_TIME
from shared.urls import MAX_URL_LENGTH
from shared.webmaster.branding import Branding
from shared.webmaster.feed_options import FeedOptions, FeedOptionsIn
from shared.webmaster.feeds import SERVICE_NAME_RE, SERVICES_MAX, WEBMASTER_FORMATS

__all__ = ["OPTIONS_IN", "SCHEMAS"]


def _from_models() -> dict[str, Any]:
    """The feed options' schemas, generated from their models (so the document and the rules agree)."""
    out: dict[str, Any] = {}
    for model in (FeedOptionsIn, FeedOptions, Branding):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        out.update(schema.pop("$defs", {}))
        out[model.__name__] = schema
    return out


#: a request's ``options``: merged over the feed's current ones (null removes them all)
OPTIONS_IN: dict[str, Any] = {
    "oneOf": [{"$ref": "#/components/schemas/FeedOptionsIn"}, {"type": "null"}],
    "description": "the feed's fetch options and filters, merged over its current ones (a key given as null "
    "removes it; null removes them all); the password and header values are sealed and never shown again",
}

SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error", "message"],
        "properties": {
            "error": {"type": "string", "description": "a stable, machine-readable code"},
            "message": {"type": "string"},
            "fields": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["field", "message"],
                    "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                },
            },
        },
    },
    "FeedRequest": {
        "type": "object",
        "required": ["url"],
        "additionalProperties": False,
        "properties": {
            "url": {
                "type": "string",
                "format": "uri",
                "maxLength": MAX_URL_LENGTH,
                "description": "absolute http(s) URL of a verified host",
            },
            "format": {
                "type": "string",
                "enum": [f.value for f in WEBMASTER_FORMATS],
                "default": "auto",
                "description": "auto: the parser detects it from the body",
            },
            "autoparser": {"type": "boolean", "default": False, "description": "also read the site's HTML pages"},
            "services": {
                "type": "array",
                "maxItems": SERVICES_MAX,
                "items": {"type": "string", "pattern": SERVICE_NAME_RE.pattern},
            },
            "options": OPTIONS_IN,
        },
    },
    "Feed": {
        "type": "object",
        "required": ["feed_id", "url", "host", "format", "services", "created_at", "status"],
        "properties": {
            "feed_id": {"type": "string"},
            "url": {"type": "string"},
            "host": {"type": "string"},
            "format": {"type": "string"},
            "services": {"type": "array", "items": {"type": "string"}},
            "autoparser": {"type": "boolean"},
            "options": {"$ref": "#/components/schemas/FeedOptions"},
            "has_credentials": {"type": "boolean", "description": "a password or header values are kept, sealed"},
            "created_at": _NULLABLE_TIME,
            "latest_fetch": {
                "oneOf": [{"$ref": "#/components/schemas/FetchReport"}, {"type": "null"}],
                "description": "the newest fetch with every problem and its hint",
            },
            "rollup": {"$ref": "#/components/schemas/Rollup"},
            "pages_with_problems": {"type": "array", "items": {"$ref": "#/components/schemas/PageProblems"}},
            "fetches_url": {"type": "string"},
            "status": {
                "type": "object",
                "properties": {
                    "last_fetch_at": _NULLABLE_TIME,
                    "last_http_status": _NULLABLE_INT,
                    "last_result": _NULLABLE_STR,
                    "items": _NULLABLE_INT,
                    "last_error": _NULLABLE_STR,
                    # the two halves last_result / last_error are read from: the fetch and the parse
                    "fetch_result": _NULLABLE_STR,
                    "fetch_error": _NULLABLE_STR,
                    "parse_result": _NULLABLE_STR,
                    "parse_error": _NULLABLE_STR,
                    "error_line": _NULLABLE_INT,
                    "error_column": _NULLABLE_INT,
                    "next_fetch_at": _NULLABLE_TIME,
                    # what chose next_fetch_at when the origin did (its ttl, Cache-Control, skipHours...)
                    "schedule_reason": _NULLABLE_STR,
                    "consecutive_failures": {"type": "integer"},
                },
            },
        },
    },
    "FeedList": {
        "type": "object",
        "required": ["feeds"],
        "properties": {"feeds": {"type": "array", "items": {"$ref": "#/components/schemas/Feed"}}},
    },
    "Accepted": {
        "type": "object",
        "required": ["task_id", "status_url"],
        "properties": {"task_id": {"type": "string"}, "status_url": {"type": "string"}},
    },
    "Task": {
        "type": "object",
        "required": ["task_id", "host", "status", "items", "errors", "preview_urls", "counts"],
        "properties": {
            "task_id": {"type": "string"},
            "host": {"type": "string"},
            "status": {"type": "string", "enum": ["queued", "processing", "done", "failed"]},
            "mode": {"type": "string", "enum": ["production", "debug"], "description": "debug: previews only"},
            "source_url": {"type": ["string", "null"], "description": "a feed check's: the URL it fetched"},
            "created_at": _NULLABLE_TIME,
            "updated_at": _NULLABLE_TIME,
            "counts": {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "description": "every item of the upload by result (ok, rejected, ...), listed or not",
            },
            "items": {
                "type": "array",
                "description": "one result per item, the first 1,000 of them (refused items first); counts has all",
                "items": {
                    "type": "object",
                    "required": ["url", "status"],
                    "properties": {
                        "url": {"type": "string"},
                        "status": {"type": "string"},
                        "error": _NULLABLE_STR,
                        "problems": {"type": "array", "items": {"$ref": "#/components/schemas/Problem"}},
                    },
                },
            },
            "items_more": {"type": "integer", "description": "items counted in counts but not listed in items"},
            "errors": {"type": "array", "items": {"type": "string"}, "description": "the problems as lines"},
            "problems": {"type": "array", "items": {"$ref": "#/components/schemas/Problem"}},
            "problem_counts": {
                "type": "object",
                "additionalProperties": {"type": "integer"},
                "description": "every problem of the upload by code, listed in full or not",
            },
            "problems_more": {
                "type": "integer",
                "description": "problems counted but not listed: the first 50 are; past the first 100 items "
                "with problems, an item's error is its problem's code",
            },
            "preview_urls": {
                "type": "array",
                "items": {"type": "string"},
                "description": "debug uploads: frontend links that open the unpublished previews",
            },
        },
    },
    "Deletion": {
        "type": "object",
        "required": ["url", "version"],
        "properties": {"url": {"type": "string"}, "version": {"type": "integer"}},
    },
    "HostList": {
        "type": "object",
        "required": ["hosts"],
        "properties": {
            "hosts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["host", "verified", "alias", "verification_token", "how_to_verify"],
                    "properties": {
                        "host": {"type": "string"},
                        "verified": {"type": "boolean"},
                        "alias": {
                            "type": ["string", "null"],
                            "description": "the www. spelling this host is one site with: you verified both",
                        },
                        "verification_token": {"type": "string"},
                        "how_to_verify": {"type": "object", "additionalProperties": {"type": "string"}},
                    },
                },
            }
        },
    },
    "Count": {
        "type": "object",
        "required": ["count", "display"],
        "properties": {
            "count": {
                "type": ["integer", "null"],
                "description": "approximate: the sum of the counter cells (query x month x region x device) that are"
                " published, each with a secret offset, rounded to three significant digits (a multiple of the"
                " threshold below that); null when no cell is (never a count under the privacy threshold)",
            },
            "display": {"type": "string", "description": 'the count as shown: "< 5" under the threshold'},
        },
    },
    "Frequency": {
        "type": "object",
        "required": [
            "query",
            "period_months",
            "privacy_threshold",
            "total",
            "months",
            "regions",
            "devices",
            "similar",
            "approximate",
        ],
        "properties": {
            "query": {"type": "string", "description": "the query as understood (canonical form)"},
            "period_months": {"type": "integer"},
            "privacy_threshold": {"type": "integer"},
            "total": {"$ref": "#/components/schemas/Count"},
            "months": {
                "type": "array",
                "description": "searches per month, oldest first (24 months)",
                "items": {
                    "type": "object",
                    "required": ["month", "count", "display"],
                    "properties": {
                        "month": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$"},
                        "count": {"type": ["integer", "null"]},
                        "display": {"type": "string"},
                    },
                },
            },
            "regions": {"type": "array", "items": {"$ref": "#/components/schemas/Share"}},
            "devices": {"type": "array", "items": {"$ref": "#/components/schemas/Share"}},
            "similar": {
                "type": "array",
                "description": "the most searched queries this one counts (each searched at least the threshold)",
                "items": {
                    "type": "object",
                    "required": ["query", "count", "display"],
                    "properties": {
                        "query": {"type": "string"},
                        "count": {"type": ["integer", "null"]},
                        "display": {"type": "string"},
                    },
                },
            },
            "approximate": {"type": "boolean", "description": "true: more queries matched than were checked"},
        },
    },
    "Share": {
        "type": "object",
        "required": ["count", "display", "share"],
        "properties": {
            "region": {"type": "string"},
            "device": {"type": "string", "enum": ["desktop", "mobile", "tablet"]},
            "count": {"type": ["integer", "null"]},
            "display": {"type": "string"},
            "share": {"type": ["number", "null"], "description": "of the period's searches; null under the threshold"},
        },
    },
    "HostQueries": {
        "type": "object",
        "required": ["host", "origin", "period_months", "privacy_threshold", "queries", "hidden"],
        "properties": {
            "host": {"type": "string"},
            "origin": {"type": "string", "description": "whose pages the searches showed: your right's origin"},
            "period_months": {"type": "integer"},
            "privacy_threshold": {"type": "integer"},
            "queries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["query", "impressions"],
                    "properties": {"query": {"type": "string"}, "impressions": {"type": "integer"}},
                },
            },
            "hidden": {
                "type": "integer",
                "description": "published queries past the list's end (queries that showed the pages fewer times than"
                " the threshold are in no number, this one included)",
            },
        },
    },
    "BrandingView": {
        "type": "object",
        "required": ["host", "branding", "logo"],
        "properties": {
            "host": {"type": "string"},
            "branding": {"oneOf": [{"$ref": "#/components/schemas/Branding"}, {"type": "null"}]},
            "logo": {
                "type": "object",
                "required": ["status"],
                "properties": {
                    "status": {"type": "string", "enum": ["none", "pending", "ok", "failed"]},
                    "cdn_url": {"type": "string"},
                    "reason": {"type": ["string", "null"]},
                },
            },
        },
    },
    "TurboSwitchRequest": {
        "type": "object",
        "required": ["enabled"],
        "additionalProperties": False,
        "properties": {"enabled": {"type": "boolean", "description": "false: every page of the host is removed"}},
    },
    "TurboSwitch": {
        "type": "object",
        "description": "What a switch did (shared/webmaster/turbo_switch.py); the counts are the host page's.",
        "required": [
            "host",
            "turbo",
            "fetching",
            "other_feeds_fetching",
            "pages_on_turbo",
            "pages_removed",
            "autoparser_pages_fetched_again",
            "uploaded_pages_to_upload_again",
            "said",
        ],
        "properties": {
            "host": {"type": "string"},
            "turbo": {"type": "boolean"},
            "fetching": {
                "type": "array",
                "items": {"type": "string"},
                "description": "feeds of the host fetched now: their fetches apply the switch",
            },
            "other_feeds_fetching": {
                "type": "integer",
                "description": "how many of those are the operator's: no other holder keeps the host's pages on",
            },
            "pages_on_turbo": {
                "type": "integer",
                "description": "off: your pages of the host on Turbo at the switch, taken off Turbo and search now",
            },
            "pages_removed": {
                "type": "integer",
                "description": "on: your pages of the host off Turbo (feeds publish again what they still have)",
            },
            "autoparser_pages_fetched_again": {
                "type": "integer",
                "description": "on: the autoparser's removed pages of the host, fetched again through its crawl lane",
            },
            "uploaded_pages_to_upload_again": {
                "type": "integer",
                "description": "on: your uploaded pages that were removed: only a new upload brings them back",
            },
            "said": {"type": "string", "description": "the switch in a sentence, as the console says it"},
        },
        "example": {
            "host": "news.example",
            "turbo": True,
            "fetching": ["3f1c9a0e2b7d4c55"],
            "other_feeds_fetching": 0,
            "pages_on_turbo": 0,
            "pages_removed": 12,
            "autoparser_pages_fetched_again": 8,
            "uploaded_pages_to_upload_again": 0,
            "said": "Turbo pages of news.example switched on: 1 feed of yours fetched now, each publishing again "
            "what it still has (12 pages of yours were off Turbo); 8 pages the autoparser had published are "
            "fetched again.",
        },
    },
    "Verification": {
        "type": "object",
        "required": ["host", "verified", "method", "attempts"],
        "properties": {
            "host": {"type": "string"},
            "origin": {"type": "string", "description": "where the proof was looked for: all the right covers"},
            "verified": {"type": "boolean"},
            "method": {"type": ["string", "null"], "enum": ["dns", "file", "meta", None]},
            "attempts": {
                "type": "array",
                "items": {"type": "string"},
                "description": "each attempt, naming the URL the token was read from (after same-origin redirects)",
            },
        },
    },
    "LimitsRequest": {
        "type": "object",
        "required": ["rps", "burst", "bytes_per_s"],
        "additionalProperties": False,
        "properties": {
            "rps": {"type": "number", "exclusiveMinimum": 0, "maximum": 1_000_000},
            "burst": {"type": "integer", "minimum": 1, "maximum": 1_000_000},
            "bytes_per_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 100 * 1024**3},
        },
    },
    "Limits": {
        "type": "object",
        "required": ["tenant_id", "rps", "burst", "bytes_per_s", "custom"],
        "properties": {
            "tenant_id": {"type": "string"},
            "rps": {"type": "number"},
            "burst": {"type": "integer"},
            "bytes_per_s": {"type": "number"},
            "custom": {"type": "boolean", "description": "false: the configured defaults apply"},
        },
    },
}

SCHEMAS.update(_from_models())
