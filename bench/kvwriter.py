"""kvwriter benchmark: documents rendered + sanitized + written per second.

Realistic documents (~4 KB of partner HTML with links, a table, hostile bits,
three images of which one is not in the CDN) go through ``KvwriterHandler.handle``
on the embedded SQLite store, as the runtime would call it: first one at a
time, then with 8 concurrent key-lanes (the runtime's default concurrency).
The render-only rate (no store) is printed as the baseline, to show where the
time goes. Target: >= 1,000 documents/s on the embedded store.

``--against REV`` also renders the same documents with the kvwriter of git
revision ``REV`` (``cubes/kvwriter/`` as it was there, on today's ``shared/``),
alternating the two in rounds in this one process, and prints both per-page
costs and their ratio: how a change to the page's markup is measured (the
template page against the hand-escaped f-strings: ``--against 42ea9be``).

    python bench/kvwriter.py [--n 5000] [--store sqlite:///...] [--against REV [--rounds 5]]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.at_rev import package_at
from cubes.kvwriter.handler import KvwriterHandler
from cubes.kvwriter.render import page_sanitizer, render
from shared.config import Settings
from shared.messages import Document, Media, SourceKind, SourceRef
from shared.stores import open_stores

TARGET = 1_000
LANES = 8

PARAGRAPH = (
    "<p>The committee met on Tuesday to discuss the <a href='/budget'>new budget</a> and the "
    "<b>timetable</b> for the bridge repairs; residents asked about <em>noise</em> at night.</p>"
)
HOSTILE = "<p onclick='steal()'>x<script>alert(1)</script><img src=x onerror=alert(1)></p>"


def make_doc(i: int, version: int = 1) -> Document:
    url = f"https://news{i % 40}.example/2026/11/{i}/story"
    body = (
        PARAGRAPH * 12
        + f'<figure><img src="https://img.example/{i}/a.jpg" alt="a"><figcaption>Caption {i}</figcaption></figure>'
        + f'<img src="https://img.example/{i}/b.jpg"><img src="https://tracker.example/{i}.gif">'
        + "<table><tr><th>Item</th><th>Cost</th></tr>"
        + "<tr><td>Steel</td><td>1 200</td></tr>" * 6
        + "</table>"
        + HOSTILE
        + PARAGRAPH * 6
    )
    now = datetime.now(UTC)
    return Document(
        url=url,
        host=f"news{i % 40}.example",
        source=SourceRef(kind=SourceKind.rss, id=f"feed-{i % 40}"),
        title=f"Bridge repairs: the committee's plan, part {i}",
        author="City desk",
        published_at=now,
        content_html=body,
        media=[
            Media(url=f"https://img.example/{i}/a.jpg", cdn_url=f"/cdn/img/{i % 256:02x}/{i}a.jpg"),
            Media(url=f"https://img.example/{i}/b.jpg", cdn_url=f"/cdn/img/{i % 256:02x}/{i}b.jpg"),
            Media(url=f"https://tracker.example/{i}.gif"),
        ],
        content_hash=f"hash-{i}-{version}",
        version=version,
        seen_at=now,
        parsed_at=now,
    )


def baseline_render(rev: str, into: Path) -> Callable[..., Any]:
    """``render`` of ``cubes/kvwriter/`` at git revision ``rev``, imported as a package of its own."""
    package = package_at(rev, "cubes/kvwriter", into)
    return importlib.import_module(f"{package}.render").render  # type: ignore[no-any-return]


def compare_renders(docs: list[Document], rev: str, rounds: int) -> None:
    """This tree's page against revision ``rev``'s, the same documents, alternated in ``rounds``."""
    settings = Settings()
    sanitizer = page_sanitizer(settings)
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        old = baseline_render(rev, Path(tmp))
        spent = {"baseline": 0.0, "this tree": 0.0}
        for _ in range(rounds):
            for name, fn in (("baseline", old), ("this tree", render)):
                t0 = time.process_time()
                for d in docs:
                    fn(d, sanitizer, written_at=now)
                spent[name] += time.process_time() - t0
    per = {k: v / (rounds * len(docs)) * 1e6 for k, v in spent.items()}
    print(
        f"RESULT render at {rev} (baseline): {per['baseline']:.1f} us CPU a page; this tree: "
        f"{per['this tree']:.1f} us ({per['this tree'] / per['baseline']:.3f}x, "
        f"{per['this tree'] - per['baseline']:+.1f} us); {rounds} alternated rounds of {len(docs)} pages; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus",
        flush=True,
    )


async def run(n: int, store_url: str | None) -> None:
    settings = Settings()
    docs = [make_doc(i) for i in range(n)]
    print(
        f"kvwriter bench: {n} documents, ~{len(docs[0].content_html) // 1024} KB of HTML each; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus",
        flush=True,
    )

    sanitizer = page_sanitizer(settings)
    now = datetime.now(UTC)
    t0 = time.perf_counter()
    for d in docs:
        render(d, sanitizer, written_at=now)
    render_rate = n / (time.perf_counter() - t0)
    print(f"  render+sanitize only (baseline, no store): {render_rate:,.0f} docs/s", flush=True)

    half = n // 2
    with tempfile.TemporaryDirectory() as tmp:
        url = store_url or f"sqlite:///{tmp}/store.db"
        async with await open_stores(url) as stores:
            handler = KvwriterHandler(stores.pages, settings)

            t0 = time.perf_counter()
            for d in docs[:half]:
                await handler.handle(d)
            seq = half / (time.perf_counter() - t0)
            print(f"  handler, one at a time (new pages):   {seq:,.0f} docs/s", flush=True)

            async def lanes(batch: list[Document]) -> float:
                queue: asyncio.Queue[Document] = asyncio.Queue()
                for d in batch:
                    queue.put_nowait(d)

                async def lane() -> None:
                    while not queue.empty():
                        await handler.handle(queue.get_nowait())

                t0 = time.perf_counter()
                await asyncio.gather(*(lane() for _ in range(LANES)))
                return len(batch) / (time.perf_counter() - t0)

            conc = await lanes(docs[half:])
            print(f"  handler, {LANES} lanes (new pages):        {conc:,.0f} docs/s", flush=True)
            upd = await lanes([make_doc(i, version=2) for i in range(n)])
            print(f"  handler, {LANES} lanes (new versions):     {upd:,.0f} docs/s", flush=True)
            assert await stores.pages.count() == n

    print(
        f"RESULT kvwriter: {conc:,.0f} docs/s with {LANES} lanes (new pages), {upd:,.0f} docs/s (new versions), "
        f"{seq:,.0f} docs/s one at a time; render-only baseline {render_rate:,.0f} docs/s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus; "
        f"target >= {TARGET:,}/s: {'OK' if conc >= TARGET else 'MISSED'}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--store", default=None, help="a store URL (default: a fresh SQLite file)")
    ap.add_argument("--against", metavar="REV", help="also compare the page render with cubes/kvwriter at git REV")
    ap.add_argument("--rounds", type=int, default=5, help="alternated rounds of --against (default 5)")
    args = ap.parse_args()
    if args.against:
        compare_renders([make_doc(i) for i in range(min(args.n, 2000))], args.against, args.rounds)
    asyncio.run(run(args.n, args.store))


if __name__ == "__main__":
    main()
