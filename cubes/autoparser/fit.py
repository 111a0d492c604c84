"""Fitting the CatBoost block classifier on labelled pages (docs/architecture.md section 3, autoparser).

One function for every model we train (the shipped one, each cross-validation fold, a
host's own model), so they differ only in their pages. Seeded and single-purpose: the
same pages and ``TrainConfig`` give the same model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from catboost import CatBoostClassifier, Pool

from cubes.autoparser.dataset import PageData
from cubes.autoparser.features import FEATURE_NAMES
from cubes.autoparser.model import MODEL_VERSION

__all__ = ["DEFAULT_CONFIG", "TrainConfig", "fit"]


@dataclass(frozen=True)
class TrainConfig:
    #: trees and depth: depth 6 x 300 trees x 3 classes keeps the file under 1 MB and a page's
    #: prediction well under a millisecond
    iterations: int = 300
    depth: int = 6
    learning_rate: float = 0.1
    seed: int = 42
    threads: int = 2


DEFAULT_CONFIG = TrainConfig()


def fit(
    pages: Sequence[PageData], config: TrainConfig = DEFAULT_CONFIG, init_model: CatBoostClassifier | None = None
) -> CatBoostClassifier:
    """A model trained on the labelled blocks (weight > 0) of ``pages``.

    ``init_model``: go on boosting from that model (a host's model starts from the global one,
    so a few dozen trees learn what the host does differently).
    """
    x = np.vstack([d.x for d in pages])
    y = np.concatenate([d.y for d in pages])
    w = np.concatenate([d.w for d in pages])
    keep = w > 0
    if not keep.any():
        raise ValueError("no labelled block to train on")
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
    model.fit(Pool(x[keep], y[keep], weight=w[keep], feature_names=list(FEATURE_NAMES)), init_model=init_model)
    model.get_metadata()["autoparser_model_version"] = str(MODEL_VERSION)  # saved with the file, checked at load
    return model
