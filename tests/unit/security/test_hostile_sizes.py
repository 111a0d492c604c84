"""The hostile sizes table: every hostile input (``tests/partners/hostile.py``) x every door (docs/architecture.md
section 6: every partner number and size is bounded where it is parsed, CPU-heavy work on partner content never
holds the loop).

Doors, each the real code path on the embedded engines:

* ``upload`` -- ``POST /api/v1/uploads`` in the case's format (YML, RSS / Turbo, JSON) -> the parser cube;
* ``feed``   -- a feed registered through ``POST /api/v1/feeds`` (its own text its pages: ``full_text`` never)
  and fetched now, from the partner server, by the crawler cube -> the parser cube (a body past 256 KB as a
  blob, a YML catalog streamed);
* ``check``  -- ``POST /api/v1/feeds/check``: fetched by the crawler, parsed as previews;
* ``render`` -- ``turbocubes render FILE`` (``cubes.render.render_command``).

and then, for the doors that publish, the media and kvwriter cubes, so the page store shows what was
published. Each row checks the case's promise: the ordinary item published (unless the body as a whole is
refused, with the code that says why), each hostile item refused with one of its codes or published (with
its warning), the counts it names reached. The inputs of many items run at a tenth of their count (and
``parser.max_items`` with them), those whose cost is nh3's at a quarter of their size with a one-second
``parser.item_deadline_s``: the nested elements still cost nh3 seconds, so they meet the deadline.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from cubes.crawler.cube import build as build_crawler
from cubes.kvwriter.cube import build as build_kvwriter
from cubes.media.cube import build as build_media
from cubes.parser.cube import build as build_parser
from cubes.render import render_command
from shared.runtime import run_cube
from tests.partners.hostile import CASES, LOOKED_AT, Built, Hostile, Seen, judge, many_items_limit
from tests.partners.server import PartnerServer
from tests.unit.cubes.api.apikit import ApiHarness, api_settings
from tests.unit.security.conftest import Matrix

HOST = "sizes.partner.test"
DOORS = ("upload", "feed", "check", "render")
SCALE = 0.1
DEADLINE_S = 1.0


def _task_seen(task: dict[str, Any], published: set[str]) -> Seen:
    seen = Seen(codes=Counter(task.get("problem_counts") or {}), published=published)
    for item in task["items"]:
        codes = {p["code"] for p in item.get("problems") or ()}
        if not codes and item.get("error") and re.fullmatch(r"[a-z]+\.[a-z_]+", item["error"]):
            codes = {item["error"]}  # past the first hundred, an item keeps its problem's code
        seen.items[item["url"]] = codes
    # a check's pages are previews: every one is linked (the items list the first results only)
    seen.published |= {parse_qs(urlsplit(link).query)["url"][0] for link in task.get("preview_urls") or ()}
    return seen


async def _pipeline(api: ApiHarness, *, crawl: bool) -> None:
    """Run the cubes until each has nothing left: crawler (for fetched feeds), parser, media, kvwriter."""
    if crawl:
        await run_cube(await build_crawler(api.settings, api.deps), api.deps, idle_timeout=3.0)
    await run_cube(await build_parser(api.settings, api.deps), api.deps, idle_timeout=3.0)
    await run_cube(await build_media(api.settings, api.deps), api.deps, idle_timeout=2.0)
    await run_cube(await build_kvwriter(api.settings, api.deps), api.deps, idle_timeout=2.0)


async def _published(api: ApiHarness, urls: list[str]) -> set[str]:
    found = set()
    for url in urls:
        page = await api.stores.pages.get(url)
        if page is not None and not page.deleted:
            found.add(url)
    return found


def _urls(built: Built) -> list[str]:
    return [built.good, *built.hostile[:LOOKED_AT]]


def _path(case: Hostile) -> str:
    return "/" + re.sub(r"[^a-z0-9]+", "-", case.name.lower()).strip("-") + ".xml"


async def _uploads(tmp: Path, partner: PartnerServer) -> dict[str, tuple[Built, Seen]]:
    out = {}
    async with ApiHarness(tmp, settings=_settings(tmp)) as api:
        _, token = await api.tenant(HOST)
        tasks = {}
        for i, case in enumerate(CASES):
            built = case.build(f"https://{HOST}", f"u{i}", SCALE)
            fmt = "rss" if built.fmt == "turbo" else built.fmt
            resp = await api.client.post(  # a stream: aiohttp warns of a body of megabytes given as bytes
                "/api/v1/uploads",
                params={"host": HOST, "format": fmt},
                data=io.BytesIO(built.body),
                headers={**api.auth(token), "Content-Type": built.content_type},
            )
            assert resp.status == 202, (case.name, await resp.text())
            tasks[case.name] = (built, (await resp.json())["task_id"])
        await _pipeline(api, crawl=False)
        for name, (built, task_id) in tasks.items():
            task = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
            out[name] = (built, _task_seen(task, await _published(api, _urls(built))))
    return out


async def _feeds(tmp: Path, partner: PartnerServer, *, check: bool) -> dict[str, tuple[Built, Seen]]:
    out = {}
    door = "check" if check else "feed"
    async with ApiHarness(tmp, settings=_settings(tmp)) as api:
        _, token = await api.tenant(HOST, origin=f"http://{HOST}:{partner.port}")  # a right covers its port
        refs = {}
        for i, case in enumerate(CASES):
            if door not in case.doors:
                continue
            built = case.build(f"http://{HOST}:{partner.port}", f"{door[0]}{i}", SCALE)
            path = _path(case).replace(".xml", f"-{door}.xml")
            partner.set(HOST, path, built.body, headers={"Content-Type": built.content_type})
            url = f"http://{HOST}:{partner.port}{path}"
            if check:
                resp = await api.client.post("/api/v1/feeds/check", json={"url": url}, headers=api.auth(token))
                assert resp.status == 202, (case.name, await resp.text())
                refs[case.name] = (built, (await resp.json())["task_id"])
                continue
            # the feed's own text is its pages (full_text never): a summary item's page would be fetched for
            # its article (cubes/parser/fulltext.py), through the crawler and the autoparser after the parser,
            # which this door does not run; bench/hostile.py runs every cube, that path included
            body = {"url": url, "options": {"full_text": "never"}}
            resp = await api.client.post("/api/v1/feeds", json=body, headers=api.auth(token))
            assert resp.status in (200, 201), (case.name, await resp.text())
            feed_id = (await resp.json())["feed_id"]
            fetch = await api.client.post(f"/api/v1/feeds/{feed_id}/fetch", headers=api.auth(token))
            assert fetch.status in (200, 202), (case.name, await fetch.text())
            refs[case.name] = (built, feed_id)
        await _pipeline(api, crawl=True)
        for name, (built, ref) in refs.items():
            published = await _published(api, _urls(built))
            if check:
                task = await (await api.client.get(f"/api/v1/uploads/{ref}", headers=api.auth(token))).json()
                out[name] = (built, _task_seen(task, set()))
                continue
            feed = await (await api.client.get(f"/api/v1/feeds/{ref}", headers=api.auth(token))).json()
            latest = feed.get("latest_fetch") or {}
            seen = Seen(codes=Counter(latest.get("problem_counts") or {}), published=published)
            for p in latest.get("problems") or ():
                if p["where"].get("link"):
                    seen.items.setdefault(p["where"]["link"], set()).add(p["code"])
            out[name] = (built, seen)
    return out


async def _renders(tmp: Path) -> dict[str, tuple[Built, Seen]]:
    out = {}
    settings = _settings(tmp)
    for i, case in enumerate(CASES):
        built = case.build(f"https://{HOST}", f"r{i}", SCALE)
        source = tmp / _path(case).lstrip("/")
        source.write_bytes(built.body)
        err, pages = io.StringIO(), tmp / f"pages{_path(case).replace('.xml', '')}"
        await render_command(
            settings, str(source), base_url=f"https://{HOST}/feed.xml", out_dir=pages, out=io.StringIO(), err=err
        )
        index = (pages / "index.html").read_text(encoding="utf-8") if (pages / "index.html").exists() else ""
        seen = Seen(codes=Counter(re.findall(r"\[([a-z]+\.[a-z_]+)\]", err.getvalue())))
        seen.published = {u for u in _urls(built) if f'href="{u}"' in index or f">{u}<" in index}
        out[case.name] = (built, seen)
    return out


def _settings(tmp: Path) -> Any:
    return api_settings(tmp, tenant_bytes_per_s=1e9, tenant_rps=1e6, tenant_burst=10_000).replace(
        parser={"item_deadline_s": DEADLINE_S, "max_items": many_items_limit(SCALE)},
        media={"hold_incomplete": False},
        crawler={"host_overrides": {HOST: {"rate": 100.0, "burst": 100, "concurrency": 8}}},
    )


def _record(report: Matrix, door: str, results: dict[str, tuple[Built, Seen]], wrong: list[str]) -> None:
    for case in CASES:
        if door not in case.doors and door != "render":
            continue
        built, seen = results[case.name]
        problems = judge(case, built, seen)
        report.case(f"{door} {case.name}", not problems, kind=door)
        if problems:
            wrong.append(f"{door} {case.name}: {problems}")


@pytest.mark.timeout(600)  # a door runs the whole table through the cubes: a minute or two on a loaded machine
@pytest.mark.parametrize("door", DOORS)
async def test_hostile_sizes_through_every_door(
    door: str, tmp_path: Path, partner: PartnerServer, matrix: Callable[[str], Matrix]
) -> None:
    report = matrix("hostile sizes")
    before = report.cases
    wrong: list[str] = []
    if door == "upload":
        results = await _uploads(tmp_path, partner)
    elif door == "render":
        results = await _renders(tmp_path)
    else:
        results = await _feeds(tmp_path, partner, check=door == "check")
    _record(report, door, results, wrong)
    assert wrong == [], "\n".join(wrong)
    assert report.cases - before == sum(door in c.doors or door == "render" for c in CASES)


def test_the_judge_catches_what_it_must() -> None:
    """The table proves something only if its judge fails the outcomes it must."""
    price = next(c for c in CASES if c.name == "price 1e2000000")
    built = price.build(f"https://{HOST}", "j")
    (hostile,) = built.hostile
    assert judge(price, built, Seen(Counter({"item.bad_price": 1}), {built.good})) == []
    assert judge(price, built, Seen(Counter(), {built.good, hostile}))  # published, not refused
    assert judge(price, built, Seen(Counter({"item.bad_price": 1}), set()))  # the ordinary item lost
    assert judge(price, built, Seen(Counter({"item.no_title": 1}), {built.good}))  # refused, but not said why
    empty = next(c for c in CASES if c.name == "100,000 empty offers")
    offers = empty.build(f"https://{HOST}", "j", 0.01)
    assert judge(empty, offers, Seen(Counter({"item.no_link": 10}), {offers.good}))  # not every one counted
    rating = next(c for c in CASES if c.name == "rating 1e999")
    rated = rating.build(f"https://{HOST}", "j")
    assert judge(rating, rated, Seen(Counter(), {rated.good, *rated.hostile}))  # published without its warning
