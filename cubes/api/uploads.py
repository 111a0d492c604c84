"""The partner API, modelled on the Yandex Turbo API (docs/architecture.md sections 1-2).

* ``POST /api/v1/uploads?host=H&format=rss|turbo|yml|json[&mode=debug]`` —
  the body goes, unparsed, into ``partner.uploads`` (inline up to
  ``api.inline_body_max``, else as a blob reference); ``202 {task_id}`` is
  answered only after the bus acknowledged the record (queue-based load
  leveling: the parser does the work at its own pace). A task row is created
  ``queued`` first, so the parser always finds it to update.
* ``GET /api/v1/uploads/{task_id}`` — queued / processing / done / failed,
  per-item results with their problems (``shared/problems/__init__.py``), the task's
  problems, and the preview links of a debug upload
  (``{frontend.public_url}/preview?task=<task_id>&url=<page URL>``,
  ``shared/previews.py``: the link opens the preview, never the live page).
* ``DELETE /api/v1/pages?url=U`` — a ``DocumentDeleted`` tombstone whose
  version is "now" in microseconds, so it beats every earlier version; only
  for a page on an origin the caller holds a right on, published by its own
  sources or by nobody's that still holds one (``shared.webmaster.access.page_access``).

``Idempotency-Key``: the first upload with a key creates the task; a retry
with the same key gets the same ``202`` and body, and creates nothing. If
the first attempt failed to reach the bus (503), its task is marked
``failed`` with ``NOT_ACCEPTED`` and the retry completes that same task.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from cubes.api.auth import TENANT, refusal, require_host
from cubes.api.bodies import (
    JSON_TYPES,
    XML_TYPES,
    check_declared_size,
    check_media_type,
    parse_json,
    read_body,
)
from cubes.api.context import ApiContext, ctx_of
from cubes.api.errors import ApiError, FieldError, ValidationFailed, json_response
from cubes.api.params import HOST_MAX, URL_MAX, bounded, path_id, too_long
from cubes.api.shedding import RETRY_AFTER_S
from shared.errors import TurbocubesError
from shared.messages import DocumentDeleted, PartnerUpload, SourceKind, SourceRef, UploadFormat
from shared.pages.state import UNDECIDED, PageView, task_views
from shared.previews import preview_path
from shared.runtime.cube import Output
from shared.stores import Task, TaskMode, TaskStatus
from shared.urls import canonical_host, canonical_url, host_of
from shared.webmaster.access import AccessRefused, page_access
from shared.webmaster.overview import page_json

__all__ = ["NOT_ACCEPTED", "add_routes", "preview_url", "task_json"]

#: the error of a task whose upload never reached the bus; a retry with its Idempotency-Key revives it
NOT_ACCEPTED = "not accepted: the message bus was unavailable; retry the upload"
_MODES = tuple(m.value for m in TaskMode)
#: Idempotency-Key values are opaque client strings; this bounds what we store
_KEY_MAX = 128


def _unavailable(message: str) -> ApiError:
    return ApiError(503, "unavailable", message, headers={"Retry-After": str(RETRY_AFTER_S)})


def preview_url(frontend_url: str, task_id: str, page_url: str) -> str:
    """Where the frontend shows the unpublished preview of ``page_url`` rendered by a debug upload."""
    return frontend_url.rstrip("/") + preview_path(task_id, page_url)


def task_json(task: Task, frontend_url: str = "", pages: Sequence[PageView] = ()) -> dict[str, Any]:
    """The task as the status endpoint shows it: the parser records the page URLs a debug upload
    rendered, shown here as links to their previews on the frontend; ``pages``: each item's page as it
    stands now (``shared/pages/state.py``: for a check, what would happen to it)."""
    return {
        "task_id": task.task_id,
        "host": task.host,
        "status": task.status.value,
        "mode": task.mode.value,
        "source_url": task.source_url,  # what a check was of (None: an upload of a body)
        "created_at": task.created_at,
        "updated_at": task.updated_at,
        "counts": task.counts(),
        "items": [
            {"url": i.url, "status": i.status, "error": i.error, "problems": [p.as_dict() for p in i.problems]}
            for i in task.items
        ],
        # the items past the first ones are counted, not listed (``counts`` has every one)
        "items_more": task.items_more,
        "errors": list(task.errors),
        "problems": [p.as_dict() for p in task.problems],
        # every problem by code, and how many are not listed in full (the lists are capped)
        "problem_counts": dict(task.problem_counts),
        "problems_more": task.problems_more,
        "preview_urls": [preview_url(frontend_url, task.task_id, u) for u in task.preview_urls],
        # each item's page as the pipeline judged it (images fetched, held back or not...); while any
        # is still undecided (its images being fetched), the verdicts are not all in
        "pages": [
            {**page_json(v), "preview_url": frontend_url.rstrip("/") + v.link if v.preview and v.link else None}
            for v in pages
        ],
        "verdicts_final": task.status.value in ("done", "failed") and not any(v.state in UNDECIDED for v in pages),
    }


def _accepted(task_id: str) -> web.Response:
    status_url = f"/api/v1/uploads/{task_id}"
    return json_response({"task_id": task_id, "status_url": status_url}, status=202, headers={"Location": status_url})


def _query(request: web.Request) -> tuple[str, UploadFormat, str]:
    errors: list[FieldError] = []
    host = ""
    raw_host = request.query.get("host", "")
    if not raw_host:
        errors.append(FieldError("host", "required: the host the documents belong to"))
    elif (long := too_long("host", raw_host, HOST_MAX)) is not None:
        errors.append(long)
    else:
        try:
            host = canonical_host(raw_host)
        except ValueError as exc:
            errors.append(FieldError("host", str(exc)))
    fmt: UploadFormat | None = None
    raw_format = request.query.get("format", "")
    try:
        fmt = UploadFormat(raw_format)
    except ValueError:
        allowed = ", ".join(f.value for f in UploadFormat)
        errors.append(FieldError("format", f"required, one of {allowed} (got {raw_format!r})"))
    mode = request.query.get("mode", "production")
    if mode not in _MODES:
        errors.append(FieldError("mode", f"one of {', '.join(_MODES)} (got {mode!r})"))
    key = request.headers.get("Idempotency-Key")
    if key is not None and not 1 <= len(key) <= _KEY_MAX:
        errors.append(FieldError("Idempotency-Key", f"1 to {_KEY_MAX} characters"))
    if errors:
        raise ValidationFailed(errors)
    assert fmt is not None
    return host, fmt, mode


async def _publish(ctx: ApiContext, outputs: list[Output]) -> None:
    try:
        await ctx.publish(outputs)
    except TurbocubesError as exc:
        if exc.retriable:
            raise _unavailable(f"the message bus is unavailable: {exc.message}") from exc
        raise


async def create_upload(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    tenant_id: str = request[TENANT]
    host, fmt, mode = _query(request)
    await require_host(ctx.stores.tenants, tenant_id, host)
    check_media_type(request, JSON_TYPES if fmt is UploadFormat.json else XML_TYPES)
    limit = ctx.settings.api.max_upload_bytes
    check_declared_size(request, limit)

    key = request.headers.get("Idempotency-Key")
    revived: Task | None = None
    if key is not None:
        earlier = await ctx.stores.tasks.find_by_idempotency_key(tenant_id, key)
        if earlier is not None:
            if not (earlier.status is TaskStatus.failed and earlier.errors == (NOT_ACCEPTED,)):
                return _accepted(earlier.task_id)  # a retry: the first answer, nothing new
            revived = earlier

    pressure = await ctx.shedder.pressure()
    if pressure.shed:
        why = (
            f"the upload queue is {pressure.lag} records behind"
            if pressure.reason == "lag"
            else "the message bus is unreachable"
        )
        raise _unavailable(f"uploads are paused: {why}; retry later")

    body = await read_body(request, limit)
    if request.content_length is None:
        # a chunked body declared nothing, so the gate could not charge it: charge it now
        (await ctx.limits.buckets(tenant_id)).bytes.charge(len(body))
    if fmt is UploadFormat.json:
        parse_json(body)  # well-formedness only; the parser validates the documents

    task_id = revived.task_id if revived is not None else uuid.uuid4().hex
    body_ref: str | None = None
    if len(body) > ctx.settings.api.inline_body_max:
        body_ref = f"uploads/{tenant_id}/{task_id}"
        try:
            await (await ctx.blobs()).put(body_ref, body, content_type=request.content_type)
        except TurbocubesError as exc:
            if exc.retriable:
                raise _unavailable(f"the blob store is unavailable: {exc.message}") from exc
            raise

    if revived is None:
        task = await ctx.stores.tasks.create(
            Task(task_id=task_id, tenant_id=tenant_id, host=host, idempotency_key=key, mode=TaskMode(mode)),
            now=ctx.clock.now(),
        )
        if task.task_id != task_id:
            return _accepted(task.task_id)  # a concurrent retry with the same key won the race
    message = PartnerUpload(
        task_id=task_id,
        tenant_id=tenant_id,
        host=host,
        format=fmt,
        mode="debug" if mode == "debug" else "production",
        body=None if body_ref else body,
        body_ref=body_ref,
        size=len(body),
        received_at=ctx.clock.now(),
    )
    try:
        await _publish(ctx, [Output("partner.uploads", message, key=host)])
    except ApiError:
        await ctx.stores.tasks.update(task_id, status=TaskStatus.failed, errors=[NOT_ACCEPTED])
        raise
    if revived is not None:
        await ctx.stores.tasks.update(task_id, status=TaskStatus.queued, errors=[])
    return _accepted(task_id)


async def get_upload(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    task = await ctx.stores.tasks.get(path_id(request, "task_id"), tenant_id=request[TENANT])
    if task is None:
        raise ApiError(404, "not_found", "no such upload task")
    return json_response(task_json(task, ctx.settings.frontend.public_url, await task_views(ctx.stores, task)))


async def delete_page(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    raw = bounded("url", request.query.get("url", ""), URL_MAX)
    if not raw:
        raise ValidationFailed([FieldError("url", "required: the URL of the page to delete")])
    try:
        url = canonical_url(raw)
        host = host_of(url)
    except ValueError as exc:
        raise ValidationFailed([FieldError("url", str(exc))]) from None
    tenant_id: str = request[TENANT]
    try:  # a right on the page's origin, and the page its own or nobody's (shared.webmaster.rights: the page rule)
        await page_access(ctx.stores, tenant_id, url)
    except AccessRefused as exc:
        raise refusal(exc) from None
    # microseconds since the epoch: newer than any version the parser gave this URL before now
    version = int(ctx.clock.time() * 1_000_000)
    message = DocumentDeleted(
        url=url,
        host=host,
        source=SourceRef(kind=SourceKind.upload, id=f"tenant:{tenant_id}"),
        version=version,
        reason="deleted by the partner",
        deleted_at=ctx.clock.now(),
    )
    await _publish(ctx, [Output("documents.deleted", message, key=url)])
    return json_response({"url": url, "version": version}, status=202)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_post("/api/v1/uploads", create_upload, name="uploads.create")
    router.add_get("/api/v1/uploads/{task_id}", get_upload, name="uploads.get", allow_head=False)
    router.add_delete("/api/v1/pages", delete_page, name="pages.delete")
