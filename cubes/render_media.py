"""The images of ``turbocubes render``'s pages, fetched and judged as the pipeline judges them (docs/architecture.md
section 10).

A registered feed and a check (``POST /api/v1/feeds/check``) go through the cubes: the media cube
orders each image, the crawler fetches it in the host's lane, the cdn cube judges its bytes, and the
media and delay cubes decide what the page lost (``shared.pages.losses.page_problems``: held back, or
published without). ``turbocubes render`` has no pipeline, so it does those steps here, with the
same rules:

* each image is fetched by the same guarded, size- and time-limited fetcher (``http.allowlist`` and
  ``--allow`` apply), ``CONCURRENCY`` at a time, at most ``IMAGES_MAX`` images in all (the rest are
  not fetched, and the index says how many);
* a failed fetch is named as the cdn cube names it (``cdn.handler.failure_reason``: ``http_404``,
  ``timeout``...), a fetched body is judged by the cdn cube's own check (``cdn.checks.check_media``);
* the page's verdict is ``shared.pages.losses.page_problems`` with ``media.hold_incomplete``, and the page
  shows the images it will have: ``MediaDoc.rewrite`` with each good image at its own URL, a failed
  one removed, as the CDN rewrite removes it.

This module composes cubes' pure functions, as ``cubes/render.py`` does; the cubes never import
each other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from cubes.cdn.checks import check_media
from cubes.cdn.handler import failure_reason
from shared.config import Settings
from shared.http import Fetcher
from shared.images.media import MediaDoc
from shared.messages import CrawlKind, Document, FetchStatus, MediaKind
from shared.pages.losses import page_problems
from shared.stores import PageProblems, PageState

__all__ = ["CONCURRENCY", "IMAGES_MAX", "Judged", "judge_images"]

#: images a render fetches in all: a local check of a big feed stays a few minutes at most
IMAGES_MAX = 200
#: images fetched at a time: a webmaster's own site, asked gently
CONCURRENCY = 4


@dataclass(frozen=True, slots=True)
class Judged:
    """A page after its images were judged: the document it would be, and what it lost."""

    doc: Document
    state: PageState
    #: what it lost, as the console would tell it (None: nothing)
    row: PageProblems | None = None
    #: images not fetched: past ``IMAGES_MAX``, kept as they are
    unchecked: int = 0


async def _verdict(fetcher: Fetcher, settings: Settings, url: str, kind: MediaKind) -> str | None:
    """None for a good image, else why it failed (the cdn cube's reason)."""
    video = kind == MediaKind.video
    limit = settings.crawler.max_video_bytes if video else settings.crawler.max_image_bytes
    res = await fetcher.fetch(url, kind=CrawlKind.video if video else CrawlKind.image, max_bytes=limit)
    if res.status is not FetchStatus.ok or res.body is None:
        return failure_reason(res.status, res.http_status)
    checked = await asyncio.to_thread(
        check_media, res.body, max_bytes=limit, max_pixels=settings.media.max_pixels, allow_video=video
    )
    return None if checked.ok or checked.refusal is None else checked.refusal.value


async def judge_images(settings: Settings, docs: Sequence[Document], fetcher: Fetcher) -> list[Judged]:
    """Each of ``docs`` with its images fetched and judged (each distinct image once)."""
    media = [MediaDoc(d) for d in docs]
    wanted: dict[str, MediaKind] = {}
    for m in media:
        for url, kind in m.refs.items():
            if len(wanted) < IMAGES_MAX or url in wanted:
                wanted.setdefault(url, kind)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(url: str, kind: MediaKind) -> tuple[str, str | None]:
        async with gate:
            return url, await _verdict(fetcher, settings, url, kind)

    verdicts = dict(await asyncio.gather(*(one(u, k) for u, k in wanted.items())))
    out = []
    for doc, m in zip(docs, media, strict=True):
        unchecked = [u for u in m.refs if u not in verdicts]
        good = {u: u for u in m.refs if verdicts.get(u) is None}  # unchecked ones are kept as they are
        lost = {u: why for u in m.refs if (why := verdicts.get(u)) is not None}
        row = page_problems(doc, lost, hold=settings.media.hold_incomplete, shown=len(good))
        state = PageState.published if row is None else PageState.held if row.held else PageState.incomplete
        out.append(Judged(m.rewrite(good), state, row, len(unchecked)))
    return out
