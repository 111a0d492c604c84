"""Training on a tiny corpus of pipeline pairs: model + metrics written, split respected, reproducible."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest

from cubes.autoparser.corpus import iter_samples
from cubes.autoparser.extract import Extractor
from cubes.autoparser.features import page_features
from cubes.autoparser.segment import segment
from cubes.autoparser.train import TrainConfig, train
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, TITLE, article_page


def make_pairs(directory: Path, n: int = 10) -> None:
    directory.mkdir()
    for i in range(n):
        # rotate the paragraphs so pages differ; one site per page, so every fold has sites
        paras = PARAGRAPHS[i % 5 :] + PARAGRAPHS[: i % 5]
        html = article_page()
        for a, b in zip(PARAGRAPHS, paras, strict=True):
            html = html.replace(f"<p>{a}</p>", f"<p>{b}#{i}</p>")
        (directory / f"page{i:02d}.html").write_text(html)
        (directory / f"page{i:02d}.txt").write_text("\n".join(f"{p}#{i}" for p in paras))
        (directory / f"page{i:02d}.json").write_bytes(
            orjson.dumps({"title": TITLE, "url": f"https://n{i}.example/{i}"})
        )


def test_train_on_pairs(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs"
    make_pairs(pairs)
    samples = iter_samples(tmp_path / "no-corpus", [pairs])
    assert len(samples) == 10

    lines: list[str] = []
    out = tmp_path / "m" / "model.cbm"
    config = TrainConfig(iterations=30, threads=1)
    metrics = train(out, tmp_path / "no-corpus", [pairs], config, lines.append, folds=2)
    assert out.is_file()
    saved = orjson.loads(out.with_suffix(".metrics.json").read_bytes())
    assert saved["pages"] == 10
    assert saved["cross_validation"]["sites"] == 10
    assert saved["cross_validation"]["folds"] == 2
    assert saved["cross_validation"]["shingle"]["pages"] == 10
    assert saved["model_bytes"] == out.stat().st_size
    assert len(saved["train_digest"]) == 64
    assert metrics["cross_validation"]["shingle"]["f1"] > 0.9
    assert metrics["in_sample"]["shingle"]["f1"] >= metrics["cross_validation"]["shingle"]["f1"] - 0.05
    assert "in_sample_gap_shingle_f1" in saved
    assert any("site-grouped 2-fold CV (10 sites)" in line for line in lines)
    assert any("self-labelling token F1" in line for line in lines)

    ex = Extractor(out)
    assert ex.extract(article_page(), "https://n.example/x").title == TITLE

    again = tmp_path / "m" / "again.cbm"
    train(again, tmp_path / "no-corpus", [pairs], config, lines.append, folds=0)
    # seeded: one command reproduces the model (the file itself differs only in a build guid)
    page = segment(article_page())
    x = page_features(page)
    assert np.array_equal(Extractor(again).model.proba(x), ex.model.proba(x))


def test_train_without_corpus_or_pairs_says_where_the_corpus_lives(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"not part of the repository\): pass --corpus DIR or --pairs DIR"):
        train(tmp_path / "m.cbm", tmp_path / "no-corpus", [], TrainConfig(iterations=5, threads=1), print)
