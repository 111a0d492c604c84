"""``turbocubes feeds export|import``: a tenant's feeds as OPML on the command line."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cubes.api.opml_commands import feeds_export, feeds_import
from shared.stores import Stores, open_stores
from tests.unit.cubes.api.test_feed_commands import Collector, registry

FILE = b"""<opml version="2.0" xmlns:tc="https://turbocubes.dev/ns/opml/1"><body>
<outline type="rss" xmlUrl="https://news.example/feed.xml" tc:format="turbo"/>
<outline type="rss" xmlUrl="https://intranet.example/feed.xml"/>
</body></opml>"""


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


async def test_import_prints_each_line_then_export_gives_the_feeds_back(stores: Stores) -> None:
    tenant = await stores.tenants.create_tenant("news")
    for host in ("news.example", "intranet.example"):
        await stores.tenants.add_host(tenant.tenant_id, host)
        await stores.tenants.set_verified(tenant.tenant_id, host)
    out, err = io.StringIO(), io.StringIO()
    code = await feeds_import(registry(stores, Collector()), stores, tenant.tenant_id, FILE, out=out, err=err)
    assert code == 1  # a line was refused
    lines = out.getvalue().splitlines()
    assert lines[0] == "line 2: added https://news.example/feed.xml"
    assert lines[1].startswith("line 3: refused https://intranet.example/feed.xml: url: ")  # the SSRF guard
    assert lines[2] == "1 added, 1 refused"
    again = io.StringIO()
    await feeds_import(registry(stores, Collector()), stores, tenant.tenant_id, FILE, out=again, err=err)
    assert again.getvalue().splitlines()[0] == "line 2: unchanged https://news.example/feed.xml"

    exported = io.StringIO()
    assert await feeds_export(stores, tenant.tenant_id, exported) == 0
    assert 'xmlUrl="https://news.example/feed.xml"' in exported.getvalue()
    assert 'tc:format="turbo"' in exported.getvalue()
    assert "intranet" not in exported.getvalue()


async def test_a_file_that_cannot_be_read_says_why(stores: Stores) -> None:
    tenant = await stores.tenants.create_tenant("news")
    err = io.StringIO()
    code = await feeds_import(
        registry(stores, Collector()), stores, tenant.tenant_id, b"<rss/>", out=io.StringIO(), err=err
    )
    assert code == 1
    assert "not an OPML file" in err.getvalue()
