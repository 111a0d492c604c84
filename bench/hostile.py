"""Hostile inputs through the running pipeline while ``/healthz`` and an API call are polled (docs/architecture.md
section 6: hostile content is bounded, and CPU-heavy work on it never holds the loop that serves HTTP).

Every cube runs in this process, as ``turbocubes up`` runs them (``cubes.launcher.run_cubes``: the api and
the frontend on their ports, ``/healthz`` on the metrics port), on the embedded engines under a fresh
directory. A poller in a process of its own (so that a stalled loop here cannot stall it too) asks
``/healthz`` and ``GET /api/v1/hosts`` back to back, each every 20 ms, and records how long every
answer took.

First a baseline: the pipeline idle, polled for ``--baseline`` seconds. Then every input of the table
(``tests/partners/hostile.py``: the price forms ``1e2000000`` / ``1e400000``, megabytes of ``&nbsp;``,
100,000 empty offers, nested elements, huge text nodes, a gzip bomb, ...) goes through each of its doors
at once -- an upload (``POST /api/v1/uploads``), a registered feed (``POST /api/v1/feeds``, fetched now
from a partner site on 127.0.0.1), a feed check (``POST /api/v1/feeds/check``) -- each body with one
ordinary item beside the hostile ones. The run waits until every outcome is known, and checks it:

* every ordinary item is published (unless the body as a whole is refused, with the code that says why);
* every hostile item is refused with one of its case's codes, or published (with its warning, if the case
  names one); a count the case names is reached (100,000 offers without a URL: ``item.no_link`` 100,000).

Printed: the latencies of both polls in both phases (p50, p99, max, how many), the outcome of every
(input, door), and the verdict against the targets: ``/healthz`` p99 <= 100 ms and max <= 1 s during the
whole hostile phase, every outcome right. Exit status 1 when one is missed.

    python bench/hostile.py [--baseline 5] [--timeout 600] [--only NAME] [--doors upload,feed,check] [--scale 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.e2e_site import PARTNER_SUFFIX, PartnerResolver
from cubes import registry
from cubes.launcher import run_cubes
from shared.config import Settings
from shared.stores import open_stores
from tests.partners.hostile import CASES, LOOKED_AT, Built, Hostile, Seen, judge

__all__ = ["main"]

HOST = "hostile" + PARTNER_SUFFIX
#: the targets of the hostile phase
P99_S, MAX_S = 0.100, 1.0
#: the poller's pace: one request of each kind every this many seconds
POLL_S = 0.020
#: the longest a poll may take before it is counted as failed (and the time it took recorded)
POLL_TIMEOUT_S = 30.0
DOORS = ("upload", "feed", "check")


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cpus"


def free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


# --------------------------------------------------------------------------- the poller (its own process)


def poll_main(health: str, api: str, token: str, out: str) -> int:
    """Ask both URLs every ``POLL_S`` until killed; one line per answer: wall time, kind, seconds, status."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    lock = threading.Lock()
    with open(out, "a", buffering=1, encoding="utf-8") as f:

        def loop(kind: str, url: str, headers: dict[str, str]) -> None:
            while not stop.is_set():
                t0 = time.perf_counter()
                status = 0
                try:
                    with urllib.request.urlopen(
                        urllib.request.Request(url, headers=headers), timeout=POLL_TIMEOUT_S
                    ) as r:
                        r.read()
                        status = r.status
                except urllib.error.HTTPError as e:
                    status = e.code
                except OSError:
                    status = -1
                took = time.perf_counter() - t0
                with lock:
                    f.write(f"{time.time():.6f} {kind} {took:.6f} {status}\n")
                stop.wait(max(0.0, POLL_S - took))

        threads = [
            threading.Thread(target=loop, args=("healthz", health, {}), daemon=True),
            threading.Thread(target=loop, args=("api", api, {"Authorization": f"Bearer {token}"}), daemon=True),
        ]
        for t in threads:
            t.start()
        while not stop.is_set():
            stop.wait(0.2)
        for t in threads:
            t.join(timeout=1.0)  # a request still waiting is cut off with the process (daemon threads)
    return 0


@dataclass
class Sample:
    at: float
    kind: str
    took: float
    status: int


def read_samples(path: Path) -> list[Sample]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        at, kind, took, status = line.split()
        out.append(Sample(float(at), kind, float(took), int(status)))
    return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def describe(samples: list[Sample], kind: str, start: float, end: float) -> tuple[str, list[float], int]:
    took = [s.took for s in samples if s.kind == kind and start <= s.at <= end]
    bad = sum(1 for s in samples if s.kind == kind and start <= s.at <= end and s.status != 200)
    if not took:
        return "no samples", took, bad
    text = (
        f"p50 {pct(took, 0.5) * 1e3:7.1f} ms  p99 {pct(took, 0.99) * 1e3:7.1f} ms  max {max(took) * 1e3:8.1f} ms"
        f"  ({len(took)} answers{f', {bad} not 200' if bad else ''})"
    )
    return text, took, bad


# --------------------------------------------------------------------------- the pipeline and its doors


@dataclass
class Push:
    case: Hostile
    door: str
    built: Built
    #: the task of an upload or a check; the feed id of a registered feed
    ref: str = ""
    started: float = 0.0
    done_at: float = 0.0
    codes: dict[str, int] = field(default_factory=dict)
    previews: set[str] = field(default_factory=set)
    verdict: str = ""
    ok: bool = False


def settings_for(tmp: Path, ports: dict[str, int]) -> Settings:
    lane = {"rate": 50.0, "burst": 50, "concurrency": 8}
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp}/bus.db"},
        store={"url": f"sqlite:///{tmp}/store.db"},
        blobs={"url": f"file://{tmp}/blobs"},
        cdn={"url": f"file://{tmp}/cdn"},
        http={"allowlist": ["127.0.0.1/32"]},
        runtime={"metrics_port": ports["metrics"], "status_interval_s": 1.0},
        api={
            "port": ports["api"],
            "public_url": f"http://127.0.0.1:{ports['api']}",
            "tenant_rps": 1000.0,
            "tenant_burst": 1000,
            "tenant_bytes_per_s": 1e9,
        },
        frontend={"port": ports["frontend"], "public_url": f"http://127.0.0.1:{ports['frontend']}"},
        scheduler={"websub_port": 0},
        crawler={"host_overrides": {"*" + PARTNER_SUFFIX: lane}, "coalesce_window_s": 1.0},
        media={"hold_incomplete": False},
    )


async def tenant(settings: Settings, origin: str) -> str:
    """A tenant with a verified right on the partner's origin (a right covers its scheme, host and port)."""
    stores = await open_stores(settings.store.url)
    try:
        t = await stores.tenants.create_tenant("hostile bench")
        await stores.tenants.add_host(t.tenant_id, HOST, origin=origin)
        await stores.tenants.set_verified(t.tenant_id, HOST, True)
        return await stores.tenants.issue_token(t.tenant_id)
    finally:
        await stores.close()


class Driver:
    """Pushes the table through the doors and reads every outcome back (an HTTP client, as partners are)."""

    def __init__(self, api: str, frontend: str, partner: str, feeds_dir: Path, token: str) -> None:
        self.api, self.frontend, self.partner, self.feeds_dir = api, frontend, partner, feeds_dir
        self.auth = {"Authorization": f"Bearer {token}"}
        self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))

    async def close(self) -> None:
        await self.http.close()

    async def push(self, p: Push) -> None:
        p.started = time.perf_counter()
        if p.door == "upload":
            async with self.http.post(
                f"{self.api}/api/v1/uploads",
                params={"host": HOST, "format": p.built.fmt if p.built.fmt != "turbo" else "rss"},
                data=io.BytesIO(p.built.body),  # a stream: a body of megabytes given as bytes warns
                headers={**self.auth, "Content-Type": p.built.content_type},
            ) as r:
                body = await r.json()
                if r.status != 202:
                    raise RuntimeError(f"upload {p.case.name}: {r.status} {body}")
                p.ref = body["task_id"]
            return
        url = f"{self.partner}/{p.case.name.replace(' ', '_').replace('/', '_')}-{p.door}.xml"
        (self.feeds_dir / url.rsplit("/", 1)[1]).write_bytes(p.built.body)
        if p.door == "check":
            async with self.http.post(f"{self.api}/api/v1/feeds/check", json={"url": url}, headers=self.auth) as r:
                body = await r.json()
                if r.status != 202:
                    raise RuntimeError(f"check {p.case.name}: {r.status} {body}")
                p.ref = body["task_id"]
            return
        async with self.http.post(f"{self.api}/api/v1/feeds", json={"url": url}, headers=self.auth) as r:
            body = await r.json()
            if r.status not in (200, 201):
                raise RuntimeError(f"feed {p.case.name}: {r.status} {body}")
            p.ref = body["feed_id"]
        async with self.http.post(f"{self.api}/api/v1/feeds/{p.ref}/fetch", headers=self.auth) as r:
            await r.read()

    async def outcome(self, p: Push) -> bool:
        """Whether ``p``'s body has been handled (its task ended, its feed's fetch reported); fills the codes."""
        if p.door in ("upload", "check"):
            async with self.http.get(f"{self.api}/api/v1/uploads/{p.ref}", headers=self.auth) as r:
                task = await r.json()
            if task["status"] not in ("done", "failed"):
                return False
            p.codes = dict(task.get("problem_counts") or {})
            p.previews = {parse_qs(urlsplit(link).query)["url"][0] for link in task.get("preview_urls") or ()}
            return True
        async with self.http.get(f"{self.api}/api/v1/feeds/{p.ref}", headers=self.auth) as r:
            feed = await r.json()
        latest = feed.get("latest_fetch")
        if not latest or latest.get("result") in (None, "", "pending"):
            return False
        p.codes = dict(latest.get("problem_counts") or {})
        for c in latest.get("problems", []):
            p.codes.setdefault(c["code"], 1)
        return True

    async def published(self, p: Push, url: str) -> bool:
        if p.door == "check":
            return url in p.previews
        async with self.http.get(f"{self.frontend}/turbo", params={"url": url}) as r:
            await r.read()
            return r.status == 200

    async def judge(self, p: Push, deadline: float) -> None:
        """The verdict on ``p`` once handled (``tests.partners.hostile.judge``); ``deadline``
        (``time.perf_counter``): until when the ordinary item's page is waited for."""
        good = p.built.good
        # the page goes through media and the kvwriter after the parser: it is looked for, as a reader would
        while p.case.whole is None and not await self.published(p, good) and time.perf_counter() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.2)
        urls = [good, *p.built.hostile[:LOOKED_AT]]
        seen = Seen(Counter(p.codes), {u for u in urls if await self.published(p, u)})
        problems = judge(p.case, p.built, seen)
        p.ok = not problems
        codes = ", ".join(f"{c} {n}" for c, n in sorted(p.codes.items())) or "no problem"
        p.verdict = "ok: " + codes if p.ok else "FAILED: " + "; ".join(problems[:3])


async def run(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="tc-hostile-"))
    feeds_dir = tmp / "site"
    feeds_dir.mkdir()
    ports = dict(zip(("metrics", "api", "frontend", "partner"), free_ports(4), strict=True))
    settings = settings_for(tmp, ports)
    origin = f"http://{HOST}:{ports['partner']}"  # every door's items live there: the right covers that origin
    token = await tenant(settings, origin)
    site = subprocess.Popen(  # noqa: ASYNC220 - the partner: a plain file server in a process of its own
        [
            sys.executable,
            "-m",
            "http.server",
            str(ports["partner"]),
            "--bind",
            "127.0.0.1",
            "--directory",
            str(feeds_dir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    samples_file = tmp / "polls.txt"
    stop = asyncio.Event()
    pipeline = asyncio.create_task(
        run_cubes(settings, list(registry.CUBE_NAMES), stop_event=stop, resolver=PartnerResolver(), label="hostile")
    )
    api = f"http://127.0.0.1:{ports['api']}"
    health = f"http://127.0.0.1:{ports['metrics']}/healthz"
    poller: subprocess.Popen[bytes] | None = None
    driver = Driver(api, f"http://127.0.0.1:{ports['frontend']}", origin, feeds_dir, token)
    code = 1
    try:
        await _ready(driver, health, pipeline)
        poller = subprocess.Popen(  # noqa: ASYNC220
            [sys.executable, __file__, "--poll", health, f"{api}/api/v1/hosts", token, str(samples_file)]
        )
        while not samples_file.exists() or samples_file.stat().st_size == 0:  # noqa: ASYNC110 - the poller's first answer
            await asyncio.sleep(0.1)
        print(f"hostile bench: pipeline up (every cube in this process, embedded engines); {load()}", flush=True)
        # the bodies are built before either phase: building them (a 60 MB gzip bomb compressed, ...) holds
        # this loop, which also runs the pipeline, and would be counted against it
        doors = [d for d in args.doors.split(",") if d]
        cases = [c for c in CASES if not args.only or args.only.lower() in c.name.lower()]
        pushes = await asyncio.to_thread(  # in a thread too: zlib lets the GIL go, and the pipeline runs
            lambda: [
                Push(c, door, c.build(origin, f"{i}{door[0]}", args.scale))
                for i, c in enumerate(cases)
                for door in doors
                if door in c.doors
            ]
        )
        await asyncio.sleep(1.0)  # a poll that waited for the loop meanwhile is answered before the baseline
        t_base = time.time()
        await asyncio.sleep(args.baseline)
        t_hostile = time.time()
        print(f"  pushing {len(pushes)} bodies ({len(cases)} inputs through {', '.join(doors)}); {load()}", flush=True)
        for p in pushes:
            await driver.push(p)
        deadline = time.perf_counter() + args.timeout
        pending = list(pushes)
        while pending and time.perf_counter() < deadline:
            still = []
            for p in pending:
                if await driver.outcome(p):
                    p.done_at = time.perf_counter()
                else:
                    still.append(p)
            pending = still
            await asyncio.sleep(0.5)
        # every body handled (or out of time): the pages follow through media and the kvwriter
        await asyncio.gather(*(driver.judge(p, deadline) for p in pushes if p.done_at))
        for p in pushes:
            took = f"{p.done_at - p.started:6.1f} s" if p.done_at else "   --   "
            print(f"  {p.case.name:40} {p.door:6} {took}  {p.verdict or 'FAILED: no outcome within --timeout'}")
        t_end = time.time()
        await asyncio.sleep(1.0)  # the poller's last answers of the phase
        poller.send_signal(signal.SIGTERM)
        poller.wait(timeout=POLL_TIMEOUT_S + 5)
        code = report(read_samples(samples_file), pushes, t_base, t_hostile, t_end)
    finally:
        if poller is not None and poller.poll() is None:
            poller.kill()
        await driver.close()
        stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(pipeline, 60)
        site.terminate()
        site.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)
    return code


async def _ready(driver: Driver, health: str, pipeline: asyncio.Task[int]) -> None:
    for _ in range(600):
        if pipeline.done():
            raise RuntimeError(f"the pipeline ended before it was up: {pipeline.result()}")
        with contextlib.suppress(aiohttp.ClientError):
            async with (
                driver.http.get(health) as r,
                driver.http.get(f"{driver.api}/api/v1/hosts", headers=driver.auth) as a,
            ):
                if r.status == 200 and a.status == 200:
                    return
        await asyncio.sleep(0.1)
    raise RuntimeError("the pipeline did not come up in 60 s")


def report(samples: list[Sample], pushes: list[Push], t_base: float, t_hostile: float, t_end: float) -> int:
    print(f"  latencies ({load()}):", flush=True)
    verdicts = []
    for kind, what in (("healthz", "/healthz"), ("api", "GET /api/v1/hosts")):
        base, _, _ = describe(samples, kind, t_base, t_hostile)
        hostile, took, bad = describe(samples, kind, t_hostile, t_end)
        print(f"    {what:18} baseline (idle)  {base}", flush=True)
        print(f"    {'':18} hostile phase   {hostile}", flush=True)
        if kind == "healthz":
            met = bool(took) and pct(took, 0.99) <= P99_S and max(took) <= MAX_S and not bad
            verdicts.append(met)
            p99, worst = (pct(took, 0.99), max(took)) if took else (math.nan, math.nan)
            print(
                f"    /healthz target p99 <= {P99_S * 1e3:.0f} ms and max <= {MAX_S:.0f} s: "
                f"{'MET' if met else 'MISSED'} (p99 {p99 * 1e3:.1f} ms, max {worst * 1e3:.1f} ms)",
                flush=True,
            )
    right = sum(p.ok for p in pushes)
    print(f"    outcomes: {right} of {len(pushes)} right", flush=True)
    verdicts.append(right == len(pushes))
    print(f"RESULT hostile: {'PASS' if all(verdicts) else 'FAIL'}", flush=True)
    return 0 if all(verdicts) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--baseline", type=float, default=5.0, help="seconds of idle polling first (default 5)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for every outcome (default 600)")
    ap.add_argument("--only", default="", help="only the inputs whose name has this text")
    ap.add_argument("--doors", default=",".join(DOORS), help="upload, feed, check (default all)")
    ap.add_argument("--scale", type=float, default=1.0, help="the expensive inputs' size (default 1.0: the findings')")
    ap.add_argument("--poll", nargs=4, metavar=("HEALTHZ", "API", "TOKEN", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.poll:
        return poll_main(*args.poll)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
