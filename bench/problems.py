"""What reporting a feed's problems costs (profile before optimizing).

    .venv/bin/python bench/problems.py [--errors 100000] [--repeat 3]

Every refused item of a fetch is reported, but a report keeps the first
``MAX_PROBLEMS`` in full and counts the rest by code. Measured (CPU time of
this process, best of ``--repeat``): a body of ``--errors`` refused items
through

* the baseline -- every ``ItemError`` made a ``Problem`` (a validated pydantic
  model), then capped (``shared.problems.cap``): what the first version did;
* ``cubes.parser.problems.capped`` -- counted by code from the errors, only the
  kept ones made ``Problem``s: what the parser does now;

and the same for an upload task's items (``cubes/parser/status._task_items``,
which details the first ``MAX_TASK_ITEM_DETAILS`` items). Printed with the
load average and as a ratio to the baseline; the two must give the same
report (checked).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

from cubes.parser.model import ItemError
from cubes.parser.problems import capped, to_problems
from cubes.parser.status import _by_item, _task_items
from shared.problems import cap


def _errors(n: int) -> list[ItemError]:
    codes = ("item.no_title", "item.foreign_host", "item.no_link")
    return [ItemError("refused", i + 2, None, i, f"https://a.example/{i}", code=codes[i % 3]) for i in range(n)]


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--errors", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    errors = _errors(args.errors)
    results = [(e.link or "", "rejected", e.reason) for e in errors]
    print(f"load average {os.getloadavg()[0]:.2f}; {args.errors:,} refused items; CPU s, best of {args.repeat}")

    base_s, base = _best(lambda: cap(to_problems(errors, feed="f")), args.repeat)
    ours_s, ours = _best(lambda: capped(errors, feed="f"), args.repeat)
    if (base.kept, base.counts, base.more) != (ours.kept, ours.counts, ours.more):  # type: ignore[attr-defined]
        raise SystemExit("FAIL: the capped report differs from the baseline's")
    print(f"feed report:  baseline {base_s:.3f} s   capped {ours_s:.3f} s   ratio {ours_s / base_s:.3f}")

    def all_items() -> object:
        problems = to_problems(errors)
        by: dict[object, list[object]] = {}
        for p in problems:
            by.setdefault(p.where.link, []).append(p)
        return [(u, s, tuple(by.get(u, ()))) for u, s, _ in results]

    item_base_s, _ = _best(all_items, args.repeat)
    item_s, items = _best(lambda: _task_items(results, _by_item(errors)), args.repeat)
    if len(items) != len(results):  # type: ignore[arg-type]
        raise SystemExit("FAIL: an item without its result")
    print(f"task items:   baseline {item_base_s:.3f} s   detailed {item_s:.3f} s   ratio {item_s / item_base_s:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
