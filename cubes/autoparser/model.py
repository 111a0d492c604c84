"""The block classifier: loading, checking and batch prediction (docs/architecture.md section 3, autoparser).

A model is a CatBoost ``.cbm`` file plus ``<name>.metrics.json`` next to it. The
model stores its version (``MODEL_VERSION``) and its feature names; a model of another
version or with other features than ``FEATURE_NAMES`` is refused at start instead of
silently mis-reading columns.
Any problem with the file (missing, unreadable, not CatBoost, wrong features) is a
``ConfigError`` naming ``autoparser.model_path``, raised when the cube starts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
from catboost import CatBoostClassifier, CatBoostError

from cubes.autoparser.features import FEATURE_NAMES
from cubes.autoparser.label import CLASS_NAMES
from shared.errors import ConfigError

__all__ = ["DEFAULT_MODEL", "MODEL_VERSION", "BlockModel", "check_model", "load_model"]

DEFAULT_MODEL = Path(__file__).resolve().parent / "model" / "default.cbm"
#: bump when features, labels or classes change meaning; stored in the model file's metadata
#: (``autoparser_model_version``) and in its metrics file, and checked at load
MODEL_VERSION = 2
_KEY = "autoparser.model_path"


class BlockModel:
    """A loaded classifier; ``proba`` predicts every block of one page in one call."""

    def __init__(self, model: CatBoostClassifier, path: Path) -> None:
        self.model = model
        self.path = path

    def proba(self, x: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """(n_blocks, 3) probabilities of boilerplate / body / title; one batched call."""
        if x.shape[0] == 0:
            return np.zeros((0, len(CLASS_NAMES)))
        out = self.model.predict(x, prediction_type="Probability", thread_count=1)
        return np.asarray(out, dtype=np.float64)


def load_model(path: str | Path | None = None) -> BlockModel:
    """Load and check the model at ``path`` ("" or None = the shipped default)."""
    p = Path(path) if path else DEFAULT_MODEL
    if not p.is_file():
        raise ConfigError(_KEY, str(p), "an existing CatBoost model file (train one: turbocubes autoparser train)")
    model = CatBoostClassifier()
    try:
        model.load_model(str(p))
    except (CatBoostError, OSError, ValueError) as exc:
        raise ConfigError(_KEY, str(p), f"a readable CatBoost model file ({exc})") from None
    try:
        check_model(model, str(p))
    except ValueError as exc:
        raise ConfigError(_KEY, str(p), f"{exc}; retrain with: turbocubes autoparser train") from None
    return BlockModel(model, p)


def check_model(model: CatBoostClassifier, where: str) -> None:
    """``ValueError`` unless ``model`` is an autoparser model of this version, features and classes."""
    version = dict(model.get_metadata()).get("autoparser_model_version")
    if version != str(MODEL_VERSION):
        raise ValueError(f"{where}: an autoparser model of version {MODEL_VERSION} expected (it has {version!r})")
    names = tuple(model.feature_names_ or ())
    if names != FEATURE_NAMES:
        raise ValueError(
            f"{where}: a model trained on this version's {len(FEATURE_NAMES)} features expected (it has {len(names)})"
        )
    n_classes = len(model.classes_) if model.classes_ is not None else 0
    if n_classes != len(CLASS_NAMES):
        raise ValueError(f"{where}: a {len(CLASS_NAMES)}-class model expected (it has {n_classes})")
