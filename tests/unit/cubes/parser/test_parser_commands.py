"""``turbocubes parse FILE|URL``: JSON lines out, errors with line and column, exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from cubes.parser.parse_file import parse_command
from shared.config import Settings

FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:turbo="http://turbo.yandex.ru"><channel><title>t</title>
<item turbo="true"><title>One</title><link>https://a.test/1</link>
<turbo:content><![CDATA[<p>one</p>]]></turbo:content></item>
<item turbo="true"><title>Other host</title><link>https://b.test/2</link>
<turbo:content><![CDATA[<p>two</p>]]></turbo:content></item>
<item turbo="false"><link>https://a.test/3</link></item>
</channel></rss>"""


async def run(source: str, **kw: object) -> tuple[int, list[dict[str, Any]], str]:
    out, err = io.StringIO(), io.StringIO()
    code = await parse_command(Settings(), source, out=out, err=err, **kw)  # type: ignore[arg-type]
    return code, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


async def test_file_prints_documents_deletions_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "turbo.xml"
    path.write_bytes(FEED)
    code, lines, err = await run(str(path), host="a.test")
    assert code == 0
    docs = [x for x in lines if "title" in x]
    assert [d["url"] for d in docs] == ["https://a.test/1"]
    assert docs[0]["source"]["kind"] == "turbo"
    assert [x["url"] for x in lines if "deleted_at" in x] == ["https://a.test/3"]
    assert f"{path}:5: error (item 2): item link is on host 'b.test'" in err


async def test_broken_file_exits_1_with_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_bytes(b'<?xml version="1.0"?>\n<rss>\n<channel><title>t</title>\n</chanel></rss>')
    code, lines, err = await run(str(path))
    assert code == 1
    assert lines == []
    assert f"{path}:4:" in err
    assert "error" in err


async def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, _, err = await run(str(tmp_path / "nope.xml"))
    assert code == 2
    assert "no such file" in err


async def test_yml_file_is_streamed(tmp_path: Path) -> None:
    offers = "".join(
        f'<offer id="{i}"><url>https://shop.test/{i}</url><name>N{i}</name><price>{i}</price></offer>'
        for i in range(20)
    )
    path = tmp_path / "cat.xml"
    path.write_text(f"<yml_catalog><shop><offers>{offers}</offers></shop></yml_catalog>")
    code, lines, _ = await run(str(path), host="shop.test")
    assert code == 0
    assert len(lines) == 20
    assert lines[3]["product"]["offer_id"] == "3"
    assert lines[3]["kind"] == "product"


async def test_url_is_fetched_through_the_guard() -> None:
    app = web.Application()

    async def feed(_: web.Request) -> web.Response:
        return web.Response(body=FEED, content_type="application/rss+xml")

    app.router.add_get("/turbo.xml", feed)
    async with TestServer(app, host="127.0.0.1", port=0) as server:
        url = str(server.make_url("/turbo.xml"))
        # without the allowlist the SSRF guard refuses the loopback address
        code, lines, err = await run(url)
        assert code == 1
        assert lines == []
        assert "blocked" in err
        code, lines, err = await run(url, host="a.test", allow=["127.0.0.1/32"])
    assert code == 0
    assert [x["url"] for x in lines if "title" in x] == ["https://a.test/1"]
