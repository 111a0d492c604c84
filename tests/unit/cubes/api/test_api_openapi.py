"""The OpenAPI document is served and matches the router exactly (schemathesis fuzzes it in integration)."""

from __future__ import annotations

from pathlib import Path

from cubes.api.app import create_app
from cubes.api.openapi import document
from shared.config import Settings
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


def test_the_document_says_who_owns_what_and_how_the_counts_are_protected() -> None:
    """The hosts tag says the rights rule, the wordstat tag the counts' protection, with the settings' defaults."""
    settings = Settings()
    tags = {t["name"]: t["description"] for t in document()["tags"]}
    ownership, counts = tags["hosts"], tags["wordstat"]
    said = ("scheme, host and port", "origin_not_held", "page_not_owned", "conflict.other_tenant",
            "GET /api/v1/notices", "host.proof_lapsing", "redirects to another origin are not followed")  # fmt: skip
    assert [s for s in said if s not in ownership] == []
    assert settings.api.proof_recheck_s == 86_400  # "daily"
    assert "re-checked daily" in ownership
    assert settings.api.proof_grace_s == 7 * 86_400  # "a week"
    assert "a week" in ownership
    assert f"wordstat.privacy_threshold ({settings.wordstat.privacy_threshold})" in counts
    assert f"(0 to {settings.wordstat.privacy_noise})" in counts
    assert "cubes/wordstat/README.md" in counts
    assert Path("cubes/wordstat/README.md").is_file()


async def test_the_docs_page_shows_each_tags_text_under_its_heading(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        body = await (await api.client.get("/docs")).text()
    sections = {part.split('"', 1)[0]: part for part in body.split('<h2 id="')[1:]}
    assert "page_not_owned, naming no tenant" in sections["hosts"]
    assert "cubes/wordstat/README.md" in sections["wordstat"]
    assert "&lt;head&gt;" in sections["hosts"]  # escaped: the text is not markup
