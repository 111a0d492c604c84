"""The partner API on the embedded engines: uploads, task status, deletions, idempotency, bad input."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared.errors import StoreUnavailable
from shared.messages import DocumentDeleted, PartnerUpload, UploadFormat
from shared.stores import TaskItem, TaskStatus
from tests.unit.cubes.api.apikit import ApiHarness, rss


async def test_upload_is_durable_before_202_and_visible_as_a_queued_task(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant()
        body = rss(3)
        resp = await api.upload(token, body)
        assert resp.status == 202, await resp.text()
        data = await resp.json()
        task_id = data["task_id"]
        assert resp.headers["Location"] == f"/api/v1/uploads/{task_id}"
        assert "RateLimit" in resp.headers
        assert "RateLimit-Policy" in resp.headers

        # durable: the record is on the bus when the 202 arrives
        msgs = await api.messages("partner.uploads")
        assert len(msgs) == 1
        up = msgs[0]
        assert isinstance(up, PartnerUpload)
        assert (up.task_id, up.tenant_id, up.host, up.format, up.mode) == (
            task_id,
            tenant_id,
            "a.partner.test",
            UploadFormat.rss,
            "production",
        )
        assert up.body == body
        assert up.body_ref is None
        assert up.size == len(body)

        status = await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))
        assert status.status == 200
        got = await status.json()
        assert got["status"] == "queued"
        assert got["task_id"] == task_id
        assert got["items"] == []


async def test_task_status_shows_the_parsers_results_and_previews(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        resp = await api.upload(token, rss(2), mode="debug")
        task_id = (await resp.json())["task_id"]
        assert (await api.messages("partner.uploads"))[0].mode == "debug"  # type: ignore[attr-defined]
        # what the parser writes when it has processed the upload
        await api.stores.tasks.update(
            task_id,
            status=TaskStatus.done,
            items=[
                TaskItem("https://a.partner.test/p/0", "ok"),
                TaskItem("https://a.partner.test/p/1", "failed", "line 3, column 7: <title> is empty"),
            ],
            preview_urls=["https://a.partner.test/p/0"],
        )
        got = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        assert got["status"] == "done"
        assert got["counts"] == {"ok": 1, "failed": 1}
        assert got["items"][1] == {
            "url": "https://a.partner.test/p/1",
            "status": "failed",
            "error": "line 3, column 7: <title> is empty",
            "problems": [],
        }
        assert got["preview_urls"] == [
            f"{api.settings.frontend.public_url}/preview?task={task_id}&url=https%3A%2F%2Fa.partner.test%2Fp%2F0"
        ]


async def test_a_malformed_feed_is_still_accepted_as_a_task(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        resp = await api.upload(token, b"<rss><channel><item>unclosed")
        assert resp.status == 202  # the parser will report the errors in the task
        assert len(await api.messages("partner.uploads")) == 1


async def test_json_upload_must_be_well_formed(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        ok = await api.upload(token, b'{"documents": []}', fmt="json", content_type="application/json")
        assert ok.status == 202
        bad = await api.upload(token, b'{"documents": [', fmt="json", content_type="application/json")
        assert bad.status == 400
        err = await bad.json()
        assert err["error"] == "malformed_json"
        assert err["line"] == 1
        assert len(await api.messages("partner.uploads")) == 1


async def test_idempotency_key_returns_the_first_task(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        first = await api.upload(token, rss(1), headers={"Idempotency-Key": "k-1"})
        second = await api.upload(token, rss(1), headers={"Idempotency-Key": "k-1"})
        assert first.status == second.status == 202
        assert await first.json() == await second.json()
        other = await api.upload(token, rss(1), headers={"Idempotency-Key": "k-2"})
        assert (await other.json())["task_id"] != (await first.json())["task_id"]
        assert len(await api.messages("partner.uploads")) == 2


async def test_idempotency_keys_are_per_tenant(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token_a = await api.tenant("a.partner.test")
        _, token_b = await api.tenant("b.partner.test")
        a = await api.upload(token_a, rss(1), headers={"Idempotency-Key": "same"})
        b = await api.upload(
            token_b, rss(1, "b.partner.test"), host="b.partner.test", headers={"Idempotency-Key": "same"}
        )
        assert (await a.json())["task_id"] != (await b.json())["task_id"]


async def test_bus_down_gives_503_and_a_retry_with_the_key_completes_the_same_task(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        api.fail_publish()
        down = await api.upload(token, rss(1), headers={"Idempotency-Key": "retry-me"})
        assert down.status == 503
        assert down.headers["Retry-After"].isdigit()
        assert (await down.json())["error"] == "unavailable"
        api.publish_error = None
        up = await api.upload(token, rss(1), headers={"Idempotency-Key": "retry-me"})
        assert up.status == 202
        task_id = (await up.json())["task_id"]
        task = await api.stores.tasks.get(task_id)
        assert task is not None
        assert task.status is TaskStatus.queued
        assert task.errors == ()
        msgs = await api.messages("partner.uploads")
        assert [m.task_id for m in msgs] == [task_id]  # type: ignore[attr-defined]


async def test_large_bodies_travel_as_blob_references(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, inline_body_max=1024) as api:
        tenant_id, token = await api.tenant()
        body = rss(60)
        assert len(body) > 1024
        resp = await api.upload(token, body)
        assert resp.status == 202
        up = (await api.messages("partner.uploads"))[0]
        assert isinstance(up, PartnerUpload)
        assert up.body is None
        assert up.body_ref is not None
        assert up.size == len(body)
        assert await (await api.deps.blobs()).get(up.body_ref) == body
        assert tenant_id in up.body_ref


async def test_too_large_by_content_length_and_while_streaming(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, max_upload_bytes=2000) as api:
        _, token = await api.tenant()
        declared = await api.upload(token, b"x" * 2001)
        assert declared.status == 413
        assert (await declared.json())["error"] == "too_large"

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: only streaming can catch it
            for _ in range(10):
                yield b"<" * 500

        streamed = await api.client.post(
            "/api/v1/uploads",
            params={"host": "a.partner.test", "format": "rss"},
            data=chunks(),
            headers={**api.auth(token), "Content-Type": "application/rss+xml"},
        )
        assert streamed.status == 413
        assert await api.messages("partner.uploads") == []


async def test_wrong_media_type_is_415(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        for fmt, ctype in [("json", "text/xml"), ("rss", "application/json"), ("yml", "text/plain")]:
            resp = await api.upload(token, b"{}", fmt=fmt, content_type=ctype)
            assert resp.status == 415, (fmt, ctype)
            assert (await resp.json())["error"] == "unsupported_media_type"
        missing = await api.client.post(
            "/api/v1/uploads",
            params={"host": "a.partner.test", "format": "rss"},
            data=b"<rss/>",
            headers={**api.auth(token), "Content-Type": ""},
        )
        assert missing.status == 415
        for ctype in ("application/rss+xml; charset=utf-8", "text/xml", "application/xml"):
            assert (await api.upload(token, rss(1), content_type=ctype)).status == 202


async def test_bad_query_is_422_with_field_errors(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        resp = await api.client.post(
            "/api/v1/uploads",
            params={"format": "docx", "mode": "loud"},
            data=b"x",
            headers={**api.auth(token), "Content-Type": "text/xml"},
        )
        assert resp.status == 422
        err = await resp.json()
        assert err["error"] == "validation"
        assert {f["field"] for f in err["fields"]} == {"host", "format", "mode"}
        assert all(f["message"] for f in err["fields"])


async def test_unknown_task_is_404(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        resp = await api.client.get("/api/v1/uploads/nope", headers=api.auth(token))
        assert resp.status == 404
        assert (await resp.json())["error"] == "not_found"


async def test_delete_page_publishes_a_versioned_tombstone(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant()
        resp = await api.client.delete(
            "/api/v1/pages", params={"url": "HTTPS://A.partner.test/p/1#frag"}, headers=api.auth(token)
        )
        assert resp.status == 202
        got = await resp.json()
        assert got == {"url": "https://a.partner.test/p/1", "version": int(api.clock.time() * 1_000_000)}
        (msg,) = await api.messages("documents.deleted")
        assert isinstance(msg, DocumentDeleted)
        assert msg.url == "https://a.partner.test/p/1"
        assert msg.host == "a.partner.test"
        assert msg.version == got["version"]
        assert msg.source.id == f"tenant:{tenant_id}"

        bad = await api.client.delete("/api/v1/pages", params={"url": "ftp://x/y"}, headers=api.auth(token))
        assert bad.status == 422
        assert (await bad.json())["fields"][0]["field"] == "url"
        missing = await api.client.delete("/api/v1/pages", headers=api.auth(token))
        assert missing.status == 422


async def test_a_store_outage_is_503_not_500(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()

        async def down(*args: object, **kwargs: object) -> None:
            raise StoreUnavailable("test: the database is down")

        monkeypatch.setattr(api.stores.tasks, "create", down)
        resp = await api.upload(token, rss(1))
        assert resp.status == 503
        assert resp.headers["Retry-After"] == "5"
        assert (await resp.json())["error"] == "unavailable"
        assert await api.messages("partner.uploads") == []
