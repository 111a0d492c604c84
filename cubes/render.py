"""``turbocubes render FILE|URL``: a feed's Turbo pages as local HTML files, with every problem.

For a webmaster who checks a feed before publishing it: the feed is read (a
file, or a URL fetched through the crawler's SSRF guard and limits;
``--allow`` lets a local test server through), parsed as the parser cube
does, every item prepared as it would be published, and each page rendered
as the kvwriter renders it, into ``--out`` (default ``./turbo-pages``): one
``.html`` per page and an ``index.html`` listing the pages and every problem
with its fix. Nothing is published, nothing is stored.

Each page's images are fetched and judged as the pipeline judges them
(``render_media.py``): a page that lost an image for good is reported as
"would be held back" (its file shows what it kept), one whose image failed
for now as "would be published without some content", with every image's
problem -- the verdicts the check and the registered feed give. The one
difference from the published page: images point at the feed's own URLs
(``MediaRule.source``), since there is no CDN here.

Exit status: 0 when every item made a page, 1 when some item was refused or
would be held back, or the feed could not be read (the problems say why), 2 on
bad arguments.

This module composes two cubes' pure functions (the parser's parse and
prepare, the kvwriter's render), like the launcher composes cubes; the cubes
themselves never import each other.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

from cubes.kvwriter.render import render
from cubes.parser.documents import prepare_deletions, source_kind, to_document
from cubes.parser.feed import Limits, parse_feed
from cubes.parser.preparing import PRELOAD, Preparer
from cubes.parser.problems import to_problems
from cubes.parser.sanitize import ContentCleaner
from cubes.render_media import IMAGES_MAX, Judged, judge_images
from shared.clock import SystemClock
from shared.config import Settings, load_settings
from shared.http import Fetcher
from shared.images.media import MediaDoc
from shared.messages import CrawlKind, SourceRef
from shared.offload import Offload
from shared.pages.safehtml import MediaRule, SafeHtml
from shared.pages.state import PageView
from shared.pages.style import PAGE_CSS, STYLESHEET_PATH
from shared.pages.templates import html_environment
from shared.problems import Problem, Severity
from shared.stores import PageState
from shared.webmaster.words import counted

__all__ = ["render_command", "run"]

_SLUG = re.compile(r"[^a-z0-9]+")


def run(args: argparse.Namespace) -> int:
    """``turbocubes render`` with its parsed arguments (declared in ``cubes/cli.py``)."""
    return asyncio.run(
        render_command(
            load_settings(args.config),
            args.source,
            fmt=args.format,
            base_url=args.base_url,
            out_dir=Path(args.out),
            allow=args.allow,
            images=args.images,
        )
    )


async def _read(
    settings: Settings, source: str, allow: list[str], err: TextIO, resolver: Any
) -> tuple[bytes, str | None] | None:
    if not source.startswith(("http://", "https://")):
        data = await asyncio.to_thread(_read_file, Path(source))
        if data is None:
            print(f"{source}: error: no such file (give a file path or an http(s) URL)", file=err)
            return None
        return data, None
    fetcher = Fetcher(_allowing(settings, allow), resolver=resolver)
    try:
        res = await fetcher.fetch(source, kind=CrawlKind.feed)
    finally:
        await fetcher.close()
    if res.body is None or res.http_status is None or not 200 <= res.http_status < 300:
        hint = " (a local server? --allow 127.0.0.1/32; the cube's setting is http.allowlist)"
        local = res.status.value == "blocked_address"
        print(f"{source}: error: fetch failed: {res.status.value}: {res.error or res.http_status}"
              f"{hint if local else ''}", file=err)  # fmt: skip
        return None
    return res.body, res.headers.get("content-type")


def _read_file(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def _slug(n: int, url: str) -> str:
    path = urlsplit(url).path.strip("/").lower()
    return f"{n:03d}-{_SLUG.sub('-', path).strip('-')[:60] or 'page'}.html"


def _write(
    out_dir: Path, source: str, judged: list[Judged], sanitizer: SafeHtml, problems: list[Problem]
) -> list[tuple[str, Judged, PageView]]:
    """Render each judged page into its file and write the index; (file, page, its view) per page."""
    now = SystemClock().now()
    out_dir.mkdir(parents=True, exist_ok=True)
    # the shared stylesheet beside the pages, linked relatively: the frontend serves it at STYLESHEET_PATH
    sheet = STYLESHEET_PATH.lstrip("/")
    (out_dir / sheet).parent.mkdir(parents=True, exist_ok=True)
    (out_dir / sheet).write_text(PAGE_CSS, encoding="utf-8")
    pages = []
    for n, j in enumerate(judged, 1):
        name = _slug(n, j.doc.url)
        html = render(j.doc, sanitizer, written_at=now).html.replace(f'href="{STYLESHEET_PATH}"', f'href="{sheet}"')
        (out_dir / name).write_text(html, encoding="utf-8")
        view = PageView(url=j.doc.url, state=j.state, preview=True, problems=j.row.problems if j.row else ())
        pages.append((name, j, view))
    index = html_environment("cubes").get_template("render_index.html")
    (out_dir / "index.html").write_text(
        index.render(
            source=source,
            pages=pages,
            problems=problems,
            unchecked=sum(j.unchecked for j in judged),
            images_max=IMAGES_MAX,
        ),
        encoding="utf-8",
    )
    return pages


async def render_command(
    settings: Settings,
    source: str,
    *,
    fmt: str = "auto",
    base_url: str | None = None,
    out_dir: Path = Path("turbo-pages"),
    allow: list[str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    images: bool = True,
    resolver: Any = None,
) -> int:
    """``resolver``: what the SSRF guard wraps to resolve hosts (tests map their hosts to 127.0.0.1)."""
    out, err = out or sys.stdout, err or sys.stderr
    if base_url is not None and (not base_url.startswith(("http://", "https://")) or not urlsplit(base_url).hostname):
        print(f"--base-url {base_url!r}: error: give an absolute http(s) URL", file=err)
        return 2
    read = await _read(settings, source, allow or [], err, resolver)
    if read is None:
        return 2 if not source.startswith(("http://", "https://")) else 1
    body, content_type = read
    url = source if source.startswith(("http://", "https://")) else base_url
    host = urlsplit(url).hostname if url else None
    # the parser cube's limits: a gzipped file inflates to at most parser.max_body_bytes there too
    limits = Limits(settings.parser.max_items, settings.parser.max_item_bytes, settings.parser.max_body_bytes)
    result = parse_feed(
        body, url=url, content_type=content_type, declared_format=None if fmt == "auto" else fmt, limits=limits
    )
    cleaner = ContentCleaner(settings.kvwriter.video_hosts, hold_incomplete=settings.media.hold_incomplete)
    # an item past 16 KB of HTML in a worker process under the parser's deadline, as the cube does
    offload = Offload(settings.runtime.offload_workers, preload=PRELOAD)
    try:
        preparer = Preparer(cleaner, offload, settings.parser.item_deadline_s)
        cands, errs = await preparer.prepare(result.items, host, threaded=True)
    finally:
        offload.close()
    _, derrs = prepare_deletions(result.deletions, feed_host=host)
    # what the pages could not carry is told too (they are published with it, as in the cube)
    warnings = [w for cand in cands for w in cand.warnings]
    problems: list[Problem] = to_problems([*result.errors, *errs, *derrs, *warnings])
    if host is None and any(p.code == "item.bad_link" for p in problems):
        print("note: a file has no address of its own: give --base-url for its relative links", file=err)
    ref = SourceRef(kind=source_kind(result.format), id="render")
    now = SystemClock().now()
    docs = [to_document(c, source=ref, version=0, seen_at=now, parsed_at=now) for c in cands]
    if images:
        fetcher = Fetcher(_allowing(settings, allow or []), resolver=resolver)
        try:  # the images, fetched and judged as the pipeline judges them (render_media.py)
            judged = await judge_images(settings, docs, fetcher)
        finally:
            await fetcher.close()
    else:
        judged = [Judged(d, PageState.published, unchecked=len(MediaDoc(d).refs)) for d in docs]
    sanitizer = SafeHtml(media=MediaRule.source, video_hosts=settings.kvwriter.video_hosts, page=True)
    pages = await asyncio.to_thread(_write, out_dir, source, judged, sanitizer, problems)
    for p in problems:
        print(f"{source}: {p.severity.value}: {p.describe()}\n  fix: {p.hint}", file=err)
    for _, j, view in pages:
        if view.state is not PageState.published:
            print(f"{j.doc.url}: {view.text.lower()}: {view.explanation}", file=err)
            for p in view.problems:
                print(f"  {p.severity.value}: {p.describe()}\n  fix: {p.hint}", file=err)
    held = sum(1 for _, j, _ in pages if j.state is PageState.held)
    print(
        f"{counted(len(pages) - held, 'Turbo page')} in {out_dir}/ (open {out_dir / 'index.html'})"
        + (f"; {held} would be held back (their files show what they kept)" if held else "")
        + f"; {counted(len(problems) + sum(len(v.problems) for _, _, v in pages), 'problem')}",
        file=out,
    )
    refused = result.fatal or held or any(p.severity is Severity.error for p in problems)
    return 1 if refused else 0


def _allowing(settings: Settings, allow: list[str]) -> Settings:
    """``settings`` letting ``--allow``'s ranges through the SSRF guard too (a local test server)."""
    return settings.replace(http={"allowlist": [*settings.http.allowlist, *allow]})
