"""Preview pages of debug uploads: where they are stored and where they are shown (docs/architecture.md section 10).

A debug upload (``POST /api/v1/uploads?mode=debug``) renders its documents as
preview pages that are never published: the kvwriter stores each under
``preview_key(task, url)``, a KV key no public (http[s]) URL can equal, and
the frontend shows it at ``preview_path(task, url)``. The API's task status,
the console and the page-problem rows all name previews through these two,
so a link always opens the page it names (links once pointed at
``/turbo?...&preview=``, which showed the live page or a 404).
"""

from __future__ import annotations

from urllib.parse import urlencode

__all__ = ["NOT_PREVIEWED", "PREVIEWS_MAX", "PREVIEW_PREFIX", "preview_key", "preview_path"]

PREVIEW_PREFIX = "preview:"
#: pages a check or a debug upload renders as previews: the first ones; the rest are read (their
#: problems reported) but make no page and fetch no image, so one check costs the partner's host a
#: bounded number of requests through its lane whatever the size of the feed
PREVIEWS_MAX = 100
#: an upload task item's result past ``PREVIEWS_MAX``
NOT_PREVIEWED = "not_previewed"


def preview_key(task_id: str, url: str) -> str:
    """The KV key of a preview page: never equal to a public (http[s]) URL."""
    return f"{PREVIEW_PREFIX}{task_id}:{url}"


def preview_path(task_id: str, url: str) -> str:
    """The frontend path that shows the preview of ``url`` rendered by upload task ``task_id``."""
    return "/preview?" + urlencode({"task": task_id, "url": url})
