"""Site-grouped cross-validation of the whole extractor (docs/architecture.md section 3, autoparser).

``cross_validate(data, k)`` deals the pages' *sites* into ``k`` folds (``sites.grouped_folds``:
no site on both sides), trains one model per fold on the other folds' pages and runs the
full extraction path (``Extractor.extract``: features, the model, post-processing) on the
held-out fold's pages. Every page is predicted exactly once by a model that never saw its
site, so the figures are what an unseen site gets. Feature matrices are built once for all
folds (``dataset.build_page_data``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cubes.autoparser.dataset import PageData
from cubes.autoparser.evaluate import Scores, score
from cubes.autoparser.extract import Extraction, Extractor
from cubes.autoparser.fit import DEFAULT_CONFIG, TrainConfig, fit
from cubes.autoparser.model import BlockModel
from cubes.autoparser.sites import grouped_folds

__all__ = ["CrossValidation", "cross_validate", "extract_all", "extract_texts"]


@dataclass
class CrossValidation:
    folds: list[int]
    #: the held-out extraction of every page, in the order of ``data``
    texts: list[str]
    #: the completeness guard's score of each held-out extraction
    completeness: list[float]
    scores: Scores
    sites: int
    #: whether each held-out extraction is an article (``Extraction.is_article``): the cube publishes
    #: none that is not
    articles: list[bool]


def extract_all(extractor: Extractor, data: Sequence[PageData]) -> list[Extraction]:
    """Every page's extraction; a page's template learnt the page itself, so it is counted out."""
    out = []
    for d in data:
        ex = extractor.extract(d.sample.html, d.sample.url, template=d.template, template_counted=True)
        ex.page = None
        out.append(ex)
    return out


def extract_texts(extractor: Extractor, data: Sequence[PageData]) -> list[str]:
    return [ex.text for ex in extract_all(extractor, data)]


def cross_validate(
    data: Sequence[PageData],
    k: int = 5,
    config: TrainConfig = DEFAULT_CONFIG,
    log: Callable[[str], None] = print,
) -> CrossValidation:
    from cubes.autoparser.sites import site_of

    samples = [d.sample for d in data]
    folds = grouped_folds(samples, k)
    texts = [""] * len(data)
    completeness = [1.0] * len(data)
    articles = [True] * len(data)
    for f in range(k):
        held = [i for i, g in enumerate(folds) if g == f]
        if not held:
            continue
        model = fit([d for d, g in zip(data, folds, strict=True) if g != f], config)
        extractor = Extractor(model=BlockModel(model, Path(f"<fold {f}>")))
        for i, ex in zip(held, extract_all(extractor, [data[i] for i in held]), strict=True):
            texts[i] = ex.text
            completeness[i] = ex.completeness
            articles[i] = ex.is_article
        log(f"fold {f + 1}/{k}: {len(held)} pages held out")
    scores = score(samples, [d.reference for d in data], texts)
    return CrossValidation(folds, texts, completeness, scores, len({site_of(s) for s in samples}), articles)
