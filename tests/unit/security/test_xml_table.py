"""The XXE / bomb table: every XML attack x every place that parses partner XML.

Doors (each the real code path):

* ``feed``     -- ``cubes.parser.feed.parse_feed`` (RSS, Atom, Turbo, YML read whole);
* ``catalog``  -- ``cubes.parser.yml.iter_yml``, the streamed YML catalog of big bodies;
* ``upload``   -- an upload through the API and the parser cube: the task ends failed, with the
  refusal as its problem;
* ``sitemap``  -- ``shared.sitemaps`` (the scheduler reads partners' sitemaps for the autoparser);
* ``websub``   -- ``cubes.scheduler.feedhead.read_head`` (the scheduler reads a feed's head: its hub, its schedule).

The parser refuses what declares entities or breaks libxml2's limits, naming the attack; the
scheduler's readers recover, so there the rule is that nothing is expanded, nothing local is read
and nothing is fetched. External references point at the partner server on 127.0.0.1: any fetch
of them would be a hit there, and every row asserts there was none.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from cubes.parser.cube import build as build_parser
from cubes.parser.feed import parse_feed
from cubes.parser.xmlsafe import HostileXml
from cubes.parser.yml import iter_yml
from cubes.scheduler.feedhead import read_head
from cubes.scheduler.websub import discover
from shared.runtime import run_cube
from shared.sitemaps import discover_article_urls, sitemap_children
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness
from tests.unit.security.conftest import Matrix

HOST = "xml.partner.test"
LAUGHS_DTD = (
    '<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
    '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">'
    '<!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">'
)
#: what an expansion or a local read would leave behind
TRACES = ("lollollollol", "root:", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")


def attacks(port: int) -> dict[str, tuple[str, str, str]]:
    """name -> (DOCTYPE or prolog, an entity reference to use, the word the parser's refusal names).

    A refusal word of "" means the parser reads the document (nothing is declared) and the row
    checks only that nothing was expanded, read or fetched."""
    evil = f"http://127.0.0.1:{port}"
    return {
        "billion laughs": (f"<!DOCTYPE r [{LAUGHS_DTD}]>", "&lol9;", "entity expansion"),
        "quadratic blowup": (f'<!DOCTYPE r [<!ENTITY a "{"a" * 50_000}">]>', "&a;" * 200, "entity expansion"),
        "xxe file": ('<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>', "&x;", "XXE"),
        "xxe http": (f'<!DOCTYPE r [<!ENTITY x SYSTEM "{evil}/xxe">]>', "&x;", "XXE"),
        "xxe public": (f'<!DOCTYPE r [<!ENTITY x PUBLIC "-//X//Y" "{evil}/public">]>', "&x;", "XXE"),
        "parameter entity": (f'<!DOCTYPE r [<!ENTITY % p SYSTEM "{evil}/param.dtd">%p;]>', "", "XXE"),
        "external dtd": (f'<!DOCTYPE r SYSTEM "{evil}/evil.dtd">', "&ext;", ""),
        "late doctype": ("<!-- " + "pad " * 18_000 + f"-->\n<!DOCTYPE r [{LAUGHS_DTD}]>", "&lol9;", "entity"),
        "xinclude": ("", '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd"/>', ""),
    }


def _rss(prolog: str, ref: str) -> bytes:
    return (
        f'<?xml version="1.0"?>\n{prolog}\n<rss version="2.0"><channel><title>t {ref}</title>'
        f"<item><title>x {ref}</title><link>https://{HOST}/1</link><description>d {ref}</description></item>"
        "</channel></rss>"
    ).encode()


def _yml(prolog: str, ref: str) -> bytes:
    return (
        f'<?xml version="1.0"?>\n{prolog}\n<yml_catalog><shop><offers><offer id="1"><url>https://{HOST}/1</url>'
        f"<name>n {ref}</name></offer></offers></shop></yml_catalog>"
    ).encode()


def _sitemap(prolog: str, ref: str) -> bytes:
    return (
        f'<?xml version="1.0"?>\n{prolog}\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>https://{HOST}/2024/05/01/{ref}story</loc></url></urlset>"
    ).encode()


def _feed_head(prolog: str, ref: str) -> bytes:
    return (
        f'<?xml version="1.0"?>\n{prolog}\n<feed xmlns="http://www.w3.org/2005/Atom"><title>{ref}</title>'
        f'<link rel="hub" href="https://hub.example/{ref}"/><link rel="self" href="https://{HOST}/feed"/></feed>'
    ).encode()


#: libxml2's limits, the same for every door that parses whole documents
LIMITS = {
    "deep nesting": (b"<rss><channel><item><description>" + b"<a>" * 100_000 + b"</a>" * 100_000, "depth"),
    "huge text": (
        b"<rss><channel><item><title>" + b"x" * (11 * 1024 * 1024) + b"</title></item></channel></rss>",
        "limit",
    ),
    "huge attribute": (b'<rss><channel><item a="' + b"x" * (11 * 1024 * 1024) + b'"/></channel></rss>', "limit"),
}


def _clean(text: str) -> bool:
    return not any(t in text for t in TRACES)


def test_xml_table_parser_doors(partner: PartnerServer, matrix: Callable[[str], Matrix]) -> None:
    report = matrix("xml")
    wrong = []
    for name, (prolog, ref, word) in attacks(partner.port).items():
        result = parse_feed(_rss(prolog, ref), url=f"https://{HOST}/feed")
        seen = repr(result)
        if word:
            ok = result.fatal and not result.items and word.lower() in " ".join(e.reason for e in result.errors).lower()
        else:
            ok = not result.fatal
        ok = ok and _clean(seen)
        report.case(f"feed {name}", ok, kind="feed")
        if not ok:
            wrong.append(f"feed {name}: {seen[:300]}")

        try:
            offers = list(iter_yml(io.BytesIO(_yml(prolog, ref))))
            ok = not word and _clean(repr(offers))
        except HostileXml as exc:
            ok = bool(word) and word.lower() in exc.reason.lower()
        report.case(f"catalog {name}", ok, kind="catalog")
        if not ok:
            wrong.append(f"catalog {name}")
    for name, (body, word) in LIMITS.items():
        result = parse_feed(body, url=f"https://{HOST}/feed")
        ok = result.fatal and word in " ".join(e.reason for e in result.errors).lower()
        report.case(f"feed {name}", ok, kind="feed")
        if not ok:
            wrong.append(f"feed {name}: {result.errors}")
    assert wrong == [], "\n".join(wrong)
    assert partner.hits("127.0.0.1") == []  # no external entity, DTD or XInclude was fetched


def test_xml_table_scheduler_readers(partner: PartnerServer, matrix: Callable[[str], Matrix]) -> None:
    report = matrix("xml")
    wrong = []
    for name, (prolog, ref, _) in attacks(partner.port).items():
        sitemap = _sitemap(prolog, ref)
        for variant, body in (("sitemap", sitemap), ("gzip sitemap", gzip.compress(sitemap))):
            urls = discover_article_urls(body, [], host=HOST) + sitemap_children(body)
            ok = _clean(" ".join(urls)) and all(len(u) < 200 for u in urls)
            report.case(f"{variant} {name}", ok, kind="sitemap")
            if not ok:
                wrong.append(f"{variant} {name}: {urls}")
        found = discover(read_head(_feed_head(prolog, ref)), {})
        ok = found is None or _clean(f"{found.hub} {found.topic}")
        report.case(f"websub {name}", ok, kind="websub")
        if not ok:
            wrong.append(f"websub {name}: {found}")
    bomb = gzip.compress(b"<urlset>" + b" " * (200 * 1024 * 1024) + b"</urlset>")  # 200 MB inflated
    report.case("gzip bomb sitemap", discover_article_urls(bomb, [], host=HOST) == [], kind="sitemap")
    assert wrong == [], "\n".join(wrong)
    assert partner.hits("127.0.0.1") == []


@pytest.mark.parametrize("name", ["billion laughs", "xxe file", "late doctype"])
async def test_xml_table_upload_door(
    name: str, tmp_path: Path, partner: PartnerServer, matrix: Callable[[str], Matrix]
) -> None:
    """Through the API and the parser cube: the task fails with the attack named, nothing is published."""
    report = matrix("xml")
    prolog, ref, word = attacks(partner.port)[name]
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant(HOST)
        resp = await api.upload(token, _rss(prolog, ref), host=HOST)
        assert resp.status == 202
        task_id = (await resp.json())["task_id"]
        await run_cube(await build_parser(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
        task = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        text = str(task)
        ok = task["status"] == "failed" and word.lower() in text.lower() and _clean(text)
        ok = ok and await api.messages("documents.parsed") == []
        report.case(f"upload {name}", ok, kind="upload")
        assert ok, task
