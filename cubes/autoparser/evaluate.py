"""Evaluation of a main-text extractor on labelled pages (DESIGN.md section 3; STYLE.md rule 14).

``evaluate(samples, extract)`` runs any ``extract(html, url) -> text`` over the samples
and reports the token-level P/R/F1 (bag of whitespace tokens, per page, averaged) on
pages with a full reference, trafilatura-style snippet P/R/F1 on snippet-labelled
pages, and pages per second of the extraction alone (CPU time of this process, so "on
one core"; reading files and building references are outside the clock). The bench uses it for the autoparser and for
trafilatura alike, so both are measured the same way.

``load_eval_dir`` accepts the layouts the corpus and the pipeline use: a corpus root
(``mozilla-readability/``, ``trafilatura-eval/``), a readability ``test-pages`` folder
(``NAME/source.html`` + ``NAME/expected.html``), or a pairs folder
(``NAME.html`` + ``NAME.txt``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from cubes.autoparser.corpus import Sample, iter_samples, split
from cubes.autoparser.dataset import reference_text
from cubes.autoparser.metrics import PRF, mean_prf, snippet_counts, snippet_prf, token_prf

__all__ = ["EvalReport", "evaluate", "load_eval_dir"]


@dataclass
class EvalReport:
    token: PRF
    token_pages: int
    snippet: PRF
    snippet_pages: int
    pages: int
    #: wall-clock and CPU seconds of the extraction; pages/s counts CPU time, so the figure
    #: means "on one core" even when other processes share the machine
    seconds: float
    cpu_seconds: float
    per_page: list[tuple[str, PRF]]

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.cpu_seconds if self.cpu_seconds > 0 else float("inf")

    @property
    def pages_per_wall_s(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else float("inf")

    def as_dict(self) -> dict[str, object]:
        return {
            "token": {**self.token.as_dict(), "pages": self.token_pages},
            "snippet": {**self.snippet.as_dict(), "pages": self.snippet_pages},
            "pages": self.pages,
            "seconds": round(self.seconds, 3),
            "cpu_seconds": round(self.cpu_seconds, 3),
            "pages_per_s": round(self.pages_per_s, 1),
        }


def evaluate(samples: Sequence[Sample], extract: Callable[[bytes, str], str]) -> EvalReport:
    refs = [reference_text(s) for s in samples]
    texts: list[str] = []
    started, cpu_started = time.perf_counter(), time.process_time()
    for s in samples:
        texts.append(extract(s.html, s.url) or "")
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    per_page: list[tuple[str, PRF]] = []
    counts = []
    for s, ref, text in zip(samples, refs, texts, strict=True):
        if ref is not None:
            per_page.append((s.name, token_prf(text, ref)))
        elif s.with_ or s.without:
            counts.append(snippet_counts(text, s.with_, s.without))
    return EvalReport(
        token=mean_prf(p for _, p in per_page),
        token_pages=len(per_page),
        snippet=snippet_prf(counts),
        snippet_pages=len(counts),
        pages=len(samples),
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        per_page=per_page,
    )


def _test_pages(directory: Path) -> list[Sample]:
    out = []
    for d in sorted(p for p in directory.iterdir() if p.is_dir()):
        src, exp = d / "source.html", d / "expected.html"
        if src.is_file() and exp.is_file():
            meta_path = d / "expected-metadata.json"
            meta = orjson.loads(meta_path.read_bytes()) if meta_path.is_file() else {}
            out.append(
                Sample(
                    name=d.name,
                    html=src.read_bytes(),
                    reference_html=exp.read_bytes(),
                    title=meta.get("title") or "",
                    url=f"http://fakehost/test/{d.name}/",
                )
            )
    return out


def load_eval_dir(directory: Path, *, validation_only: bool = False) -> list[Sample]:
    """Samples with ground truth found in ``directory`` (see the module docstring for layouts)."""
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory} is not a directory")
    if (directory / "mozilla-readability").is_dir() or (directory / "trafilatura-eval").is_dir():
        samples = iter_samples(directory)
    elif any((p / "source.html").is_file() for p in directory.iterdir() if p.is_dir()):
        samples = _test_pages(directory)
    else:
        samples = iter_samples(directory / "__none__", pairs=[directory])
    if validation_only:
        samples = split(samples)[1]
    if not samples:
        raise FileNotFoundError(f"no pages with ground truth found in {directory}")
    return samples
