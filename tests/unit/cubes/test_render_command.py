"""``turbocubes render FILE|URL`` (cubes/render.py): local Turbo pages and every problem, publishing nothing."""

from __future__ import annotations

import io
import re
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
        Settings(),
        str(src),
        base_url="https://birds.example/feed.xml",
        out_dir=tmp_path / "pages",
        out=out,
        err=err,
        images=False,  # birds.example is nobody's: its images are judged in the next tests
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
    assert "1 Turbo page in" in out.getvalue()
    assert "1 image(s) were not fetched" in index


async def test_a_url_is_fetched_through_the_guard(tmp_path: Path, partner: PartnerServer) -> None:
    partner.set("127.0.0.1", "/feed.xml", FEED.replace("<title></title>", "<title>Untitled</title>"))
    url = f"http://127.0.0.1:{partner.port}/feed.xml"
    err = io.StringIO()
    refused = await render_command(Settings(), url, out_dir=tmp_path / "a", out=io.StringIO(), err=err)
    assert refused == 1
    assert "blocked_address" in err.getvalue()
    assert "--allow 127.0.0.1/32" in err.getvalue()  # says how to try a local feed, and the cube's setting
    assert "http.allowlist" in err.getvalue()
    partner.set("127.0.0.1", "/img/heron.jpg", _jpeg(), headers={"Content-Type": "image/jpeg"})
    ok = await render_command(
        Settings(), url, out_dir=tmp_path / "b", allow=["127.0.0.1/32"], out=io.StringIO(), err=io.StringIO()
    )
    assert ok == 0
    names = ["001-herons.html", "002-untitled.html", "index.html", "static"]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == names
    # each page links the shared stylesheet written beside it, so the local copy looks as served
    from shared.pages.style import PAGE_CSS, STYLESHEET_PATH

    sheet = STYLESHEET_PATH.lstrip("/")
    assert (tmp_path / "b" / sheet).read_text() == PAGE_CSS
    assert f'<link rel="stylesheet" href="{sheet}">' in (tmp_path / "b" / "001-herons.html").read_text()


def _jpeg() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (64, 48), (90, 120, 160)).save(out, "JPEG")
    return out.getvalue()


async def test_its_images_are_fetched_and_judged_as_the_pipeline_judges_them(
    tmp_path: Path, partner: PartnerServer
) -> None:
    """``render`` never looked at images, while the pipeline held back a page whose image was 404: a
    feed with one missing image rendered clean. Now it gives the pipeline's verdicts. (``/pics/``:
    the partner's ``/img/`` draws any image asked for.)"""
    o = f"http://127.0.0.1:{partner.port}"
    feed = (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>{o}/</link>'
        f"<item><title>Herons</title><link>{o}/herons</link><description><![CDATA[<p>Back.</p>"
        f'<img src="{o}/pics/heron.jpg" alt="A heron">]]></description></item>'
        f"<item><title>Egrets</title><link>{o}/egrets</link><description><![CDATA[<p>Dawn.</p>"
        f'<img src="{o}/pics/egret.jpg" alt="An egret">]]></description></item>'
        f"<item><title>Owls</title><link>{o}/owls</link><description><![CDATA[<p>Night.</p>"
        f'<img src="{o}/pics/owl.jpg" alt="An owl">]]></description></item>'
        "</channel></rss>"
    )
    partner.set("127.0.0.1", "/feed.xml", feed)
    partner.set("127.0.0.1", "/pics/heron.jpg", _jpeg(), headers={"Content-Type": "image/jpeg"})
    partner.set("127.0.0.1", "/pics/owl.jpg", b"<html>not an image</html>", headers={"Content-Type": "image/jpeg"})
    out, err = io.StringIO(), io.StringIO()
    rc = await render_command(
        Settings(), f"{o}/feed.xml", out_dir=tmp_path / "p", allow=["127.0.0.1/32"], out=out, err=err
    )
    assert rc == 1  # pages would be held back
    assert [h.path for h in partner.hits("127.0.0.1", "/pics/egret.jpg")] == ["/pics/egret.jpg"]  # it was asked
    index = (tmp_path / "p" / "index.html").read_text()
    verdicts = dict(re.findall(r'href="\d+-([a-z]+)\.html">[^<]+</a> <b class="[a-z]+">([^<]+)</b>', index))
    assert verdicts == {"herons": "Would be published", "egrets": "Would be held back", "owls": "Would be held back"}
    assert "could not be copied: it answered HTTP 404" in index
    assert "could not be copied: not an image" in index
    egrets = (tmp_path / "p" / "002-egrets.html").read_text()
    assert "egret.jpg" not in egrets  # the page shows the images it will have
    assert f'src="{o}/pics/heron.jpg"' in (tmp_path / "p" / "001-herons.html").read_text()
    assert "2 would be held back" in out.getvalue()
    assert "egrets: would be held back" in err.getvalue()


def test_the_command_is_on_the_cli(tmp_path: Path) -> None:
    src = tmp_path / "f.xml"
    src.write_text(FEED)
    args = ["render", str(src), "--base-url", "https://birds.example/f.xml", "--out", str(tmp_path / "o")]
    assert main([*args, "--no-images"]) == 1
    assert (tmp_path / "o" / "index.html").is_file()
