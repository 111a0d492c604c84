"""Evaluation of a main-text extractor on labelled pages (docs/architecture.md section 3; docs/conventions.md rule 14).

``evaluate(samples, extract)`` runs any ``extract(html, url) -> text`` over the samples
and reports, on pages with a full reference, the benchmark's 4-token-shingle P/R/F1
(mean precision, mean recall; ``metrics.shingle_prf``) and the token-level P/R/F1 (bag of
whitespace tokens, per page, averaged); trafilatura-style snippet P/R/F1 on
snippet-labelled pages; and pages per second of the extraction alone (CPU time of this process, so "on
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
from cubes.autoparser.metrics import (
    PRF,
    mean_prf,
    shingle_counts,
    shingle_prf,
    snippet_counts,
    snippet_prf,
    token_prf,
)

__all__ = ["EvalReport", "Scores", "evaluate", "load_eval_dir", "score"]


@dataclass
class Scores:
    """Quality of one extractor's texts on a set of pages (no timing)."""

    shingle: PRF
    token: PRF
    full_pages: int
    snippet: PRF
    snippet_pages: int
    per_page: list[tuple[str, PRF]]

    def as_dict(self) -> dict[str, object]:
        return {
            "shingle": {**self.shingle.as_dict(), "pages": self.full_pages},
            "token": {**self.token.as_dict(), "pages": self.full_pages},
            "snippet": {**self.snippet.as_dict(), "pages": self.snippet_pages},
        }


def score(samples: Sequence[Sample], refs: Sequence[str | None], texts: Sequence[str]) -> Scores:
    """Shingle and token P/R/F1 where ``refs`` has a full text, snippet P/R/F1 where the sample has snippets."""
    shingles, tokens, per_page, counts = [], [], [], []
    for s, ref, text in zip(samples, refs, texts, strict=True):
        if ref is not None:
            shingles.append(shingle_counts(text, ref))
            prf = token_prf(text, ref)
            tokens.append(prf)
            per_page.append((s.name, shingle_prf([shingles[-1]])))
        elif s.with_ or s.without:
            counts.append(snippet_counts(text, s.with_, s.without))
    return Scores(shingle_prf(shingles), mean_prf(tokens), len(tokens), snippet_prf(counts), len(counts), per_page)


@dataclass
class EvalReport:
    shingle: PRF
    token: PRF
    token_pages: int
    snippet: PRF
    snippet_pages: int
    pages: int
    #: wall-clock and CPU seconds of the extraction; pages/s counts CPU time, so the figure
    #: means "on one core" even when other processes share the machine
    seconds: float
    cpu_seconds: float
    #: (page name, shingle P/R/F1 of that page)
    per_page: list[tuple[str, PRF]]

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.cpu_seconds if self.cpu_seconds > 0 else float("inf")

    @property
    def pages_per_wall_s(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else float("inf")

    def as_dict(self) -> dict[str, object]:
        return {
            "shingle": {**self.shingle.as_dict(), "pages": self.token_pages},
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
    sc = score(samples, refs, texts)
    return EvalReport(
        shingle=sc.shingle,
        token=sc.token,
        token_pages=sc.full_pages,
        snippet=sc.snippet,
        snippet_pages=sc.snippet_pages,
        pages=len(samples),
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        per_page=sc.per_page,
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
