"""Which of a tenant's upload tasks a list shows: one reading of its filters and cursor for the API and
the console (docs/architecture.md section 10).

``?host=&mode=&status=&cursor=&limit=``: each filter optional; the cursor is opaque to the client (the
``created_at`` and id of the last task of the page before, so a page never repeats a task however many
are created meanwhile). A value that cannot be read is named with what was expected.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

from shared.stores.tasks import TASK_LIST_MAX, TaskMode, TaskQuery, TaskStatus
from shared.urls import canonical_host

__all__ = ["PARAMS", "cursor_of", "read_task_query"]

#: the parameters a list reads (anything else is left to the caller)
PARAMS = ("host", "mode", "status", "cursor", "limit")
#: a cursor's text is a microsecond count and a task id: never long
_CURSOR_MAX = 200


def cursor_of(after: tuple[int, str] | None) -> str | None:
    """The cursor a client gives back for the page after the one that ended at ``after``."""
    if after is None:
        return None
    return base64.urlsafe_b64encode(f"{after[0]}.{after[1]}".encode()).decode().rstrip("=")


def _after(raw: str) -> tuple[int, str]:
    if len(raw) > _CURSOR_MAX:
        raise ValueError("too long")
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError("not a cursor this API gave") from None
    micros, dot, task_id = text.partition(".")
    if not dot or not micros.isdigit() or not task_id:
        raise ValueError("not a cursor this API gave")
    return int(micros), task_id


def _choice(raw: str, kind: type[TaskMode] | type[TaskStatus]) -> str:
    allowed = ", ".join(v.value for v in kind)
    return f"one of {allowed} (got {raw[:40]!r})"


def read_task_query(tenant_id: str, params: Mapping[str, str], *, limit: int = 20) -> tuple[TaskQuery, dict[str, str]]:
    """The query the parameters ask for, and what is wrong with each parameter that cannot be read
    (by name; such a parameter filters nothing)."""
    errors: dict[str, str] = {}
    host = mode = status = after = None
    if raw := params.get("host", ""):
        try:
            host = canonical_host(raw)
        except ValueError as exc:
            errors["host"] = str(exc)
    if raw := params.get("mode", ""):
        try:
            mode = TaskMode(raw)
        except ValueError:
            errors["mode"] = _choice(raw, TaskMode)
    if raw := params.get("status", ""):
        try:
            status = TaskStatus(raw)
        except ValueError:
            errors["status"] = _choice(raw, TaskStatus)
    if raw := params.get("cursor", ""):
        try:
            after = _after(raw)
        except ValueError as exc:
            errors["cursor"] = f"{exc}: give the next_cursor of the page before"
    if raw := params.get("limit", ""):
        if raw.isdigit() and 1 <= int(raw) <= TASK_LIST_MAX:
            limit = int(raw)
        else:
            errors["limit"] = f"a whole number from 1 to {TASK_LIST_MAX} (got {raw[:20]!r})"
    query = TaskQuery(tenant_id, host=host, mode=mode, status=status, after=after, limit=limit)
    return query, errors
