"""Autoparser benchmark (issue 8): our block classifier vs trafilatura on the same pages, same run.

On the fixed validation split of the shared corpus (``cubes/autoparser/corpus.py``:
per source, sorted names, every 5th page) both extractors read every page:

* the autoparser: ``Extractor(model).extract(html, url).text`` (the full path the cube
  runs: parse, segment, features, one batched CatBoost call, body HTML, images);
* trafilatura: ``trafilatura.extract(html, url=url, include_comments=False)`` (its
  best main-text setting: the ground truth never includes comments).

Printed: token-level P/R/F1 (bag of whitespace tokens, per page, averaged) on the
mozilla-readability pages, trafilatura-style snippet P/R/F1 on the trafilatura-eval
pages, and pages/s on one core (CPU time of this process; wall time too), each with
the ratio autoparser / trafilatura. Targets: token F1 >= trafilatura's; >= 100 pages/s.

Quality floor (STYLE.md rule 14): the run fails (exit 1) when the autoparser's token F1
falls below ``FLOOR_TOKEN_F1`` on the data whose digest is ``FLOOR_DIGEST`` (exit 2 when
the data is not that data). Passing under the floor needs ``--lower-floor REASON``.

    python bench/autoparser.py [--model PATH] [--repeat 3] [--lower-floor REASON]
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable, Sequence

from cubes.autoparser.corpus import DEFAULT_CORPUS, Sample, corpus_digest, iter_samples, split
from cubes.autoparser.evaluate import EvalReport, evaluate
from cubes.autoparser.extract import Extractor

#: the floor and the sha256 of the validation split it holds for: the shipped model measures 0.9694
#: (trafilatura 0.9586 on the same pages); 0.01 below that absorbs retraining noise, which moved the
#: figure between 0.963 and 0.971 while features changed during development
FLOOR_TOKEN_F1 = 0.96
FLOOR_DIGEST = "6cf9fc1e2c7c5ae0b6234eca7af8b50d72a6e169e59f82670f501c50058952ac"


def _cpu_rate(samples: Sequence[Sample], fn: Callable[[bytes, str], object], repeat: int) -> tuple[float, float]:
    """(pages/s by CPU time, pages/s by wall time): best of ``repeat`` passes."""
    best_cpu = best_wall = 0.0
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        for s in samples:
            fn(s.html, s.url)
        c1, w1 = time.process_time(), time.perf_counter()
        best_cpu = max(best_cpu, len(samples) / max(c1 - c0, 1e-9))
        best_wall = max(best_wall, len(samples) / max(w1 - w0, 1e-9))
    return best_cpu, best_wall


def _line(name: str, r: EvalReport, cpu: float, wall: float) -> str:
    t, s = r.token, r.snippet
    return (
        f"{name:12s} token F1 {t.f1:.4f} (P {t.precision:.4f} R {t.recall:.4f}, {r.token_pages} pages)  "
        f"snippet F1 {s.f1:.4f} (P {s.precision:.4f} R {s.recall:.4f}, {r.snippet_pages} pages)  "
        f"{cpu:6.1f} pages/s CPU, {wall:6.1f} wall"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--repeat", type=int, default=3, help="timing passes (the best counts)")
    ap.add_argument("--lower-floor", default=None, metavar="REASON")
    args = ap.parse_args()

    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    if not DEFAULT_CORPUS.is_dir():
        print(
            f"the validation corpus is not at {DEFAULT_CORPUS}: this bench reads ../shared/data/autoparser-train "
            "beside the checkout, which is not part of the repository; nothing measured"
        )
        return 2
    _, val = split(iter_samples(DEFAULT_CORPUS))
    digest = corpus_digest(val)
    print(f"validation split: {len(val)} pages, digest {digest[:16]}")
    if digest != FLOOR_DIGEST:
        print(
            f"the validation data changed (digest {digest}, floor measured on {FLOOR_DIGEST[:16]}): "
            "re-measure and re-pin FLOOR_TOKEN_F1 / FLOOR_DIGEST"
        )
        return 2
    extractor = Extractor(args.model)

    def ours(html: bytes, url: str) -> str:
        return extractor.extract(html, url).text

    def theirs(html: bytes, url: str) -> str:
        return trafilatura.extract(html, url=url, include_comments=False) or ""

    for fn in (ours, theirs):  # warm caches (regexes, lookup tables, CatBoost) before any clock runs
        for s in val[:5]:
            fn(s.html, s.url)
    r_ours, r_theirs = evaluate(val, ours), evaluate(val, theirs)
    cpu_o, wall_o = _cpu_rate(val, ours, args.repeat)
    cpu_t, wall_t = _cpu_rate(val, theirs, args.repeat)
    print(_line("autoparser", r_ours, cpu_o, wall_o))
    print(_line("trafilatura", r_theirs, cpu_t, wall_t))
    print(
        f"ratio        token F1 {r_ours.token.f1 / max(r_theirs.token.f1, 1e-9):.3f}  "
        f"snippet F1 {r_ours.snippet.f1 / max(r_theirs.snippet.f1, 1e-9):.3f}  "
        f"speed {cpu_o / max(cpu_t, 1e-9):.2f}x (CPU)"
    )
    ok_f1 = r_ours.token.f1 >= r_theirs.token.f1
    ok_speed = cpu_o >= 100.0
    print(
        f"targets      token F1 >= trafilatura: {'yes' if ok_f1 else 'NO'};  >= 100 pages/s: "
        f"{'yes' if ok_speed else 'NO'}"
    )
    if r_ours.token.f1 < FLOOR_TOKEN_F1:
        if args.lower_floor:
            print(f"floor {FLOOR_TOKEN_F1} not met; accepted because: {args.lower_floor}")
            return 0
        print(f"FAIL: token F1 {r_ours.token.f1:.4f} below the floor {FLOOR_TOKEN_F1}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
