"""Feed checks: a fetched feed parsed as a preview, publishing nothing (docs/architecture.md
section 10).

``POST /api/v1/feeds/check`` creates an upload task and orders a fetch through
the host's polite lane with the requester ``check:<task id>``
(``shared.webmaster.feeds.CHECK_PREFIX``). The crawl result comes back on
``crawl.feeds`` like any other; the parser recognizes the requester and
handles the body exactly as a debug upload of it (``mode=debug``): every item
prepared, every problem reported in the task, the pages rendered as previews
by the kvwriter, nothing published, no hash or ownership recorded. A failed
fetch ends the task as failed with its ``fetch.*`` problem.
"""

from __future__ import annotations

from collections.abc import Sequence

from cubes.parser.detect import detect_format
from cubes.parser.model import DetectedFormat
from shared.messages import CrawlResult, PartnerUpload, UploadFormat
from shared.stores import Task
from shared.webmaster.feeds import CHECK_PREFIX

__all__ = ["check_task_id", "check_upload", "feed_named", "feed_share"]

_UPLOAD_FORMATS = {
    DetectedFormat.turbo: UploadFormat.turbo,
    DetectedFormat.yml: UploadFormat.yml,
    DetectedFormat.json: UploadFormat.json,
}


def check_task_id(requesters: Sequence[str]) -> str | None:
    """The task of a check among a crawl result's requesters, if it answers one."""
    return next((r[len(CHECK_PREFIX) :] for r in requesters if r.startswith(CHECK_PREFIX)), None)


def feed_named(msg: CrawlResult) -> CrawlResult:
    """``msg`` naming the feed its requesters name when it carries no feed id.

    The crawler fetches a URL once for all who asked: a check and the feed's own poll of one URL share
    a result (in flight, or a copy of the remembered one), which may carry the check's empty feed_id;
    the feed is then named by its requester, and must not lose its fetch (it did).
    """
    named = next((r.removeprefix("feed:") for r in msg.requesters if r.startswith("feed:")), None)
    return msg.model_copy(update={"feed_id": named}) if msg.feed_id is None and named is not None else msg


def feed_share(msg: CrawlResult) -> CrawlResult | None:
    """The registered feed's share of a result a check asked for too (None: the check's alone)."""
    if msg.feed_id is None:
        return None
    return msg.model_copy(update={"requesters": [r for r in msg.requesters if not r.startswith(CHECK_PREFIX)]})


def check_upload(msg: CrawlResult, task: Task, body: bytes) -> PartnerUpload:
    """The fetched body as the debug upload it is checked as."""
    fmt = _UPLOAD_FORMATS.get(detect_format(body, None), UploadFormat.rss)
    return PartnerUpload(
        task_id=task.task_id,
        tenant_id=task.tenant_id,
        host=task.host,
        format=fmt,
        mode="debug",
        body=body,
        size=len(body),
        received_at=msg.fetched_at,
    )
