"""Schemathesis fuzzes the served OpenAPI document against the running API.

The app runs on the embedded engines on 127.0.0.1:<random port> inside this
test's event loop; ``schemathesis run`` is a subprocess (its CLI is
synchronous and ``from_asgi`` does not apply to aiohttp). It must find no 5xx
and no response that breaks the document: status codes, content types,
headers and bodies. Bounded by examples per operation and a time budget.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from shared.stores import TenantLimits
from tests.unit.cubes.api.apikit import ApiHarness

#: per operation; enough to hit every validation branch, small enough for ~30 s in all
MAX_EXAMPLES = 25
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    ]
)


async def test_schemathesis_finds_no_server_errors_and_no_schema_violations(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path, max_upload_bytes=64 * 1024) as api:
        tenant_id, token = await api.tenant("a.partner.test")
        # generous limits: the fuzzer should reach the handlers, not only the 429 path
        await api.stores.tenants.set_limits(tenant_id, TenantLimits(rps=1e5, burst=100_000, bytes_per_s=1e9))
        base = str(api.client.make_url("/"))
        exe = Path(sys.executable).parent / "schemathesis"
        proc = await asyncio.create_subprocess_exec(
            str(exe),
            "run",
            f"{base}api/v1/openapi.json",
            "--url",
            base.rstrip("/"),
            "-H",
            f"Authorization: Bearer {token}",
            "--checks",
            CHECKS,
            "--max-examples",
            str(MAX_EXAMPLES),
            "--phases",
            "examples,coverage,fuzzing",
            "--max-time",
            "20",
            "--seed",
            "7",
            "--generation-database",
            "none",
            "--workers",
            # one worker: with two, hypothesis describes filter lambdas with ast.parse from two
            # threads at once, which CPython 3.11 can fail with "AST constructor recursion depth
            # mismatch" (a schemathesis Runtime Error, not a finding about our API)
            "1",
            "--request-timeout",
            # generous: CI machines are shared, and a slow answer is not what this test is about
            "60",
            "--no-color",
            "--warnings",
            "off",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=tmp_path,
            env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
        )
        async with asyncio.timeout(240):
            out, _ = await proc.communicate()
        text = out.decode("utf-8", "replace")
        assert proc.returncode == 0, text[-8000:]
        assert "passed" in text.lower()
