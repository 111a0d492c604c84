"""The OPML part of the OpenAPI document (``/api/v1/feeds/opml``, ``cubes/api/opml.py``)."""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_parts import RATE_HEADERS, ok, op

__all__ = ["opml_paths", "opml_schemas"]

_OPML = "text/x-opml"


def opml_paths() -> dict[str, Any]:
    export = op(
        "Your feeds as an OPML 2.0 file (format, autoparser and options in the tc namespace; no credentials)",
        {},
        (),
        tag="webmaster",
        op_id="exportOpml",
    )
    export["responses"] = {
        "200": {
            "description": "the OPML file",
            "headers": {**RATE_HEADERS, "Content-Disposition": {"schema": {"type": "string"}}},
            "content": {_OPML: {"schema": {"type": "string"}}},
        },
        **export["responses"],
    }
    return {
        "/api/v1/feeds/opml": {
            "get": export,
            "post": op(
                "Register every feed of an OPML file; each line's result (idempotent)",
                ok(200, "OpmlImport", "every outline's result"),
                (400, 415, 422),
                tag="webmaster",
                op_id="importOpml",
                body={
                    "required": True,
                    "description": "an OPML file (at most 1 MiB, 1,000 feeds)",
                    "content": {t: {"schema": {"type": "string"}} for t in (_OPML, "application/xml", "text/xml")},
                },
            ),
        }
    }


def opml_schemas() -> dict[str, Any]:
    return {
        "OpmlImport": {
            "type": "object",
            "required": ["lines", "counts", "more"],
            "properties": {
                "lines": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["line", "outline", "url", "result", "message"],
                        "properties": {
                            "line": {
                                "type": ["integer", "null"],
                                "description": "the outline's line in the file (null: past line 65,534)",
                            },
                            "outline": {
                                "type": "integer",
                                "description": "its number among the file's feeds, from 1 (a file on one line has "
                                "every feed on line 1)",
                            },
                            "url": {"type": "string"},
                            "result": {"type": "string", "enum": ["added", "updated", "unchanged", "refused"]},
                            "message": {"type": "string", "description": "why refused, or what was left out"},
                            "feed_id": {"type": ["string", "null"]},
                        },
                    },
                },
                "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                "more": {"type": "integer", "description": "outlines past the first 1,000, not read"},
            },
        }
    }
