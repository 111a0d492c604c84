"""Per-host calibration from the pipeline's own pairs (docs/architecture.md section 3, autoparser).

A host with both a full-text feed and autoparsed pages gives free labelled data: its
pairs (``shared/stores/autoparser.py``). ``calibrate(host, samples, global_model)`` asks
whether the host is read better by something of its own than by the global model, and
answers with the candidate that validates best on the host's pages:

* ``global``: the global model as it is;
* ``threshold``: the global model with the host's own probability cut for body blocks
  (a site whose layout makes the model hesitate: all its article blocks at p = 0.4);
* ``model``: the global model boosted on with ``HOST_TREES`` trees on the host's pages
  (``fit(init_model=...)``), so it learns what the host does differently, template
  features included.

Validation is ``HOST_FOLDS``-fold by page *within* the host (the host's model serves that
host only, so its unseen pages are the honest test). The threshold is chosen on the
training folds only (nested), the model fitted on them only. A candidate replaces the
global model only when its 4-token-shingle F1 beats the global one by ``MIN_GAIN``; then
it is refitted on all the host's pages. The global model must not have seen the host's
pairs (``train`` holds out the pairs of the hosts it calibrates), or ``global`` would be
measured in-sample.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from catboost import CatBoostClassifier

from cubes.autoparser.corpus import Sample
from cubes.autoparser.dataset import PageData, build_corpus_data
from cubes.autoparser.evaluate import score
from cubes.autoparser.extract import Extractor
from cubes.autoparser.fit import DEFAULT_CONFIG, TrainConfig, fit
from cubes.autoparser.model import BlockModel

__all__ = ["HOST_FOLDS", "MIN_GAIN", "MIN_HOST_PAIRS", "HostChoice", "calibrate"]

#: pairs a host needs before it is calibrated: fewer, and a fold holds one or two pages
MIN_HOST_PAIRS = 20
HOST_FOLDS = 4
#: shingle F1 a host's own candidate must gain over the global model (below: noise)
MIN_GAIN = 0.005
HOST_TREES = 60
THRESHOLDS = tuple(round(0.2 + 0.05 * i, 2) for i in range(13))  # 0.2 .. 0.8


@dataclass
class HostChoice:
    host: str
    kind: str  # "global" | "threshold" | "model"
    threshold: float | None = None
    model: bytes = b""
    #: validation shingle F1 (and P/R) of each candidate on the host's pages
    figures: dict[str, Any] = field(default_factory=dict)


def _texts(extractor: Extractor, pages: Sequence[PageData], threshold: float | None) -> list[str]:
    return [
        extractor.extract(
            d.sample.html, d.sample.url, template=d.template, template_counted=True, body_threshold=threshold
        ).text
        for d in pages
    ]


def _f1(pages: Sequence[PageData], texts: list[str]) -> float:
    return score([d.sample for d in pages], [d.reference for d in pages], texts).shingle.f1


def _best_threshold(extractor: Extractor, pages: Sequence[PageData]) -> float:
    best_t, best = THRESHOLDS[0], -1.0
    for t in THRESHOLDS:
        f = _f1(pages, _texts(extractor, pages, t))
        if f > best + 1e-9:
            best_t, best = t, f
    return best_t


def _model_bytes(model: CatBoostClassifier) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "host.cbm"
        model.save_model(str(path))
        return path.read_bytes()


def calibrate(
    host: str,
    samples: Sequence[Sample],
    global_model: CatBoostClassifier,
    config: TrainConfig = DEFAULT_CONFIG,
    log: Callable[[str], None] = print,
) -> HostChoice:
    """The candidate that reads ``host`` best (see the module docstring)."""
    pages = build_corpus_data(samples)  # one site: its template is learnt from these pages
    pages = [d for d in pages if d.reference is not None]
    if len(pages) < MIN_HOST_PAIRS:
        return HostChoice(host, "global", figures={"pages": len(pages), "why": "too few pairs"})
    glob = Extractor(model=BlockModel(global_model, Path("<global>")))
    folds = [i % HOST_FOLDS for i in range(len(pages))]  # pages are in capture order: folds interleave time
    texts: dict[str, list[str]] = {"global": _texts(glob, pages, None), "threshold": [""] * len(pages)}
    texts["model"] = [""] * len(pages)
    host_config = replace(config, iterations=HOST_TREES)
    for f in range(HOST_FOLDS):
        train_p = [d for d, g in zip(pages, folds, strict=True) if g != f]
        held = [i for i, g in enumerate(folds) if g == f]
        t = _best_threshold(glob, train_p)
        for i, text in zip(held, _texts(glob, [pages[i] for i in held], t), strict=True):
            texts["threshold"][i] = text
        own = Extractor(model=BlockModel(fit(train_p, host_config, init_model=global_model), Path("<host>")))
        for i, text in zip(held, _texts(own, [pages[i] for i in held], None), strict=True):
            texts["model"][i] = text
    figures: dict[str, Any] = {"pages": len(pages), "folds": HOST_FOLDS}
    for name, t_list in texts.items():
        s = score([d.sample for d in pages], [d.reference for d in pages], t_list)
        figures[name] = s.shingle.as_dict()
    best = max(("threshold", "model"), key=lambda k: figures[k]["f1"])
    gain = figures[best]["f1"] - figures["global"]["f1"]
    log(
        f"{host}: {len(pages)} pairs; shingle F1 global {figures['global']['f1']:.4f}, "
        f"threshold {figures['threshold']['f1']:.4f}, host model {figures['model']['f1']:.4f}"
    )
    if gain < MIN_GAIN:
        return HostChoice(host, "global", figures=figures)
    if best == "threshold":
        return HostChoice(host, "threshold", threshold=_best_threshold(glob, pages), figures=figures)
    final = fit(pages, host_config, init_model=global_model)
    final.get_metadata()["autoparser_host"] = host
    return HostChoice(host, "model", model=_model_bytes(final), figures=figures)
