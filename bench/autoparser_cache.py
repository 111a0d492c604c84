"""What ``bench/autoparser.py`` computes once and reuses: the corpus's features and the baselines' texts.

Building the feature matrices of the 974 pages takes minutes of CPU on a loaded machine, and so
do trafilatura and readability-lxml over the same pages; neither changes between two runs
unless its inputs do. Both are kept under ``--cache`` (default ``/tmp/turbocubes-autoparser``):

* the features, labels and templates (``dataset.PageData`` without the page's HTML), keyed by
  the corpus digest and the sha256 of the modules of ours that ``dataset.py`` imports (a change
  of features or labels makes a new key; a change of training or post-processing does not);
* each baseline's texts, keyed by the corpus digest and the library's version.

A damaged file, or one that is not this user's alone (a pickle runs code when read), is
ignored and rebuilt. The cache holds derived data only (the
corpus stays where it is), so deleting it costs time, nothing else.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from cubes.autoparser.corpus import Sample
from cubes.autoparser.dataset import PageData, build_corpus_data

__all__ = ["DEFAULT_CACHE", "cached_corpus_data", "cached_texts", "code_digest"]

DEFAULT_CACHE = Path("/tmp/turbocubes-autoparser")


def code_digest() -> str:
    """sha256 of the code that builds features and labels: every module of ours ``dataset.py`` imports."""
    # which modules that is: asked of a fresh interpreter, since this one has imported more
    probe = (
        "import sys, cubes.autoparser.dataset\n"
        "for n in sorted(sys.modules):\n"
        "    f = getattr(sys.modules[n], '__file__', None)\n"
        "    if n.startswith(('cubes', 'shared')) and f: print(n, f)"
    )
    listed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    h = hashlib.sha256()
    for line in listed.splitlines():
        name, file = line.split(" ", 1)
        h.update(name.encode())
        h.update(Path(file).read_bytes())
    return h.hexdigest()


def _ours(path: Path) -> bool:
    """Whether ``path`` and its folder are this user's and writable by no one else (a pickle runs code)."""
    try:
        for p in (path.parent, path):
            st = p.stat()
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return False
    except OSError:
        return False
    return True


def _load(path: Path) -> object | None:
    if not _ours(path):
        return None
    try:
        with path.open("rb") as fh:
            loaded: object = pickle.load(fh)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
        return None
    return loaded


def _save(path: Path, value: object) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
        pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)


def cached_corpus_data(samples: Sequence[Sample], digest: str, cache: Path | None) -> tuple[list[PageData], bool]:
    """``build_corpus_data(samples)``, from the cache when it holds this corpus and this code; (data, hit)."""
    if cache is None:
        return build_corpus_data(samples), False
    path = cache / f"features-{digest[:16]}-{code_digest()[:16]}.pickle"
    stored = _load(path)
    if isinstance(stored, list) and len(stored) == len(samples):
        data = []
        for s, d in zip(samples, stored, strict=True):
            if not isinstance(d, PageData) or d.sample.name != s.name:
                break
            d.sample = s
            data.append(d)
        else:
            return data, True
    data = build_corpus_data(samples)
    light = [PageData(Sample(d.sample.name, b""), d.texts, d.x, d.y, d.w, d.reference, d.template) for d in data]
    _save(path, light)
    return data, False


def cached_texts(
    name: str, version: str, samples: Sequence[Sample], digest: str, cache: Path | None, fn: Callable[[Sample], str]
) -> tuple[list[str], bool]:
    """``[fn(s) for s in samples]`` of the extractor ``name`` at ``version``, from the cache when it has them."""
    path = None if cache is None else cache / f"texts-{name}-{version}-{digest[:16]}.pickle"
    if path is not None:
        stored = _load(path)
        if isinstance(stored, list) and len(stored) == len(samples) and all(isinstance(t, str) for t in stored):
            return stored, True
    texts = [fn(s) for s in samples]
    if path is not None:
        _save(path, texts)
    return texts, False
