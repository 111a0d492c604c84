"""The partner API on Apache Kafka: a 202 means the upload is in ``partner.uploads``; lag is read for shedding."""

from __future__ import annotations

from pathlib import Path

import pytest

from cubes.api.shedding import LoadShedder
from shared import contracts
from shared.messages import PartnerUpload
from shared.stores import TaskItem, TaskStatus
from tests.unit.cubes.api.apikit import ApiHarness, api_settings, rss

pytestmark = pytest.mark.kafka


async def _find_upload(api: ApiHarness, before: dict[int, int], task_id: str) -> PartnerUpload:
    ends = await api.deps.bus.end_offsets("partner.uploads")
    for partition, end in ends.items():
        start = before.get(partition, 0)
        if end > start:
            for record in await api.deps.bus.read("partner.uploads", partition, start, end - start):
                msg = contracts.decode("partner.uploads", record.value)
                if isinstance(msg, PartnerUpload) and msg.task_id == task_id:
                    return msg
    raise AssertionError(f"upload {task_id} not found in partner.uploads")


async def test_upload_on_kafka_end_to_end_through_the_task_status(tmp_path: Path, kafka_url: str, uid: str) -> None:
    host = f"k{uid}.partner.test"
    # the Kafka topic is shared with every other test: shed nothing here, read the lag separately below
    settings = api_settings(tmp_path, shed_lag=10**12).replace(bus={"url": kafka_url})
    async with ApiHarness(tmp_path, settings=settings) as api:
        _, token = await api.tenant(host)
        before = await api.deps.bus.end_offsets("partner.uploads")
        body = rss(2, host)
        resp = await api.upload(token, body, host=host)
        assert resp.status == 202, await resp.text()
        task_id = (await resp.json())["task_id"]

        msg = await _find_upload(api, before, task_id)  # durable on the broker when 202 arrived
        assert msg.body == body
        assert msg.host == host

        # the parser's side of the contract: it updates the task the API created
        await api.stores.tasks.update(task_id, status=TaskStatus.done, items=[TaskItem(f"https://{host}/p/0", "ok")])
        got = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        assert got["status"] == "done"
        assert got["counts"] == {"ok": 1}

        # load shedding reads a group's lag from Kafka: a group that committed nothing lags by everything
        shedder = LoadShedder(api.deps.bus, f"parser-{uid}", 0, api.clock)
        reading = await shedder.refresh()
        assert reading.reason == "lag"
        assert reading.lag >= 1
        assert reading.shed
