"""The labelled corpus and its fixed validation split (docs/architecture.md section 3, autoparser).

Three kinds of samples, all turned into pages with per-block labels and weights:

* ``mr:NAME`` — ``mozilla-readability/test-pages/NAME/``: ``source.html``, the full main
  content in ``expected.html`` and the title in ``expected-metadata.json``;
* ``te:FILE`` — ``trafilatura-eval/eval/FILE``: partial labels from the ``with`` /
  ``without`` snippets of ``evaldata.json`` (all 844 pages) (unknown blocks get weight 0);
* ``pair:NAME`` — a directory of pairs the pipeline dumped: ``NAME.html`` (the page),
  ``NAME.txt`` (the RSS full text of the same article) and optionally ``NAME.json``
  (``{"title": ..., "url": ...}``).

The split is by page and fixed: within each source (``mr``, ``te``, each pair
directory) sort the sample names; every 5th one (index % 5 == 4) is validation. It
depends on nothing but the names, so training never sees a validation page, whatever
the seed or the machine, and adding a pair directory never moves a corpus page
from one side to the other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

__all__ = [
    "DEFAULT_CORPUS",
    "Sample",
    "corpus_digest",
    "is_validation",
    "iter_samples",
    "split",
]

#: /work/shared/data/autoparser-train when the package lives in /work/main (the shared data layout)
DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "autoparser-train"
VALIDATION_EVERY = 5


@dataclass
class Sample:
    name: str
    html: bytes
    #: full reference text (mr:, pair:) or None (te:)
    reference_html: bytes | None = None
    reference_text: str | None = None
    title: str = ""
    url: str = ""
    with_: list[str] = field(default_factory=list)
    without: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    #: mozilla-readability's "readerable" flag (is this page an article at all?)
    readerable: bool | None = None
    #: the page's key in its corpus index (trafilatura-eval: the URL, or ``hard::NAME``)
    key: str = ""


def _readability(root: Path) -> Iterator[Sample]:
    base = root / "mozilla-readability" / "test-pages"
    if not base.is_dir():
        return
    for d in sorted(base.iterdir()):
        src, exp = d / "source.html", d / "expected.html"
        if not (src.is_file() and exp.is_file()):
            continue
        meta_path = d / "expected-metadata.json"
        meta = orjson.loads(meta_path.read_bytes()) if meta_path.is_file() else {}
        yield Sample(
            name=f"mr:{d.name}",
            html=src.read_bytes(),
            reference_html=exp.read_bytes(),
            title=meta.get("title") or "",
            url=f"http://fakehost/test/{d.name}/",
            readerable=meta.get("readerable"),
        )


def _trafilatura(root: Path) -> Iterator[Sample]:
    base = root / "trafilatura-eval"
    index = base / "evaldata.json"
    if not index.is_file():
        index = base / "evaldata.subset.json"  # the first 181 pages, in older copies of the corpus
    if not index.is_file():
        return
    data = orjson.loads(index.read_bytes())
    for url, rec in sorted(data.items(), key=lambda kv: kv[1]["file"]):
        f = base / "eval" / rec["file"]
        if not f.is_file():
            continue
        yield Sample(
            name=f"te:{rec['file']}",
            html=f.read_bytes(),
            title=rec.get("title") or "",
            url=url if "://" in url else "http://" + url.split("::")[-1],
            with_=list(rec.get("with") or []),
            without=list(rec.get("without") or []),
            comments=list(rec.get("comments") or []),
            key=url,
        )


def _pairs(directory: Path) -> Iterator[Sample]:
    for html in sorted(directory.glob("*.html")):
        txt = html.with_suffix(".txt")
        if not txt.is_file():
            continue
        meta_path = html.with_suffix(".json")
        meta = orjson.loads(meta_path.read_bytes()) if meta_path.is_file() else {}
        yield Sample(
            name=f"pair:{directory.name}/{html.stem}",
            html=html.read_bytes(),
            reference_text=txt.read_text(encoding="utf-8", errors="replace"),
            title=meta.get("title") or "",
            url=meta.get("url") or "",
        )


def iter_samples(root: Path = DEFAULT_CORPUS, pairs: Iterable[Path] = ()) -> list[Sample]:
    """Every sample of the corpus at ``root`` plus the pair directories, sorted by name."""
    out = [*_readability(root), *_trafilatura(root)]
    for d in pairs:
        if not d.is_dir():
            raise FileNotFoundError(f"pairs directory {d} does not exist")
        out.extend(_pairs(d))
    out.sort(key=lambda s: s.name)
    return out


def is_validation(index_in_sorted: int) -> bool:
    return index_in_sorted % VALIDATION_EVERY == VALIDATION_EVERY - 1


def _source(name: str) -> str:
    return name.rsplit("/", 1)[0] if name.startswith("pair:") else name.split(":", 1)[0]


def split(samples: list[Sample]) -> tuple[list[Sample], list[Sample]]:
    """(train, validation) by the fixed rule in the module docstring."""
    by_source: dict[str, list[Sample]] = {}
    for s in sorted(samples, key=lambda s: s.name):
        by_source.setdefault(_source(s.name), []).append(s)
    train: list[Sample] = []
    val: list[Sample] = []
    for group in by_source.values():
        for i, s in enumerate(group):
            (val if is_validation(i) else train).append(s)
    return train, val


def corpus_digest(samples: Iterable[Sample]) -> str:
    """sha256 over names, pages and labels: says exactly which data a model or a figure came from."""
    h = hashlib.sha256()
    for s in samples:
        for part in (
            s.name.encode(),
            s.html,
            s.reference_html or b"",
            (s.reference_text or "").encode(),
            s.title.encode(),
            orjson.dumps([s.with_, s.without, s.comments]),
        ):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()
