"""How light the Turbo pages are (page weight and requests per page).

    .venv/bin/python bench/pages.py [--data ../shared/data]

Every item of the feed corpus (``--data``/feeds: RSS, Atom, Turbo, YML) and of
our own fixtures (``tests/data``: the every-element Turbo feed, the catalogs)
goes the pipeline's way -- parser (blocks, safe-HTML policy), the media cube's
rewrite with every image "cached" under a CDN URL of the real form, the
kvwriter's render -- and the page is measured:

* weight: the HTML as served, raw and gzip-compressed (what travels);
* requests: what a browser fetches to show the page -- the document, its
  images from the CDN, the allowlisted players (iframes), the favicon, and the
  one shared stylesheet (``shared/pages/style.py``) on a reader's first Turbo page
  only (it is cached for a year); there is no script and no font.

The stylesheet was inline in every page before; the same run renders each page
that way too (the whole sheet in its ``<style>``) and prints the two weights side
by side, with their ratio.

Printed: median, 90th percentile and largest, with the largest page named;
the baseline of the same run is the source's own content HTML of each item
(what the partner sent for it), as a ratio: the page's weight over it.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _pages(paths: list[Path]) -> list[tuple[str, int, int, int, int, int, int]]:
    """(url, page bytes, page gzip bytes, requests, source content bytes, inline-sheet bytes, its gzip) per page."""
    from datetime import UTC, datetime

    from cubes.kvwriter.render import page_sanitizer, render
    from cubes.parser.documents import prepare_items, to_document
    from cubes.parser.feed import parse_feed
    from shared.config import Settings
    from shared.images.media import MediaDoc
    from shared.messages import SourceKind, SourceRef
    from shared.pages.style import FIRST_PAINT_CSS, PAGE_CSS, STYLESHEET_PATH

    linked = f'<style>{FIRST_PAINT_CSS}</style><link rel="stylesheet" href="{STYLESHEET_PATH}">'
    inline = f"<style>{PAGE_CSS}</style>"

    settings = Settings()
    sanitizer = page_sanitizer(settings)
    now = datetime(2026, 11, 30, tzinfo=UTC)
    out = []
    for path in paths:
        result = parse_feed(path.read_bytes(), url="https://news.test/feed.xml")
        items = [*result.items, *result.listings]
        raw = {id(it): len(it.content_html.encode()) for it in items}
        cands, _ = prepare_items(items, feed_host=None)
        sizes = [raw.get(id(it), 0) for it in items]
        for cand, source_bytes in zip(cands, sizes, strict=False):
            doc = to_document(
                cand, source=SourceRef(kind=SourceKind.rss, id="b"), version=1, seen_at=now, parsed_at=now
            )
            media = MediaDoc(doc)
            cdn = {url: f"/cdn/img/ab/{i:064x}.jpg" for i, url in enumerate(media.refs)}
            ready = media.rewrite(cdn, sizes=dict.fromkeys(cdn, (1200, 675)), media_ready_at=now)
            page = render(ready, sanitizer, written_at=now).html
            body = page.encode()
            requests = 1 + page.count("<img ") + page.count("<iframe ") + page.count("poster=") + 1  # + favicon
            assert linked in page, "the page links the shared stylesheet"
            before = page.replace(linked, inline).encode()  # as every page was: the whole sheet inline
            out.append(
                (
                    doc.url,
                    len(body),
                    len(gzip.compress(body, 6)),
                    requests,
                    source_bytes,
                    len(before),
                    len(gzip.compress(before, 6)),
                )
            )
    return out


def _line(name: str, values: list[int], unit: str = "") -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    median = statistics.median(ordered)
    return f"  {name:<28} median {median:>9,.0f}{unit}  p90 {p90:>9,}{unit}  max {ordered[-1]:>9,}{unit}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = ap.parse_args()
    feeds = sorted(p for p in (args.data / "feeds").rglob("*") if p.suffix in (".xml", ".rss", ".atom", ".yml"))
    feeds += sorted((REPO / "tests" / "data" / "feeds" / "turbo").glob("turbocubes__*.xml"))
    feeds += sorted((REPO / "tests" / "data" / "feeds" / "yml").glob("turbocubes__*"))
    rows = _pages(feeds)
    print(f"{len(rows):,} pages from {len(feeds)} feeds")
    print(_line("page HTML", [r[1] for r in rows], " B"))
    print(_line("page HTML, gzip", [r[2] for r in rows], " B"))
    print(_line("  before: sheet inline", [r[5] for r in rows], " B"))
    print(_line("  before: sheet inline, gzip", [r[6] for r in rows], " B"))
    ratio = statistics.median(r[1] / r[5] for r in rows)
    ratio_gz = statistics.median(r[2] / r[6] for r in rows)
    print(f"  page weight with the shared sheet / with it inline: median {ratio:.2f}x raw, {ratio_gz:.2f}x gzip")
    print(_line("requests to show a page", [r[3] for r in rows]))
    from shared.pages.style import FIRST_PAINT_CSS, PAGE_CSS

    css, first = PAGE_CSS.encode(), FIRST_PAINT_CSS.encode()
    print(
        f"  the shared stylesheet: {len(css):,} B ({len(gzip.compress(css, 6)):,} B gzip), fetched once a year"
        f" (+1 request on a reader's first Turbo page); inline in every page: {len(first):,} B"
        f" ({len(gzip.compress(first, 6)):,} B gzip) for the first paint"
    )
    with_source = [r for r in rows if r[4] > 0]
    ratios = sorted(r[1] / r[4] for r in with_source)
    print(
        f"  baseline (the source item's content HTML): median {statistics.median(r[4] for r in with_source):,.0f} B;"
        f" page / source: median {statistics.median(ratios):.2f}x"
    )
    biggest = max(rows, key=lambda r: r[1])
    print(f"  largest page: {biggest[0]} ({biggest[1]:,} B, {biggest[2]:,} B gzip, {biggest[3]} requests)")
    most = max(rows, key=lambda r: r[3])
    print(f"  most requests: {most[0]} ({most[3]} requests)")
    every = [r for r in rows if "every-element" in r[0]]
    for r in every:
        print(f"  every-element page: {r[1]:,} B, {r[2]:,} B gzip, {r[3]} requests")


if __name__ == "__main__":
    main()
