"""The XSS table: every hostile fragment, through the whole pipeline, into the page the frontend serves.

(docs/architecture.md section 6.) Each vector of ``tests/unit/shared/test_safehtml.py``'s
table travels the way partner content does, on the embedded engines:

    upload (JSON documents, RSS <description>, Turbo <turbo:content>) -> the API -> partner.uploads
    -> the parser cube -> documents.parsed -> the media cube (its images failed for good, as for an
    image that cannot be fetched) -> documents.ready -> the kvwriter cube -> the page store
    -> the frontend's ``GET /turbo?url=...``

and the served page is read by an independent tokenizer (Python's ``html.parser``, not nh3): no
script, no event handler, no ``javascript:``/``vbscript:``/``data:`` URL, nothing loaded from or
submitted to another site, no frame but the allowed video hosts, exactly our own one ``<style>``
-- and the page carries the frontend's Content-Security-Policy with no inline script allowed.
A few vectors go into the title as well, where they must come out as text.
"""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote, urlsplit
from xml.sax.saxutils import escape

import orjson
from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app as create_frontend
from cubes.kvwriter.cube import build as build_kvwriter
from cubes.media.cube import build as build_media
from cubes.parser.cube import build as build_parser
from shared.images.media import MediaDoc
from shared.messages import Document
from shared.pages.style import STYLESHEET_PATH
from shared.runtime import run_cube
from tests.unit.cubes.api.apikit import ApiHarness, api_settings
from tests.unit.security.conftest import Matrix
from tests.unit.shared.test_safehtml import XSS_VECTORS

HOST = "xss.partner.test"
FORMATS = ("json", "rss", "turbo")
#: attributes whose value is fetched, followed or submitted by a browser
URL_ATTRS = {"href", "src", "poster", "action", "formaction", "data", "srcset", "background", "cite", "xlink:href"}
BAD_SCHEMES = ("javascript:", "vbscript:", "data:")
NEVER = {"script", "object", "embed", "form", "input", "button", "base", "svg", "math", "textarea", "xmp"}
#: vectors whose broken markup takes the text after them with it, as it would in a browser: an
#: attribute never closed; a NUL byte, which XML forbids (the parser recovers the rest of the feed
#: and reports it as ``xml.recovered``, but the item's text past the NUL is gone)
SWALLOWS = {
    *((fmt, "unclosed-attribute") for fmt in ("json", "rss", "turbo")),
    ("rss", "null-byte"),
    ("turbo", "null-byte"),
}
ALLOWED_FRAMES = ("https://www.youtube.com/", "https://player.vimeo.com/", "https://rutube.ru/", "https://vk.com/")


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.title_text: list[str] = []
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self._in_h1 = self._in_h1 or tag == "h1"

    def handle_endtag(self, tag: str) -> None:
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.title_text.append(data)


def _our_sheet(attrs: dict[str, str]) -> bool:
    """The page's own stylesheet (shared/pages/style.py), the one sheet a Turbo page links: no partner's."""
    return attrs.get("rel") == "stylesheet" and attrs.get("href") == STYLESHEET_PATH


def inert(html: str) -> list[str]:
    """What in a served page could run, load, frame or submit (empty: nothing)."""
    page = _Page()
    page.feed(html)
    page.close()
    found = []
    styles = 0
    for tag, attrs in page.tags:
        if tag in NEVER:
            found.append(f"<{tag}>")
        styles += tag == "style"
        if tag == "meta" and "http-equiv" in attrs:
            found.append(f"<meta http-equiv={attrs['http-equiv']}>")
        if tag == "link" and attrs.get("rel") not in ("canonical", "icon") and not _our_sheet(attrs):
            found.append(f"<link rel={attrs.get('rel')}>")
        if tag == "iframe" and not attrs.get("src", "").startswith(ALLOWED_FRAMES):
            found.append(f"<iframe src={attrs.get('src')}>")
        if tag == "iframe" and "srcdoc" in attrs:
            found.append("<iframe srcdoc>")
        for name, value in attrs.items():
            if name.startswith("on"):
                found.append(f"<{tag} {name}>")
            if name == "style" and ("expression" in value.lower() or "url(" in value.lower()):
                found.append(f"<{tag} style={value}>")
            if name in URL_ATTRS:
                v = "".join(value.split()).lower()
                if v.startswith(BAD_SCHEMES):
                    found.append(f"<{tag} {name}={value[:40]}>")
                if "evil.test" in v and not (tag == "a" and name == "href"):
                    found.append(f"<{tag} {name}={value[:40]}>: loads from another site")
    if styles != 1:
        found.append(f"{styles} <style> elements (ours is the only one)")
    return found


def _item(i: int, fragment: str) -> tuple[str, str, str]:
    title_payload = fragment if i % 7 == 0 else ""  # some go into the title too: text there, never markup
    return f"https://{HOST}/v/{i}", f"Vector {i} {title_payload}", f"<p>before {i}</p>{fragment}<p>after {i}</p>"


def _body(fmt: str) -> tuple[bytes, str]:
    items = [_item(i, fragment) for i, (_, fragment) in enumerate(XSS_VECTORS)]
    if fmt == "json":
        docs = [{"url": u, "title": t, "content_html": c} for u, t, c in items]
        return orjson.dumps({"documents": docs}), "application/json"
    cdata = [c.replace("]]>", "]]]]><![CDATA[>") for _, _, c in items]  # a CDATA section ends at ]]>
    if fmt == "rss":
        rows = "".join(
            f"<item><title>{escape(t)}</title><link>{u}</link><description><![CDATA[{c}]]></description></item>"
            for (u, t, _), c in zip(items, cdata, strict=True)
        )
        return f'<rss version="2.0"><channel><title>x</title>{rows}</channel></rss>'.encode(), "application/rss+xml"
    rows = "".join(
        f'<item turbo="true"><title>{escape(t)}</title><link>{u}</link>'
        f"<turbo:content><![CDATA[<header><h1>{escape(t)}</h1></header>{c}]]></turbo:content></item>"
        for (u, t, _), c in zip(items, cdata, strict=True)
    )
    body = f'<rss version="2.0" xmlns:turbo="http://turbo.yandex.ru"><channel><title>x</title>{rows}</channel></rss>'
    return body.encode(), "application/rss+xml"


async def _publish(api: ApiHarness, token: str, fmt: str) -> None:
    body, content_type = _body(fmt)
    resp = await api.upload(token, body, host=HOST, fmt=fmt, content_type=content_type)
    assert resp.status == 202, await resp.text()
    await run_cube(await build_parser(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
    docs = [m for m in await api.messages("documents.parsed") if isinstance(m, Document)]
    # the images of hostile fragments cannot be fetched: failed for good, so media goes on without them
    for doc in docs:
        for url in MediaDoc(doc).refs:  # every reference media looks up: img, srcset, video, poster, media
            await api.stores.images.record_failed(url, "not an image (the XSS table)")
    await run_cube(await build_media(api.settings, api.deps), api.deps, max_messages=len(docs), idle_timeout=10.0)
    ready = len(await api.records("documents.ready"))
    await run_cube(await build_kvwriter(api.settings, api.deps), api.deps, max_messages=ready, idle_timeout=10.0)


async def test_xss_vectors_through_the_pipeline_are_inert_in_the_served_page(
    tmp_path: Path, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("xss")
    wrong: list[str] = []
    for fmt in FORMATS:
        # pages go on without what they lost (media.hold_incomplete off): this table is about what they show
        settings = api_settings(tmp_path / fmt, tenant_bytes_per_s=1e9).replace(media={"hold_incomplete": False})
        async with ApiHarness(tmp_path / fmt, settings=settings) as api:
            _, token = await api.tenant(HOST)
            await _publish(api, token, fmt)
            frontend = create_frontend(api.settings, api.stores)
            async with TestClient(TestServer(frontend, host="127.0.0.1", port=0)) as browser:
                for i, (name, _) in enumerate(XSS_VECTORS):
                    url, _, _ = _item(i, "")
                    resp = await browser.get(f"/turbo?url={quote(url, safe='')}")
                    html = await resp.text()
                    csp = resp.headers.get("Content-Security-Policy", "")
                    problems = [] if resp.status == 200 else [f"status {resp.status}"]
                    problems += inert(html)
                    if (fmt, name) not in SWALLOWS and (f"before {i}" not in html or f"after {i}" not in html):
                        problems.append("the text around the fragment was lost")
                    script_src = next((d for d in csp.split(";") if d.strip().startswith("script-src")), "")
                    if not csp or "unsafe-inline" in script_src or "unsafe-eval" in csp:
                        problems.append(f"CSP {csp!r}")
                    report.case(f"{fmt} {name}", not problems, kind=fmt)
                    if problems:
                        wrong.append(f"{fmt} {name}: {problems}")
    assert wrong == [], "\n".join(wrong)
    assert report.cases == len(FORMATS) * len(XSS_VECTORS)


def test_the_checker_sees_what_it_must() -> None:
    """The table proves something only if its checker catches the attacks it looks for."""
    ours = "<style>p{}</style>"
    assert inert(ours + "<p>ok</p>") == []
    for bad in (
        "<script>x</script>",
        '<img src=x onerror="alert(1)">',
        '<a href=" JaVa&#x09;script:alert(1)">x</a>',
        '<img src="https://evil.test/x.png">',
        '<iframe src="https://evil.test/"></iframe>',
        '<meta http-equiv="refresh" content="0">',
        '<p style="background:url(https://evil.test/t.png)">x</p>',
    ):
        assert inert(ours + bad), bad
    assert inert("<p>no style of ours</p>")
    assert urlsplit(ALLOWED_FRAMES[0]).netloc == "www.youtube.com"
