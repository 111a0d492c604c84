"""The batch-fed histogram exposes the same series a prometheus_client Histogram would."""

from __future__ import annotations

from prometheus_client import REGISTRY

from shared.metrics import HANDLER_SECONDS


def test_batch_histogram_counts_cumulatively_with_sum_and_count() -> None:
    HANDLER_SECONDS.observe_many("metrics-test", [0.00005, 0.0003, 0.0003, 2.0, 100.0])
    get = REGISTRY.get_sample_value
    labels = {"cube": "metrics-test"}
    assert get("turbocubes_handler_seconds_bucket", {**labels, "le": "0.0001"}) == 1
    assert get("turbocubes_handler_seconds_bucket", {**labels, "le": "0.0005"}) == 3
    assert get("turbocubes_handler_seconds_bucket", {**labels, "le": "1.0"}) == 3
    assert get("turbocubes_handler_seconds_bucket", {**labels, "le": "5.0"}) == 4
    assert get("turbocubes_handler_seconds_bucket", {**labels, "le": "+Inf"}) == 5
    assert get("turbocubes_handler_seconds_count", labels) == 5
    assert abs((get("turbocubes_handler_seconds_sum", labels) or 0) - 102.00065) < 1e-9
