"""The OpenAPI document is served and matches the router exactly (schemathesis fuzzes it in integration)."""

from __future__ import annotations

from pathlib import Path

from cubes.api.app import create_app
from cubes.api.openapi import document
from tests.unit.cubes.api.apikit import ApiHarness, api_settings

_METHODS = {"get", "post", "put", "delete", "patch"}


def _routed() -> set[tuple[str, str]]:
    app = create_app(api_settings(Path("/nonexistent")), deps=None)
    out = set()
    for route in app.router.routes():
        if route.method == "HEAD":
            continue
        out.add((route.method.lower(), route.resource.canonical))  # type: ignore[union-attr]
    return out


def _documented() -> set[tuple[str, str]]:
    return {(method, path) for path, ops in document()["paths"].items() for method in ops if method in _METHODS}


def test_every_route_is_documented_and_every_documented_operation_is_routed() -> None:
    routed, documented = _routed(), _documented()
    assert routed - documented == set(), "routes missing from the OpenAPI document"
    assert documented - routed == set(), "documented operations that no route serves"
    assert len(routed) >= 12


def test_every_operation_documents_its_errors_and_a_unique_operation_id() -> None:
    doc = document()
    ids = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            ids.append(op["operationId"])
            codes = set(op["responses"])
            assert "503" in codes, (method, path)  # the bulkhead can refuse anything
            if op.get("security") != []:
                assert "401" in codes, (method, path)
            if "requestBody" in op:
                assert {"400", "413", "415"} <= codes, (method, path)
            for code, response in op["responses"].items():
                if code in ("429", "503"):
                    assert response["headers"]["Retry-After"]["required"] is True
    assert len(ids) == len(set(ids))
    assert doc["openapi"] == "3.1.0"


async def test_the_document_is_served(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        resp = await api.client.get("/api/v1/openapi.json")
        assert resp.status == 200
        assert resp.content_type == "application/json"
        assert await resp.json() == document()
