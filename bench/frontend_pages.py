"""The frontend's own pages: CPU to render a page of search results and the home page.

The pages are templates of the one Jinja2 environment (``shared/pages/templates.py``), which escapes
every value. ``--against REV`` renders the same pages with ``cubes/frontend/`` as it was at git
revision ``REV`` (on today's ``shared/``), alternated with this tree's in rounds in this one
process, and prints both costs and their ratio: how the templates were measured against the
f-strings with a hand ``escape()`` they replaced (``--against 8b97839``).

    python bench/frontend_pages.py [--hits 20] [--n 500] [--against REV [--rounds 5]]
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.at_rev import package_at
from shared.search.query import parse_query
from shared.search.request import Hit
from shared.search.snippets import highlight
from shared.stores import SearchHit

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
QUERY = "rocket launch"
PASSAGE = (
    "The rocket lifted off at dawn from the pad by the lake, carrying a small weather satellite and two "
    "student experiments. Spectators lined the shore to watch the launch; the trail over the lake <stayed> "
    "for minutes & the next launch is in May."
)


def _hits(n: int) -> list[Hit]:
    terms = parse_query(QUERY).terms
    return [
        Hit(
            url=f"https://news.example/2026/11/rocket-{i}?from=feed&id={i}",
            host="news.example",
            title=highlight(f"Rocket launch {i}: what to watch for", terms),
            snippet=highlight(PASSAGE, terms),
            score=1.0 / (i + 1),
            published_at=T0 - timedelta(hours=i) if i % 2 else None,
            written_at=T0,
            kind=None,
        )
        for i in range(n)
    ]


def _recent(n: int) -> list[SearchHit]:
    return [
        SearchHit(
            url=f"https://news.example/2026/11/rocket-{i}",
            host="news.example",
            title=f"Rocket launch {i}: what to watch for",
            snippet=PASSAGE,
            rank=1.0,
            published_at=T0 - timedelta(hours=i),
            written_at=T0,
        )
        for i in range(n)
    ]


def _pages(frontend: str, hits: int) -> dict[str, Callable[[], str]]:
    """The pages to render with the frontend package ``frontend`` (``cubes.frontend`` or a copy)."""
    search: ModuleType = importlib.import_module(f"{frontend}.search")
    templates: ModuleType = importlib.import_module(f"{frontend}.templates")
    params = search.search_params({"q": QUERY}, max_query=300)
    found, recent = _hits(hits), _recent(min(hits, 12))
    return {
        f"search ({hits} results)": lambda: str(search.results_page(params, found, None)),
        f"home ({len(recent)} latest)": lambda: str(templates.home_page(pages=1, feeds=1, parked=0, recent=recent)),
    }


def _cost(render: Callable[[], str], n: int) -> float:
    t0 = time.process_time()
    for _ in range(n):
        render()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hits", type=int, default=20, help="results on the search page (default 20)")
    ap.add_argument("--n", type=int, default=500, help="renders of each page a round (default 500)")
    ap.add_argument("--against", metavar="REV", help="also render with cubes/frontend at git REV, alternated")
    ap.add_argument("--rounds", type=int, default=5, help="alternated rounds (default 5)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": _pages("cubes.frontend", args.hits)}
        if args.against:
            trees = {"baseline": _pages(package_at(args.against, "cubes/frontend", Path(tmp)), args.hits), **trees}
        for pages in trees.values():  # templates compiled, caches warm
            for render in pages.values():
                render()
        spent = {(tree, page): 0.0 for tree, pages in trees.items() for page in pages}
        for _ in range(args.rounds):
            for tree, pages in trees.items():
                for page, render in pages.items():
                    spent[tree, page] += _cost(render, args.n)
    load = os.getloadavg()[0]
    for page in trees["this tree"]:
        now = spent["this tree", page] / (args.rounds * args.n) * 1e6
        line = f"RESULT {page}: this tree {now:.0f} us CPU a page"
        if "baseline" in trees:
            was = spent["baseline", page] / (args.rounds * args.n) * 1e6
            line += f"; at {args.against} (baseline) {was:.0f} us ({now / was:.2f}x, {now - was:+.0f} us)"
        print(f"{line}; {args.rounds} rounds of {args.n}; load average {load:.1f} on {os.cpu_count()} cpus", flush=True)


if __name__ == "__main__":
    main()
