"""``turbocubes render FILE|URL`` (cubes/render.py): local Turbo pages and every problem, publishing nothing."""

from __future__ import annotations

import io
from pathlib import Path

from cubes.cli import main
from cubes.render import render_command
from shared.config import Settings
from tests.partners.server import PartnerServer

FEED = (
    '<?xml version="1.0"?><rss version="2.0" xmlns:turbo="http://turbo.yandex.ru"><channel><title>T</title>'
    '<item turbo="true"><title>Herons &amp; egrets</title><link>/herons</link>'
    "<turbo:content><![CDATA[<header><h1>Herons</h1></header><p>They are back.</p>"
    '<img src="/img/heron.jpg" alt="A heron"><script>alert(1)</script>]]></turbo:content></item>'
    '<item turbo="true"><title></title><link>/untitled</link><turbo:content><![CDATA[<p>x</p>]]></turbo:content></item>'
    "</channel></rss>"
)


async def test_a_file_becomes_pages_and_an_index_with_every_problem(tmp_path: Path) -> None:
    src = tmp_path / "feed.xml"
    src.write_text(FEED)
    out, err = io.StringIO(), io.StringIO()
    rc = await render_command(
        Settings(), str(src), base_url="https://birds.example/feed.xml", out_dir=tmp_path / "pages", out=out, err=err
    )
    assert rc == 1  # an item was refused
    page = (tmp_path / "pages" / "001-herons.html").read_text()
    assert "<h1>Herons &amp; egrets</h1>" in page
    assert 'src="https://birds.example/img/heron.jpg"' in page  # the feed's own image (no CDN here)
    assert "<script>" not in page
    index = (tmp_path / "pages" / "index.html").read_text()
    assert '<a href="001-herons.html">Herons &amp; egrets</a>' in index
    assert "<code>item.no_title</code>" in index
    assert "How to fix:" in index
    assert "[item.no_title] item 2" in err.getvalue()
    assert "fix: Give every item a non-empty <title>" in err.getvalue()
    assert "1 Turbo page(s)" in out.getvalue()


async def test_a_url_is_fetched_through_the_guard(tmp_path: Path, partner: PartnerServer) -> None:
    partner.set("127.0.0.1", "/feed.xml", FEED.replace("<title></title>", "<title>Untitled</title>"))
    url = f"http://127.0.0.1:{partner.port}/feed.xml"
    err = io.StringIO()
    refused = await render_command(Settings(), url, out_dir=tmp_path / "a", out=io.StringIO(), err=err)
    assert refused == 1
    assert "blocked_address" in err.getvalue()
    assert "--allow 127.0.0.1/32" in err.getvalue()  # says how to try a local feed, and the cube's setting
    assert "http.allowlist" in err.getvalue()
    ok = await render_command(
        Settings(), url, out_dir=tmp_path / "b", allow=["127.0.0.1/32"], out=io.StringIO(), err=io.StringIO()
    )
    assert ok == 0
    names = ["001-herons.html", "002-untitled.html", "index.html", "static"]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == names
    # each page links the shared stylesheet written beside it, so the local copy looks as served
    from shared.page_style import PAGE_CSS, STYLESHEET_PATH

    sheet = STYLESHEET_PATH.lstrip("/")
    assert (tmp_path / "b" / sheet).read_text() == PAGE_CSS
    assert f'<link rel="stylesheet" href="{sheet}">' in (tmp_path / "b" / "001-herons.html").read_text()


def test_the_command_is_on_the_cli(tmp_path: Path) -> None:
    src = tmp_path / "f.xml"
    src.write_text(FEED)
    assert main(["render", str(src), "--base-url", "https://birds.example/f.xml", "--out", str(tmp_path / "o")]) == 1
    assert (tmp_path / "o" / "index.html").is_file()
