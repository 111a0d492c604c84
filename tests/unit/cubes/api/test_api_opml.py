"""OPML through the API: a tenant's feeds out, a file's feeds in, each line's result, idempotent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.webmaster.opml import NAMESPACE
from tests.unit.cubes.api.apikit import ApiHarness

HOST = "a.partner.test"
FILE = f"""<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0" xmlns:tc="{NAMESPACE}"><head><title>from my reader</title></head><body>
<outline text="News" type="rss" xmlUrl="https://{HOST}/news.xml"/>
<outline text="A folder">
  <outline text="Shop" type="rss" xmlUrl="https://{HOST}/shop.yml" tc:format="yml"
           tc:options='{{"timeout_s": 30, "filters": {{"drop_categories": ["ads"]}}}}'/>
  <outline text="Blog" type="rss" xmlUrl="https://{HOST}/blog/" tc:autoparser="true"/>
</outline>
<outline text="Someone else's" type="rss" xmlUrl="https://b.partner.test/feed.xml"/>
<outline text="Broken" type="rss" xmlUrl="ftp://{HOST}/feed.xml"/>
<outline text="Too slow" type="rss" xmlUrl="https://{HOST}/slow.xml" tc:options='{{"timeout_s": 999}}'/>
</body></opml>"""


async def _import(api: ApiHarness, token: str, body: str | bytes, ctype: str = "text/x-opml") -> tuple[int, Any]:
    resp = await api.client.post("/api/v1/feeds/opml", data=body, headers={**api.auth(token), "Content-Type": ctype})
    return resp.status, await resp.json()


async def test_an_import_reports_each_line_and_again_changes_nothing(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST)
        status, body = await _import(api, token, FILE)
        assert status == 200, body
        got = [(r["line"], r["url"], r["result"]) for r in body["lines"]]
        assert [g[1:] for g in got] == [
            (f"https://{HOST}/news.xml", "added"),
            (f"https://{HOST}/shop.yml", "added"),
            (f"https://{HOST}/blog/", "added"),
            ("https://b.partner.test/feed.xml", "refused"),
            (f"ftp://{HOST}/feed.xml", "refused"),
            (f"https://{HOST}/slow.xml", "refused"),
        ]
        assert [g[0] for g in got] == [3, 6, 7, 9, 10, 11]  # a tag over two lines: where it ends
        messages = {r["url"]: r["message"] for r in body["lines"]}
        assert "options.timeout_s" in messages[f"https://{HOST}/slow.xml"]
        assert "b.partner.test" in messages["https://b.partner.test/feed.xml"]
        assert body["counts"] == {"added": 3, "refused": 3}
        feeds = {
            f["url"]: f
            for f in (await (await api.client.get("/api/v1/feeds", headers=api.auth(token))).json())["feeds"]
        }
        shop = feeds[f"https://{HOST}/shop.yml"]
        assert shop["format"] == "yml"
        assert shop["options"]["timeout_s"] == 30
        assert shop["options"]["filters"]["drop_categories"] == ["ads"]
        assert feeds[f"https://{HOST}/blog/"]["autoparser"] is True

        status, again = await _import(api, token, FILE)
        assert status == 200
        assert again["counts"] == {"unchanged": 3, "refused": 3}


async def test_export_then_import_into_another_tenant_gives_the_same_feeds(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST)
        await _import(api, token, FILE)
        resp = await api.client.get("/api/v1/feeds/opml", headers=api.auth(token))
        assert resp.status == 200
        assert resp.content_type == "text/x-opml"
        exported = await resp.read()
        assert exported.count(b"<outline") == 3
        assert b'tc:format="yml"' in exported
        # the same site's second tenant (a second holder of the origin) imports it whole
        _, other = await api.tenant(HOST)
        _status, body = await _import(api, other, exported)
        assert body["counts"] == {"added": 3}
        before = (await (await api.client.get("/api/v1/feeds", headers=api.auth(token))).json())["feeds"]
        after = (await (await api.client.get("/api/v1/feeds", headers=api.auth(other))).json())["feeds"]
        keys = ("url", "format", "autoparser", "options")
        assert sorted(tuple(str(f[k]) for k in keys) for f in before) == sorted(
            tuple(str(f[k]) for k in keys) for f in after
        )


async def test_a_file_that_is_not_opml_is_named_and_nothing_is_registered(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST)
        bomb = '<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY a "aaaaaaaaaa">]><opml><body>&a;</body></opml>'
        for body, why in (
            ("<rss><channel/></rss>", "not an OPML file"),
            ("<opml><body>", "not well-formed"),
            (bomb, "entities"),
            ("", "empty"),
        ):
            status, answer = await _import(api, token, body)
            assert status == 422, answer
            assert answer["fields"][0]["field"] == "body"
            assert why in answer["fields"][0]["message"]
        status, _ = await _import(api, token, FILE, ctype="application/json")
        assert status == 415
        feeds = (await (await api.client.get("/api/v1/feeds", headers=api.auth(token))).json())["feeds"]
        assert feeds == []


async def test_a_file_on_one_line_says_which_outline_and_a_file_of_cr_lines_says_its_lines(tmp_path: Path) -> None:
    feeds = [f"https://{HOST}/{n}.xml" for n in ("a", "b", "c")]
    outlines = [f'<outline type="rss" xmlUrl="{u}"/>' for u in feeds]
    one_line = f'<?xml version="1.0"?><opml version="2.0"><body>{"".join(outlines)}</body></opml>'
    old_mac = "\r".join(['<?xml version="1.0"?>', '<opml version="2.0"><body>', *outlines, "</body></opml>"])
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST)
        _, body = await _import(api, token, one_line)
        # all three are on line 1: the line tells none apart, their number in the file does
        assert [(r["line"], r["outline"], r["url"]) for r in body["lines"]] == [
            (1, n, u) for n, u in enumerate(feeds, 1)
        ]
        # a file of CR line ends (classic Mac OS) has its lines: libxml2 counted it as one
        _, body = await _import(api, token, old_mac)
        assert [(r["line"], r["outline"]) for r in body["lines"]] == [(3, 1), (4, 2), (5, 3)]
        # libxml2 counts lines in 16 bits: an outline past line 65,535 has no line to say, only its number
        far = '<opml version="2.0"><body>' + "\n" * 70_000 + outlines[0] + "</body></opml>"
        _, body = await _import(api, token, far)
        assert [(r["line"], r["outline"]) for r in body["lines"]] == [(None, 1)]
