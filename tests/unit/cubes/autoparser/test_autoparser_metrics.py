"""Evaluation metrics on tiny hand-made cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from cubes.autoparser.evaluate import evaluate, load_eval_dir
from cubes.autoparser.metrics import mean_prf, snippet_counts, snippet_prf, token_prf


def test_token_prf_is_a_bag_of_whitespace_tokens() -> None:
    r = token_prf("a b b c", "a b d")
    # common: a, b (one b only) = 2; 4 predicted, 3 true
    assert r.precision == pytest.approx(2 / 4)
    assert r.recall == pytest.approx(2 / 3)
    assert r.f1 == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert token_prf("", "").f1 == 1.0
    assert token_prf("x", "").f1 == 0.0


def test_mean_prf_averages_pages() -> None:
    m = mean_prf([token_prf("a", "a"), token_prf("b", "c")])
    assert m.f1 == pytest.approx(0.5)


def test_snippets_micro_average() -> None:
    counts = [snippet_counts("The Main text. Footer", ["main   TEXT"], ["footer", "nav"])]
    assert counts == [(1, 0, 1, 1)]
    r = snippet_prf(counts)
    assert (r.precision, r.recall) == (0.5, 1.0)


def test_evaluate_a_pairs_directory(tmp_path: Path) -> None:
    (tmp_path / "one.html").write_text("<p>alpha beta gamma</p>")
    (tmp_path / "one.txt").write_text("alpha beta gamma")
    (tmp_path / "two.html").write_text("<p>delta</p>")
    (tmp_path / "two.txt").write_text("delta epsilon")
    samples = load_eval_dir(tmp_path)
    assert [s.name for s in samples] == [f"pair:{tmp_path.name}/one", f"pair:{tmp_path.name}/two"]
    report = evaluate(samples, lambda html, url: html.decode().replace("<p>", "").replace("</p>", ""))
    assert report.token_pages == 2
    assert report.token.recall == pytest.approx((1.0 + 0.5) / 2)
    assert report.token.precision == pytest.approx(1.0)
    assert report.pages_per_s > 0


def test_eval_dir_without_ground_truth_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_eval_dir(tmp_path)
