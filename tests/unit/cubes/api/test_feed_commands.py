"""``turbocubes feeds add|list|remove|fetch``: the registration service, the store and the bus."""

from __future__ import annotations

import asyncio
import io
import socket
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from cubes.api.feed_commands import feeds_add, feeds_fetch, feeds_list, feeds_remove
from cubes.cli import main
from shared import contracts
from shared.bus import open_bus
from shared.config import Settings
from shared.messages import CrawlRequest, FeedFormat, FeedRegistration
from shared.runtime.cube import Output
from shared.stores import Stores, open_stores
from shared.webmaster.feed_options import FeedOptions, FullText
from shared.webmaster.feeds import FeedRegistry, feed_id_for

ALLOW_LOOPBACK = Settings().replace(http={"allowlist": ["127.0.0.1/32"]})


class Collector:
    def __init__(self) -> None:
        self.outputs: list[Output] = []

    async def __call__(self, outputs: Sequence[Output]) -> None:
        self.outputs.extend(outputs)


class FakeDns(AbstractResolver):
    """news.example -> a public address, intranet.example -> a private one, the rest: no such name."""

    ADDRESSES = {"news.example": "93.184.216.34", "intranet.example": "10.1.2.3"}

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if host not in self.ADDRESSES:
            raise OSError(socket.EAI_NONAME, f"{host}: name not known")
        return [ResolveResult(hostname=host, host=self.ADDRESSES[host], port=port, family=family, proto=0, flags=0)]

    async def close(self) -> None:
        return None


def registry(stores: Stores, pub: Collector, settings: Settings | None = None) -> FeedRegistry:
    return FeedRegistry.from_settings(settings or Settings(), stores.feeds, pub, resolver=FakeDns())


async def add_feed(settings: Settings, stores: Stores, pub: Collector, url: str, **kw: object) -> int:
    return await feeds_add(registry(stores, pub, settings), url, **kw)  # type: ignore[arg-type]


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


async def test_add_stores_and_announces(stores: Stores) -> None:
    pub, out = Collector(), io.StringIO()
    code = await add_feed(
        Settings(),
        stores,
        pub,
        "HTTPS://News.Example:443/a/../feed.xml#top",
        fmt="turbo",
        services=["news", "news", "sport"],
        out=out,
    )
    assert code == 0
    url = "https://news.example/feed.xml"
    fid = feed_id_for(None, url)
    feed = await stores.feeds.get(fid)
    assert feed is not None
    assert (feed.url, feed.host, feed.format, feed.services) == (url, "news.example", "turbo", ("news", "sport"))
    assert feed.status.next_fetch_at is None  # due at once
    [o] = pub.outputs
    assert o.topic == "feeds.registry"
    assert o.key == fid
    msg = o.message
    assert isinstance(msg, FeedRegistration)
    assert (msg.action, msg.feed_id, msg.url, msg.format) == ("upsert", fid, url, FeedFormat.turbo)
    assert f"added feed {fid}" in out.getvalue()

    assert FeedOptions.from_json(feed.options).full_text is FullText.auto
    again = io.StringIO()
    assert await add_feed(Settings(), stores, pub, url, fmt="turbo", services=["sport", "news"], out=again) == 0
    assert "unchanged" in again.getvalue()
    assert len(await stores.feeds.list()) == 1
    never = io.StringIO()
    kw = {"fmt": "turbo", "services": ["sport", "news"], "options": {"full_text": "never"}, "out": never}
    assert await add_feed(Settings(), stores, pub, url, **kw) == 0
    assert "updated" in never.getvalue()
    assert "full text never" in never.getvalue()
    stored = await stores.feeds.get(fid)
    assert stored is not None
    assert FeedOptions.from_json(stored.options).full_text is FullText.never


@pytest.mark.parametrize(
    ("url", "settings", "reason"),
    [
        ("ftp://news.example/feed.xml", Settings(), "refused: url:"),
        ("not a url", Settings(), "refused: url:"),
        ("http://127.0.0.1:8080/feed.xml", Settings(), "loopback"),
        ("http://10.0.0.1/feed.xml", Settings(), "private"),
        ("http://169.254.169.254/latest/meta-data", Settings(), "link-local"),
        ("http://[::ffff:127.0.0.1]/feed.xml", Settings(), "refused"),
        ("https://intranet.example/feed.xml", Settings(), "private"),  # a name that resolves inside
        ("https://nowhere.example/feed.xml", Settings(), "cannot be resolved"),
    ],
)
async def test_add_refuses(stores: Stores, url: str, settings: Settings, reason: str) -> None:
    pub, err = Collector(), io.StringIO()
    code = await add_feed(settings, stores, pub, url, err=err)
    assert code == 1
    assert reason in err.getvalue()
    assert pub.outputs == []
    assert await stores.feeds.list() == []


async def test_add_refuses_bad_format_and_services(stores: Stores) -> None:
    pub, err = Collector(), io.StringIO()
    url = "https://news.example/feed.xml"
    assert await add_feed(Settings(), stores, pub, url, fmt="atom", err=err) == 1
    assert "format: required, one of rss, turbo, yml, auto" in err.getvalue()
    assert await add_feed(Settings(), stores, pub, url, services=["ok", "Bad Name"], err=err) == 1
    assert "services[1]: a lower-case name" in err.getvalue()
    err = io.StringIO()
    assert await add_feed(Settings(), stores, pub, "ftp://x", fmt="atom", services=["B"], err=err) == 1
    assert len(err.getvalue().splitlines()) == 3  # every problem at once, one line each
    assert pub.outputs == []


async def test_allowlist_lets_loopback_in(stores: Stores) -> None:
    pub = Collector()
    assert await add_feed(ALLOW_LOOPBACK, stores, pub, "http://127.0.0.1:8080/feed.xml", out=io.StringIO()) == 0
    assert len(pub.outputs) == 1


async def test_list_shows_status(stores: Stores) -> None:
    pub = Collector()
    url = "https://news.example/feed.xml"
    await add_feed(Settings(), stores, pub, url, fmt="rss", out=io.StringIO())
    fid = feed_id_for(None, url)
    out = io.StringIO()
    await feeds_list(stores.feeds, out=out)
    assert fid in out.getvalue()
    assert "due now" in out.getvalue()
    await stores.feeds.update_schedule(
        fid,
        last_fetch_at=datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        last_http_status=503,
        fetch_result="http_5xx",
        consecutive_failures=3,
        fetch_error="http_5xx: HTTP 503",
        next_fetch_at=datetime(2024, 5, 1, 12, 16, tzinfo=UTC),
    )
    out = io.StringIO()
    await feeds_list(stores.feeds, out=out)
    text = out.getvalue()
    assert "last fetch: 2024-05-01 12:00:00" in text
    assert "result: Server error (HTTP 503), 3 failures in a row" in text  # words, not http_5xx
    assert "next fetch: 2024-05-01 12:16:00" in text
    assert "error: http_5xx: HTTP 503" in text
    # a problem at a line with no column said "(line 4, column None)"
    await stores.feeds.update_schedule(fid, fetch_result="ok", fetch_error=None, consecutive_failures=0)
    await stores.feeds.update_parse_status(fid, parse_result="parse_error", parse_error="bad XML", error_line=4)
    out = io.StringIO()
    await feeds_list(stores.feeds, out=out)
    assert "error: bad XML (line 4)\n" in out.getvalue()
    assert "None" not in out.getvalue()


async def test_remove(stores: Stores) -> None:
    pub = Collector()
    url = "https://news.example/feed.xml"
    await add_feed(Settings(), stores, pub, url, out=io.StringIO())
    fid = feed_id_for(None, url)
    assert await feeds_remove(registry(stores, pub), fid, out=io.StringIO()) == 0
    feed = await stores.feeds.get(fid)
    assert feed is not None
    assert feed.deleted
    last = pub.outputs[-1].message
    assert isinstance(last, FeedRegistration)
    assert (last.action, last.feed_id) == ("delete", fid)
    err = io.StringIO()
    assert await feeds_remove(registry(stores, pub), fid, err=err) == 1
    assert await feeds_remove(registry(stores, pub), "nope", err=err) == 1
    assert "no such feed" in err.getvalue()


async def test_fetch_now_orders_one_urgent_unconditional_fetch(stores: Stores) -> None:
    pub = Collector()
    url = "https://news.example/feed.xml"
    await add_feed(Settings(), stores, pub, url, out=io.StringIO())
    fid = feed_id_for(None, url)
    await stores.feeds.update_schedule(fid, etag='"v1"')
    out = io.StringIO()
    assert await feeds_fetch(registry(stores, pub), fid, out=out) == 0
    assert "ordered" in out.getvalue()
    req = pub.outputs[-1].message
    assert pub.outputs[-1].topic == "crawl.requests"
    assert isinstance(req, CrawlRequest)
    fetch_id = out.getvalue().split()[1]
    assert (req.url, req.host, req.feed_id, req.requesters) == (
        url,
        "news.example",
        fid,
        [f"feed:{fid}", f"fetch:{fetch_id}"],
    )
    assert f"/api/v1/feeds/{fid}/fetches/{fetch_id}" in out.getvalue()  # the answer links to the outcome
    assert (req.priority, req.etag) == (0, None)  # ahead of routine polls; a full fetch, not a 304
    err = io.StringIO()
    assert await feeds_fetch(registry(stores, pub), "nope", err=err) == 1
    await feeds_remove(registry(stores, pub), fid, out=io.StringIO())
    assert await feeds_fetch(registry(stores, pub), fid, err=err) == 1
    assert err.getvalue().count("no such feed") == 2


def _registrations(bus_url: str) -> list[FeedRegistration]:
    async def read() -> list[FeedRegistration]:
        bus = open_bus(bus_url)
        await bus.start()
        try:
            out = []
            for partition, end in (await bus.end_offsets("feeds.registry")).items():
                for rec in await bus.read("feeds.registry", partition, 0, end):
                    msg = contracts.decode("feeds.registry", rec.value)
                    assert isinstance(msg, FeedRegistration)
                    out.append(msg)
            return out
        finally:
            await bus.close()

    return asyncio.run(read())


def test_cli_end_to_end_on_the_embedded_engines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "turbocubes.toml"
    bus_url = f"sqlite:///{tmp_path}/bus.db"
    cfg.write_text(
        f'[bus]\nurl = "{bus_url}"\n[store]\nurl = "sqlite:///{tmp_path}/store.db"\n'
        '[http]\nallowlist = ["127.0.0.1/32"]\n'
    )
    url = "http://127.0.0.1:8080/feed.xml"
    fid = feed_id_for(None, url)
    assert main(["--config", str(cfg), "feeds", "add", url, "--format", "rss", "--service", "news"]) == 0
    assert main(["--config", str(cfg), "feeds", "list"]) == 0
    assert fid in capsys.readouterr().out
    assert main(["--config", str(cfg), "feeds", "fetch", fid]) == 0
    assert main(["--config", str(cfg), "feeds", "remove", fid]) == 0
    assert main(["--config", str(cfg), "feeds", "add", "http://10.0.0.1/feed.xml"]) == 1
    assert "private" in capsys.readouterr().err
    regs = _registrations(bus_url)
    assert [(r.action, r.feed_id, r.url) for r in regs] == [("upsert", fid, url), ("delete", fid, url)]
    assert regs[0].services == ["news"]


async def test_fetch_now_waits_for_its_report_and_show_prints_every_problem(stores: Stores) -> None:
    from datetime import UTC, datetime

    from cubes.api.feed_commands import feeds_show
    from shared.problems import problem
    from shared.stores import FetchReport

    pub = Collector()
    url = "https://news.example/feed.xml"
    await add_feed(Settings(), stores, pub, url, out=io.StringIO())
    fid = feed_id_for(None, url)

    class Reporting(Collector):
        """Plays the crawler and the parser: the ordered fetch is reported at once."""

        async def __call__(self, outputs):  # type: ignore[no-untyped-def]
            await super().__call__(outputs)
            fetch_id = outputs[0].message.requesters[-1].removeprefix("fetch:")
            bad = problem("item.no_title", "item has no title", feed=fid, item=0, line=3)
            await stores.problems.add_report(
                FetchReport(fid, datetime(2026, 1, 1, tzinfo=UTC), "partial", 200, 1, refused=1, problems=(bad,),
                            counts={"item.no_title": 1}, fetch_ids=(fetch_id,))
            )  # fmt: skip

    out = io.StringIO()
    assert await feeds_fetch(registry(stores, Reporting()), fid, problems=stores.problems, wait_s=5, out=out) == 0
    assert "error: [item.no_title] item 1, line 3: item has no title" in out.getvalue()
    assert "fix: Give every item a non-empty <title>" in out.getvalue()
    shown = io.StringIO()
    assert await feeds_show(stores, fid, out=shown) == 0
    assert "[item.no_title]" in shown.getvalue()
    assert await feeds_show(stores, "nope", err=io.StringIO()) == 1
    late = io.StringIO()
    assert await feeds_fetch(registry(stores, pub), fid, problems=stores.problems, wait_s=0.1, err=late) == 1
    assert "not fetched within 0.1 s" in late.getvalue()


def test_cli_sets_options_with_the_password_off_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from shared.secretbox import new_key

    cfg = tmp_path / "turbocubes.toml"
    cfg.write_text(
        f'[bus]\nurl = "sqlite:///{tmp_path}/bus.db"\n[store]\nurl = "sqlite:///{tmp_path}/store.db"\n'
        f'[http]\nallowlist = ["127.0.0.1/32"]\n[secrets]\nkey = "{new_key()}"\n'
    )
    url = "http://127.0.0.1:8080/staging.xml"
    monkeypatch.setenv("TURBOCUBES_FEED_PASSWORD", "hunter2-secret")
    args = ["--config", str(cfg), "feeds", "add", url, "--basic-auth", "bob", "--timeout", "30"]
    assert main([*args, "--drop-category", "Ads", "--keep-pattern", "news"]) == 0
    assert main(["--config", str(cfg), "feeds", "list"]) == 0
    listed = capsys.readouterr().out
    assert "options: basic auth as bob; timeout 30 s; drop categories ads; keep pattern 'news'" in listed
    assert "hunter2-secret" not in listed
    # a bad value is refused naming the field, the feed keeps what it had
    assert main(["--config", str(cfg), "feeds", "add", url, "--timeout", "9999"]) == 1
    assert "options.timeout_s" in capsys.readouterr().err


def test_cli_sets_the_feeds_full_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "turbocubes.toml"
    cfg.write_text(
        f'[bus]\nurl = "sqlite:///{tmp_path}/bus.db"\n[store]\nurl = "sqlite:///{tmp_path}/store.db"\n'
        '[http]\nallowlist = ["127.0.0.1/32"]\n'
    )
    url = "http://127.0.0.1:8080/summaries.xml"
    assert main(["--config", str(cfg), "feeds", "add", url, "--full-text", "always"]) == 0
    assert "full text always" in capsys.readouterr().out
    assert main(["--config", str(cfg), "feeds", "list"]) == 0
    assert "options: full text always" in capsys.readouterr().out
    # another option given later keeps it (merged over the feed's current options)
    assert main(["--config", str(cfg), "feeds", "add", url, "--timeout", "20"]) == 0
    assert "full text always" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--config", str(cfg), "feeds", "add", url, "--full-text", "sometimes"])
    assert "invalid choice: 'sometimes'" in capsys.readouterr().err
