"""Training the block classifier (DESIGN.md section 3, autoparser; STYLE.md rule 14).

``train(...)`` self-labels the corpus (``label.py``), fits a CatBoost multiclass model
(boilerplate / body / title) on the training split only, scores the fixed validation
split (``corpus.split``) and writes ``<out>.cbm`` plus ``<out>.metrics.json``:
per-class precision / recall / F1 on validation blocks, token-level F1 of the
extracted main text on validation pages with a full reference, trafilatura-style
snippet F1 on snippet-labelled validation pages, the labelling's own token F1, and
the sha256 digest of the training and validation data.

The model is small on purpose (depth 6, a few hundred trees: ~1 MB) so it ships
with the package; everything is seeded, so one command reproduces it
(see ``README.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from catboost import CatBoostClassifier, Pool

from cubes.autoparser.corpus import DEFAULT_CORPUS, corpus_digest, iter_samples, split
from cubes.autoparser.dataset import PageData, build_page_data
from cubes.autoparser.features import FEATURE_NAMES
from cubes.autoparser.label import BODY, CLASS_NAMES
from cubes.autoparser.metrics import PRF, mean_prf, snippet_counts, snippet_prf, token_prf
from cubes.autoparser.model import MODEL_VERSION

__all__ = ["TrainConfig", "train"]


@dataclass(frozen=True)
class TrainConfig:
    #: trees and depth: depth 6 x 300 trees x 3 classes keeps the file around 1 MB
    iterations: int = 300
    depth: int = 6
    learning_rate: float = 0.1
    seed: int = 42
    threads: int = 2


def _body_text(page_data: PageData, labels: np.ndarray[Any, Any]) -> str:
    return "\n".join(t for t, lab in zip(page_data.page.texts, labels, strict=True) if lab == BODY)


def _class_prf(y: np.ndarray[Any, Any], pred: np.ndarray[Any, Any], w: np.ndarray[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    known = w > 0
    for c, name in enumerate(CLASS_NAMES):
        tp = int(((pred == c) & (y == c) & known).sum())
        fp = int(((pred == c) & (y != c) & known).sum())
        fn = int(((pred != c) & (y == c) & known).sum())
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        out[name] = {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4), "support": tp + fn}
    return out


def evaluate_split(pages: list[PageData], predict: Callable[[PageData], np.ndarray[Any, Any]]) -> dict[str, Any]:
    """Block-level per-class P/R/F1, token F1 (full references) and snippet F1 (partial ones)."""
    ys, preds, ws = [], [], []
    tokens: list[PRF] = []
    snippets = []
    for d in pages:
        pred = predict(d)
        ys.append(d.y)
        preds.append(pred)
        ws.append(d.w)
        text = _body_text(d, pred)
        if d.reference is not None:
            tokens.append(token_prf(text, d.reference))
        else:
            snippets.append(snippet_counts(text, d.sample.with_, d.sample.without))
    y, pred, w = np.concatenate(ys), np.concatenate(preds), np.concatenate(ws)
    return {
        "classes": _class_prf(y, pred, w),
        "token": {**mean_prf(tokens).as_dict(), "pages": len(tokens)},
        "snippet": {**snippet_prf(snippets).as_dict(), "pages": len(snippets)},
    }


def train(
    out: Path,
    corpus: Path = DEFAULT_CORPUS,
    pairs: Iterable[Path] = (),
    config: TrainConfig = TrainConfig(),
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train, validate, save ``out`` (+ ``.metrics.json``); returns the metrics."""
    started = time.perf_counter()
    samples = iter_samples(corpus, pairs)
    if not corpus.is_dir():
        # the default corpus is ../shared/data beside the checkout: a fresh clone does not have it
        absent = f"the corpus {corpus} does not exist (../shared/data is not part of the repository)"
        if not samples:
            raise FileNotFoundError(f"{absent}: pass --corpus DIR or --pairs DIR")
        log(f"{absent}: training on the pairs only")
    if not samples:
        raise FileNotFoundError(f"no training samples under {corpus}")
    train_s, val_s = split(samples)
    train_names = {s.name for s in train_s}
    if any(s.name in train_names for s in val_s):  # the split's promise, checked
        raise AssertionError("a validation page is in the training set")
    log(f"corpus: {len(samples)} pages ({len(train_s)} train, {len(val_s)} validation)")
    train_d = [build_page_data(s) for s in train_s]
    val_d = [build_page_data(s) for s in val_s]

    labelling = mean_prf(token_prf(_body_text(d, d.y), d.reference) for d in train_d + val_d if d.reference is not None)
    log(
        f"self-labelling token F1 vs reference: {labelling.f1:.4f} (P {labelling.precision:.4f} "
        f"R {labelling.recall:.4f})"
    )
    snippet_labelling = snippet_prf(
        snippet_counts(_body_text(d, np.where(d.w > 0, d.y, -1)), d.sample.with_, d.sample.without)
        for d in train_d + val_d
        if d.reference is None
    )
    log(
        f"self-labelling snippet F1 (snippets inside body-labelled blocks): {snippet_labelling.f1:.4f} "
        f"(P {snippet_labelling.precision:.4f} R {snippet_labelling.recall:.4f})"
    )

    x = np.vstack([d.x for d in train_d])
    y = np.concatenate([d.y for d in train_d])
    w = np.concatenate([d.w for d in train_d])
    keep = w > 0
    model = CatBoostClassifier(
        loss_function="MultiClass",
        iterations=config.iterations,
        depth=config.depth,
        learning_rate=config.learning_rate,
        random_seed=config.seed,
        thread_count=config.threads,
        verbose=0,
        allow_writing_files=False,
    )
    model.fit(Pool(x[keep], y[keep], weight=w[keep], feature_names=list(FEATURE_NAMES)))
    metadata = model.get_metadata()
    metadata["autoparser_model_version"] = str(MODEL_VERSION)
    metadata["train_digest"] = corpus_digest(train_s)

    def predict(d: PageData) -> np.ndarray[Any, Any]:
        if d.x.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        labels: np.ndarray[Any, Any] = np.asarray(model.predict_proba(d.x)).argmax(axis=1)
        return labels

    val = evaluate_split(val_d, predict)
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save_model(str(out))
    metrics: dict[str, Any] = {
        "model_version": MODEL_VERSION,
        "model_file": out.name,
        "features": len(FEATURE_NAMES),
        "config": config.__dict__,
        "train_pages": len(train_s),
        "validation_pages": len(val_s),
        "train_blocks": int(keep.sum()),
        "train_digest": metadata["train_digest"],
        "validation_digest": corpus_digest(val_s),
        "validation_rule": "per source, sorted by name, index % 5 == 4",
        "self_labelling_token": labelling.as_dict(),
        "self_labelling_snippet": snippet_labelling.as_dict(),
        "validation": val,
        "seconds": round(time.perf_counter() - started, 1),
    }
    metrics_path = out.with_suffix(".metrics.json")
    metrics_path.write_bytes(orjson.dumps(metrics, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    for name, m in val["classes"].items():
        log(f"validation {name:12s} P {m['precision']:.4f} R {m['recall']:.4f} F1 {m['f1']:.4f} (n={m['support']})")
    t, s = val["token"], val["snippet"]
    log(f"validation main-text token F1 {t['f1']:.4f} (P {t['precision']:.4f} R {t['recall']:.4f}, {t['pages']} pages)")
    log(f"validation snippet F1 {s['f1']:.4f} (P {s['precision']:.4f} R {s['recall']:.4f}, {s['pages']} pages)")
    log(f"saved {out} ({out.stat().st_size // 1024} KB) and {metrics_path.name}")
    return metrics
