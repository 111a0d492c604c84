"""The article-extraction benchmark's 4-token-shingle measure, on hand-made texts."""

from __future__ import annotations

import pytest

from cubes.autoparser.metrics import shingle_counts, shingle_prf


def test_shingles_count_repeats_and_order() -> None:
    truth = "one two three four five"  # shingles: (1234), (2345)
    assert shingle_counts(truth, truth) == (1.0, 0.0, 0.0)
    # the same words twice: 7 shingles, 2 of them match the truth's once each, 5 are false positives
    tp, fp, fn = shingle_counts(truth + " " + truth, truth)
    assert tp == pytest.approx(2 / 7)
    assert fp == pytest.approx(5 / 7)
    assert fn == 0.0
    # the same bag of words in another order shares no shingle: a bag of tokens would score 1
    assert shingle_counts("five four three two one", truth)[0] == 0.0


def test_short_texts_are_one_shingle_and_case_counts() -> None:
    assert shingle_counts("Hello world", "Hello world") == (1.0, 0.0, 0.0)
    assert shingle_counts("hello world", "Hello world") == (0.0, 0.5, 0.5)
    assert shingle_counts("", "") == (0.0, 0.0, 0.0)


def test_mean_precision_and_mean_recall() -> None:
    pages = [
        shingle_counts("a b c d e", "a b c d e"),  # P 1, R 1
        shingle_counts("a b c d x y z w", "a b c d"),  # P 1/5, R 1
        shingle_counts("", "a b c d"),  # nothing predicted: no precision, recall 0
    ]
    r = shingle_prf(pages)
    assert r.precision == pytest.approx((1 + 1 / 5) / 2)
    assert r.recall == pytest.approx((1 + 1 + 0) / 3)
    assert r.f1 == pytest.approx(2 * r.precision * r.recall / (r.precision + r.recall))
    assert shingle_prf([]).f1 == 0.0
