"""The engines ``ops/`` starts keep a log an operator can read (docs/architecture.md section 8).

Kafka 4.x logs through Log4j 2: given a Log4j 1 file (as ``ops/kafka/start`` did), its
``broker.log`` held one line, ``Reconfiguration failed: No configuration found``, and a 136 s
outage of the broker left no trace of it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

pytestmark = [pytest.mark.kafka]

#: a line of the broker's own log: "[2026-12-01 22:49:13,015] INFO [KafkaRaftServer nodeId=1] ... (kafka.server...)"
BROKER_LINE = re.compile(
    r"^\[\d{4}-\d\d-\d\d [\d:,]+\] (INFO|WARN|ERROR) .+ \((kafka|org\.apache\.kafka)\.[\w.$]+\)$", re.M
)


def test_the_broker_logs_to_its_file(kafka_url: str) -> None:
    var = Path(os.environ.get("TURBOCUBES_VAR") or "/tmp/turbocubes-ops") / "kafka"
    logs = sorted(var.glob("broker.log*"))
    assert logs, f"no broker.log under {var}"
    text = "\n".join(p.read_text(errors="replace") for p in logs)
    assert "No configuration found" not in text.split("Kafka Server started")[-1]
    assert len(BROKER_LINE.findall(text)) >= 10, text[-2000:]
