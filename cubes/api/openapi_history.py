"""The problem history's part of the OpenAPI document (``GET /api/v1/feeds/{feed_id}/problems``)."""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_parts import ok, op, path_param
from shared.problems.codes import CODES

__all__ = ["history_paths", "history_schemas"]

_TIME = {"type": "string", "format": "date-time"}


def history_paths() -> dict[str, Any]:
    return {
        "/api/v1/feeds/{feed_id}/problems": {
            "get": op(
                "Each problem code's occurrences on the feed: first and last seen, new, ongoing or resolved",
                ok(200, "ProblemHistory", "the occurrences, the open ones first"),
                (404,),
                tag="webmaster",
                op_id="listFeedProblems",
                params=[path_param("feed_id", "feed id")],
            )
        }
    }


def history_schemas() -> dict[str, Any]:
    return {
        "ProblemHistory": {
            "type": "object",
            "required": ["feed_id", "problems"],
            "properties": {
                "feed_id": {"type": "string"},
                "problems": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["code", "severity", "state", "first_seen", "last_seen", "seen"],
                        "properties": {
                            "code": {"type": "string", "enum": list(CODES)},
                            "severity": {"type": "string", "enum": ["error", "warning", "info"]},
                            "state": {
                                "type": "string",
                                "enum": ["new", "ongoing", "resolved"],
                                "description": "new: seen by one fetch so far; a resolved code that returns is new",
                            },
                            "first_seen": _TIME,
                            "last_seen": _TIME,
                            "seen": {"type": "integer", "description": "fetches that found it"},
                            "resolved_at": {**_TIME, "type": ["string", "null"]},
                        },
                    },
                },
            },
        }
    }
