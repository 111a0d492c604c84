"""Training the block classifier (docs/architecture.md section 3, autoparser; docs/conventions.md rule 14).

``train(...)`` self-labels the corpus (``label.py``), measures the extractor by
site-grouped cross-validation (``crossval.py``: no site in both training and validation),
then fits the shipped model on every page and writes ``<out>.cbm`` plus
``<out>.metrics.json``: the cross-validated figures (4-token-shingle and token P/R/F1 on
pages with a full reference, snippet P/R/F1 on snippet-labelled pages), the same figures
in-sample (the model scoring pages it was trained on) and the gap between the two, the
labelling's own agreement with the references, the training time and the sha256 digest
of the data.

The in-sample figure is printed only to show the gap: a model that looks much better on
its own pages than on unseen sites has learnt sites, not articles.

The model is small on purpose (depth 6, a few hundred trees, under 1 MB) so it ships
with the package; everything is seeded, so one command reproduces it (see ``README.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from cubes.autoparser.corpus import DEFAULT_CORPUS, Sample, corpus_digest, iter_samples
from cubes.autoparser.crossval import cross_validate, extract_texts
from cubes.autoparser.dataset import PageData, build_corpus_data
from cubes.autoparser.evaluate import Scores, score
from cubes.autoparser.extract import Extractor
from cubes.autoparser.features import FEATURE_NAMES
from cubes.autoparser.fit import DEFAULT_CONFIG, TrainConfig, fit
from cubes.autoparser.hostfit import MIN_HOST_PAIRS, HostChoice, calibrate
from cubes.autoparser.label import BODY
from cubes.autoparser.metrics import mean_prf, snippet_counts, snippet_prf, token_prf
from cubes.autoparser.model import MODEL_VERSION, BlockModel

__all__ = ["TrainConfig", "body_text", "train"]

#: folds of the site-grouped cross-validation
FOLDS = 5


def body_text(page_data: PageData, labels: np.ndarray[Any, Any]) -> str:
    return "\n".join(t for t, lab in zip(page_data.texts, labels, strict=True) if lab == BODY)


def _line(name: str, s: Scores) -> str:
    return (
        f"{name}: shingle F1 {s.shingle.f1:.4f} (P {s.shingle.precision:.4f} R {s.shingle.recall:.4f}), "
        f"token F1 {s.token.f1:.4f} on {s.full_pages} pages; snippet F1 {s.snippet.f1:.4f} "
        f"(P {s.snippet.precision:.4f} R {s.snippet.recall:.4f}) on {s.snippet_pages} pages"
    )


def train(
    out: Path,
    corpus: Path = DEFAULT_CORPUS,
    pairs: Iterable[Path] = (),
    config: TrainConfig = DEFAULT_CONFIG,
    log: Callable[[str], None] = print,
    folds: int = FOLDS,
    host_pairs: Mapping[str, Sequence[Sample]] | None = None,
    choices: list[HostChoice] | None = None,
) -> dict[str, Any]:
    """Cross-validate, train on everything, save ``out`` (+ ``.metrics.json``); returns the metrics.

    ``host_pairs``: the pipeline's pairs by host (``--from-store``). Hosts with at least
    ``MIN_HOST_PAIRS`` are held out of the global model and calibrated on their own pairs
    (``hostfit.calibrate``); the others' pairs join the global training. The hosts' choices
    are appended to ``choices``.
    """
    started = time.perf_counter()
    host_pairs = host_pairs or {}
    calibrated = sorted(h for h, ps in host_pairs.items() if len(ps) >= MIN_HOST_PAIRS)
    extra = [s for h, ps in sorted(host_pairs.items()) if h not in calibrated for s in ps]
    samples = sorted([*iter_samples(corpus, pairs), *extra], key=lambda s: s.name)
    if not corpus.is_dir():
        # the default corpus is ../shared/data beside the checkout: a fresh clone does not have it
        absent = f"the corpus {corpus} does not exist (../shared/data is not part of the repository)"
        if not samples:
            raise FileNotFoundError(f"{absent}: pass --corpus DIR or --pairs DIR")
        log(f"{absent}: training on the pairs only")
    if not samples:
        raise FileNotFoundError(f"no training samples under {corpus}")
    data = build_corpus_data(samples)
    log(f"corpus: {len(samples)} pages ({len(extra)} pipeline pairs; {len(calibrated)} hosts to calibrate apart)")

    labelling = mean_prf(token_prf(body_text(d, d.y), d.reference) for d in data if d.reference is not None)
    log(f"self-labelling token F1 vs reference: {labelling.f1:.4f} (P {labelling.precision:.4f})")
    snippet_labelling = snippet_prf(
        snippet_counts(body_text(d, np.where(d.w > 0, d.y, -1)), d.sample.with_, d.sample.without)
        for d in data
        if d.reference is None
    )
    log(f"self-labelling snippet F1 (snippets inside body-labelled blocks): {snippet_labelling.f1:.4f}")

    cv_started = time.perf_counter()
    cv = cross_validate(data, folds, config, log) if folds >= 2 else None
    cv_seconds = time.perf_counter() - cv_started
    fit_started = time.perf_counter()
    model = fit(data, config)
    fit_seconds = time.perf_counter() - fit_started
    model.get_metadata()["train_digest"] = digest = corpus_digest(samples)
    in_sample = score(
        samples,
        [d.reference for d in data],
        extract_texts(Extractor(model=BlockModel(model, out)), data),
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    model.save_model(str(out))
    metrics: dict[str, Any] = {
        "model_version": MODEL_VERSION,
        "model_file": out.name,
        "model_bytes": out.stat().st_size,
        "features": len(FEATURE_NAMES),
        "config": config.__dict__,
        "pages": len(samples),
        "train_blocks": int(sum(int((d.w > 0).sum()) for d in data)),
        "train_digest": digest,
        "self_labelling_token": labelling.as_dict(),
        "self_labelling_snippet": snippet_labelling.as_dict(),
        "in_sample": in_sample.as_dict(),
        "fit_seconds": round(fit_seconds, 1),
        "cv_seconds": round(cv_seconds, 1),
        "seconds": round(time.perf_counter() - started, 1),
    }
    if cv is not None:
        metrics["cross_validation"] = {
            **cv.scores.as_dict(),
            "folds": folds,
            "sites": cv.sites,
            "rule": "sites dealt into folds, biggest first (cubes/autoparser/sites.py)",
        }
        metrics["in_sample_gap_shingle_f1"] = round(in_sample.shingle.f1 - cv.scores.shingle.f1, 4)
        log(_line(f"site-grouped {folds}-fold CV ({cv.sites} sites)", cv.scores))
    log(_line("in-sample (trained on these pages)", in_sample))
    hosts: dict[str, Any] = {}
    for host in calibrated:
        choice = calibrate(host, host_pairs[host], model, config, log)
        hosts[host] = {"choice": choice.kind, "threshold": choice.threshold, **choice.figures}
        log(f"{host}: {choice.kind}" + (f" (threshold {choice.threshold})" if choice.threshold is not None else ""))
        if choices is not None:
            choices.append(choice)
    metrics["hosts"] = hosts
    metrics["seconds"] = round(time.perf_counter() - started, 1)
    metrics_path = out.with_suffix(".metrics.json")
    metrics_path.write_bytes(orjson.dumps(metrics, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    log(
        f"saved {out} ({out.stat().st_size // 1024} KB; final fit {fit_seconds:.1f} s, "
        f"cross-validation {cv_seconds:.1f} s) and {metrics_path.name}"
    )
    return metrics
