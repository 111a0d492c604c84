"""OPML in the console: download my feeds, import a file, each line's result; another tenant's host refused."""

from __future__ import annotations

import aiohttp

from shared.messages import FeedRegistration
from tests.unit.cubes.frontend.test_console import HOST, Env, env

__all__ = ["env"]  # the fixture, re-exported for pytest

FILE = f"""<opml version="2.0"><body>
<outline text="News" type="rss" xmlUrl="https://{HOST}/news.xml"/>
<outline text="Theirs" type="rss" xmlUrl="https://b.partner.test/feed.xml"/>
</body></opml>""".encode()


def _form(csrf: str, body: bytes) -> aiohttp.FormData:
    form = aiohttp.FormData()
    form.add_field("csrf", csrf)
    form.add_field("opml", body, filename="feeds.opml", content_type="text/x-opml")
    return form


async def test_import_a_file_then_download_it(env: Env) -> None:
    _, token = await env.tenant()
    await env.tenant("b.partner.test")
    csrf = await env.sign_in(token)
    home = await (await env.client.get("/console")).text()
    assert 'action="/console/opml" enctype="multipart/form-data"' in home
    resp = await env.client.post("/console/opml", data=_form(csrf, FILE))
    page = await resp.text()
    assert resp.status == 200, page[:500]
    assert "1 added · 1 refused" in page
    assert "b.partner.test" in page  # the refused line says why: not a host of yours
    regs = [o.message for o in env.published if o.topic == "feeds.registry"]
    assert [r.url for r in regs if isinstance(r, FeedRegistration)] == [f"https://{HOST}/news.xml"]

    again = await (await env.client.post("/console/opml", data=_form(csrf, FILE))).text()
    assert "1 unchanged · 1 refused" in again

    export = await env.client.get("/console/opml")
    assert export.status == 200
    assert export.content_type == "text/x-opml"
    body = await export.read()
    assert f'xmlUrl="https://{HOST}/news.xml"'.encode() in body
    assert b"b.partner.test" not in body


async def test_an_import_needs_the_csrf_token_and_a_readable_file(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    assert (await env.client.post("/console/opml", data=_form("x" * 40, FILE))).status == 403
    bad = await env.client.post("/console/opml", data=_form(csrf, b"<html><body>no</body></html>"))
    assert bad.status == 422
    assert "OPML: not an OPML file" in await bad.text()
    assert not [o for o in env.published if o.topic == "feeds.registry"]


async def test_the_import_page_tells_apart_the_outlines_of_a_one_line_file(env: Env) -> None:
    _, token = await env.tenant()
    csrf = await env.sign_in(token)
    one_line = (
        f'<opml version="2.0"><body><outline type="rss" xmlUrl="https://{HOST}/a.xml"/>'
        f'<outline type="rss" xmlUrl="https://{HOST}/b.xml"/></body></opml>'
    ).encode()
    page = await (await env.client.post("/console/opml", data=_form(csrf, one_line))).text()
    assert ">outline 1 (line 1)<" in page
    assert ">outline 2 (line 1)<" in page
    # a file with a line for each outline says the line alone
    page = await (await env.client.post("/console/opml", data=_form(csrf, FILE))).text()
    assert ">line 2<" in page
    assert ">line 3<" in page
