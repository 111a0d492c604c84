"""The task list's part of the OpenAPI document (``GET /api/v1/uploads``, ``cubes/api/upload_list.py``)."""

from __future__ import annotations

from typing import Any

from cubes.api.openapi_parts import ok, op, query_param
from cubes.api.params import HOST_MAX
from shared.stores.tasks import TASK_LIST_MAX, TaskMode, TaskStatus

__all__ = ["list_uploads_op", "task_list_schemas"]

_TIME = {"type": ["string", "null"], "format": "date-time"}


def list_uploads_op() -> dict[str, Any]:
    return op(
        "Your upload tasks and feed checks, newest first",
        ok(200, "TaskList", "one page of your tasks"),
        (422,),
        tag="partner",
        op_id="listUploads",
        params=[
            query_param(
                "host",
                {"type": "string", "maxLength": HOST_MAX},
                required=False,
                description="only the tasks of this host",
            ),
            query_param(
                "mode",
                {"type": "string", "enum": [m.value for m in TaskMode]},
                required=False,
                description="production: uploads that publish; debug: debug uploads and feed checks (previews only)",
            ),
            query_param(
                "status",
                {"type": "string", "enum": [s.value for s in TaskStatus]},
                required=False,
                description="only the tasks in this state",
            ),
            query_param(
                "cursor",
                {"type": "string", "maxLength": 200},
                required=False,
                description="the next_cursor of the page before (absent: the newest tasks)",
            ),
            query_param(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": TASK_LIST_MAX, "default": 20},
                required=False,
                description="tasks on a page",
            ),
        ],
    )


def task_list_schemas() -> dict[str, Any]:
    return {
        "TaskSummary": {
            "type": "object",
            "required": ["task_id", "host", "mode", "status", "counts", "problem_counts", "status_url"],
            "properties": {
                "task_id": {"type": "string"},
                "host": {"type": "string"},
                "mode": {"type": "string", "enum": [m.value for m in TaskMode]},
                "status": {"type": "string", "enum": [s.value for s in TaskStatus]},
                "source_url": {"type": ["string", "null"], "description": "a feed check's: the URL it fetched"},
                "created_at": _TIME,
                "updated_at": _TIME,
                "counts": {
                    "type": "object",
                    "additionalProperties": {"type": "integer"},
                    "description": "items by status",
                },
                "problem_counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                "status_url": {"type": "string", "description": "the whole task: items, problems, previews"},
            },
        },
        "TaskList": {
            "type": "object",
            "required": ["tasks"],
            "properties": {
                "tasks": {"type": "array", "items": {"$ref": "#/components/schemas/TaskSummary"}},
                "next_cursor": {
                    "type": "string",
                    "description": "give it as cursor for the next page; absent on the last",
                },
            },
        },
    }
