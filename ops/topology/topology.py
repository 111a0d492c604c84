"""The cluster topology without Docker: every cube as its own OS process (docs/architecture.md sections 8 and 9).

    ops/topology/start [--no-engines] [--parsers N] [--crawlers N] [--only CUBE ...]
    ops/topology/stop

``start`` runs the engines through ``ops/kafka/start``, ``ops/postgres/start`` and
``ops/s3/start`` (idempotent; skipped with ``--no-engines`` or when the engine's
``TURBOCUBES_<SECTION>_URL`` is already set), creates the topics
(``turbocubes topics create``), then starts each cube as ``turbocubes cube NAME``
in its own process — ``parser`` and ``crawler`` twice by default, the same as
``docker-compose.yml`` — and waits until every process's ``/healthz`` answers 200.
It is idempotent: an instance whose pid file names a live turbocubes process is
left alone. If an instance dies or never gets healthy, everything this call
started is stopped again and the exit status is 1, with the log's last lines.

``stop`` sends SIGTERM to every instance (a cube finishes its in-flight work and
commits; ``runtime.shutdown_timeout_s`` is 10 s), waits, and escalates to SIGKILL.

Everything lives under ``${TURBOCUBES_VAR:-/tmp/turbocubes-ops}/topology``:
``<instance>.pid``, ``<instance>.log``, and ``topology.json`` (per instance: cube,
pid, metrics URL, log path), which tests and scripts read.

Environment (besides every ``TURBOCUBES_<SECTION>_<KEY>``, passed through to the cubes):

* ``TURBOCUBES_TOPOLOGY_METRICS_BASE`` (default 9301): instance *i* serves
  ``/healthz`` + ``/metrics`` on base + *i*; ``0`` lets each process pick a free
  port (read back from its log) — tests use that, since they run side by side.
* ``TURBOCUBES_TOPOLOGY_WAIT_S`` (default 90): how long ``start`` waits for health.
* ``TURBOCUBES_TOPOLOGY_STOP_S`` (default 20): SIGTERM -> SIGKILL grace in ``stop``.
* ``TURBOCUBES_VENV`` (default ``<repo>/.venv``): where ``bin/turbocubes`` is.

Standard library only, so any Python >= 3.11 runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from cubes.registry import CUBE_NAMES

__all__ = ["Instance", "main", "plan", "start", "stop"]

REPO = Path(__file__).resolve().parents[2]
#: the pipeline's cubes, in the order they start (the registry owns the list); parser and crawler are
#: the two that scale out (docs/architecture.md section 3)
CUBES = CUBE_NAMES
SCALED = ("crawler", "parser")
#: one poll of every /healthz per this many seconds; a cube process needs a few seconds to import
POLL_S = 0.25
#: reads of an empty /proc/PID/cmdline (10 ms apart) before taking it as "no cmdline" (a zombie, a kernel thread)
_CMDLINE_TRIES = 50
_METRICS_LINE = re.compile(r"metrics at (http://[^\s/]+:\d+)/metrics")


def say(msg: str) -> None:
    print(f"[ops/topology] {msg}", flush=True)


@dataclass
class Instance:
    """One cube process."""

    name: str  # e.g. parser-2
    cube: str
    metrics_port: int  # 0 = the process picks one; the real one lands in `metrics_url`
    pid: int = 0
    metrics_url: str = ""
    log: str = ""


def var_dir() -> Path:
    return Path(os.environ.get("TURBOCUBES_VAR") or "/tmp/turbocubes-ops") / "topology"  # noqa: S108


def turbocubes_bin() -> str:
    venv = Path(os.environ.get("TURBOCUBES_VENV") or REPO / ".venv")
    exe = venv / "bin" / "turbocubes"
    if not exe.exists():
        sys.exit(f"[ops/topology] {exe} not found: run scripts/bootstrap (or set TURBOCUBES_VENV)")
    return str(exe)


def plan(cubes: list[str], parsers: int, crawlers: int, metrics_base: int) -> list[Instance]:
    """The instances to run, in pipeline order, with their metrics ports.

    An instance's port is its place in the *whole* topology, whatever ``cubes`` holds, so
    ``--only parser`` beside a running topology gets the parsers' own ports, not the api's.
    """
    out: list[Instance] = []
    place = 0
    for cube in [*CUBES, *(c for c in cubes if c not in CUBES)]:
        copies = {"parser": parsers, "crawler": crawlers}.get(cube, 1)
        for i in range(1, copies + 1):
            name = f"{cube}-{i}" if cube in SCALED else cube
            port = metrics_base + place if metrics_base else 0
            place += 1
            if cube in cubes:
                out.append(Instance(name=name, cube=cube, metrics_port=port))
    return out


# --------------------------------------------------------------------------- engines


def _run_engine(name: str, var: str) -> str | None:
    """Run ops/<name>/start (idempotent) and return the URL it prints as ``<var>=URL``."""
    script = REPO / "ops" / name / "start"
    if not script.exists():
        sys.exit(f"[ops/topology] {script} is missing")
    say(f"engine {name}: {script.relative_to(REPO)}")
    env = {**os.environ, "TURBOCUBES_PYTHON": str(Path(turbocubes_bin()).parent / "python")}
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, check=False)  # noqa: S603
    for line in done.stdout.splitlines():
        if line.startswith("[") and "]" in line:
            print(f"  {line}", flush=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        sys.exit(f"[ops/topology] {script.relative_to(REPO)} failed with exit status {done.returncode}")
    urls = [line.split("=", 1)[1] for line in done.stdout.splitlines() if line.startswith(var + "=")]
    return urls[-1] if urls else None


def engine_env(use_engines: bool) -> dict[str, str]:
    """``TURBOCUBES_{BUS,STORE,CDN,BLOBS}_URL`` for the cubes: from the environment, else from ops/*/start."""
    env: dict[str, str] = {}
    given = os.environ
    if use_engines and "TURBOCUBES_BUS_URL" not in given:
        env["TURBOCUBES_BUS_URL"] = _run_engine("kafka", "TURBOCUBES_TEST_KAFKA") or ""
    if use_engines and "TURBOCUBES_STORE_URL" not in given:
        env["TURBOCUBES_STORE_URL"] = _run_engine("postgres", "TURBOCUBES_TEST_POSTGRES") or ""
    if use_engines and "TURBOCUBES_CDN_URL" not in given:
        s3 = _run_engine("s3", "TURBOCUBES_TEST_S3") or ""
        endpoint = s3.split("endpoint=", 1)[1].split("&", 1)[0] if "endpoint=" in s3 else ""
        # one bucket for the CDN (served to browsers), one for large message bodies, as in docker-compose.yml
        env["TURBOCUBES_CDN_URL"] = f"s3://turbocubes-cdn?endpoint={endpoint}"
        env.setdefault("TURBOCUBES_CDN_PUBLIC_BASE_URL", f"{endpoint}/turbocubes-cdn")
        if "TURBOCUBES_BLOBS_URL" not in given:
            env["TURBOCUBES_BLOBS_URL"] = f"s3://turbocubes-blobs?endpoint={endpoint}"
    if "TURBOCUBES_BLOBS_URL" not in given and "TURBOCUBES_BLOBS_URL" not in env:
        # crawler and parser processes exchange big bodies through it: it must be shared, never a local dir
        cdn = env.get("TURBOCUBES_CDN_URL") or given.get("TURBOCUBES_CDN_URL", "")
        if cdn.startswith("s3://"):
            env["TURBOCUBES_BLOBS_URL"] = cdn
    for key in ("TURBOCUBES_BUS_URL", "TURBOCUBES_STORE_URL", "TURBOCUBES_CDN_URL"):
        if not (env.get(key) or given.get(key)):
            sys.exit(f"[ops/topology] {key} is not set and --no-engines was given: nothing to connect to")
    return env


# --------------------------------------------------------------------------- processes


def _alive(pid: int) -> bool:
    """True if ``pid`` runs and is a turbocubes process (a pid file may outlive its process and be reused)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    if state == "Z":  # exited, not yet reaped
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # our own child: reap it
        return False
    cmdline = b""
    # right after exec the kernel briefly shows an empty cmdline: look again before deciding
    for _ in range(_CMDLINE_TRIES):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
        if cmdline:
            break
        time.sleep(0.01)
    return b"turbocubes" in cmdline


def _spawn(argv: list[str], env: dict[str, str], log: Path) -> int:
    """Start a detached process (its own session, output appended to ``log``) and return its pid.

    posix_spawn rather than subprocess.Popen: the processes outlive this script by design, and a
    Popen object dropped while its process runs is a ResourceWarning; ``_alive`` reaps our children.
    """
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(log), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    return os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True)


def _pid_of(pidfile: Path) -> int:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return 0


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _healthy(url: str, cube: str) -> bool:
    """``/healthz`` answers 200 and names ``cube`` (not some other process that holds the port)."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=2) as resp:  # noqa: S310 (our own loopback URL)
            body = json.loads(resp.read())
            return bool(resp.status == 200 and cube in body.get("cubes", {}))
    except (urllib.error.URLError, OSError, ValueError, AttributeError):
        return False


def _metrics_url(inst: Instance, host: str) -> str:
    if inst.metrics_port:
        return f"http://{host}:{inst.metrics_port}"
    found = _METRICS_LINE.findall(Path(inst.log).read_text(errors="replace")) if Path(inst.log).exists() else []
    return found[-1] if found else ""


def _create_topics(exe: str, env: dict[str, str], log: Path) -> None:
    say("creating topics: turbocubes topics create")
    with log.open("ab") as out:
        done = subprocess.run(  # noqa: S603 - our own console script, no shell
            [exe, "topics", "create"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=120,
            check=False,
        )
    summary = [line for line in _tail(log, 200).splitlines() if "topic(s) created" in line]
    if done.returncode != 0:
        sys.exit(f"[ops/topology] turbocubes topics create failed ({done.returncode}):\n{_tail(log)}")
    say(summary[-1] if summary else "topics ready")


def start(instances: list[Instance], extra_env: dict[str, str], wait_s: float, *, restart: bool = False) -> int:
    """Start ``instances`` (those not running) and wait for their health. ``restart``: beside a
    running topology (``--only``), whose topics need not be created again when its stamp matches."""
    exe = turbocubes_bin()
    d = var_dir()
    d.mkdir(parents=True, exist_ok=True)
    base_env = {**os.environ, **extra_env}
    host = base_env.get("TURBOCUBES_RUNTIME_METRICS_HOST", "127.0.0.1")
    if host in ("0.0.0.0", "::"):  # noqa: S104 (only read, to reach the server)
        host = "127.0.0.1"
    for key in ENGINE_KEYS:
        if key in base_env:
            say(f"{key}={base_env[key]}")
    stamp, stamp_file = _topics_stamp(base_env), d / "topics.stamp"
    if restart and stamp_file.exists() and stamp_file.read_text() == stamp:
        # a one-cube restart: `turbocubes topics create` was 14 s of it at load 27
        say("topics: created by this topology's start already (topics.stamp)")
    else:
        _create_topics(exe, base_env, d / "topics.log")
        stamp_file.write_text(stamp)

    started: list[Instance] = []
    for inst in instances:
        inst.log = str(d / f"{inst.name}.log")
        pidfile = d / f"{inst.name}.pid"
        pid = _pid_of(pidfile)
        if pid and _alive(pid):
            inst.pid = pid
            say(f"{inst.name}: already running (pid {pid})")
            continue
        env = {
            **base_env,
            "TURBOCUBES_RUNTIME_METRICS_PORT": str(inst.metrics_port),
            # the broker's logs and quotas then tell the instances apart
            "TURBOCUBES_BUS_CLIENT_ID": f"turbocubes-{inst.name}",
            "PYTHONUNBUFFERED": "1",
        }
        log = Path(inst.log)
        if log.exists():
            # keep the previous run's log, and never read its old "metrics at" line as this run's port
            log.replace(log.with_name(log.name + ".1"))
        inst.pid = _spawn([exe, "cube", inst.cube], env, log)
        pidfile.write_text(f"{inst.pid}\n")
        started.append(inst)
        say(f"{inst.name}: started pid {inst.pid} (turbocubes cube {inst.cube}, log {inst.log})")

    deadline = time.monotonic() + wait_s
    pending = list(instances)
    failure = ""
    t0 = time.monotonic()
    while pending and not failure:
        for inst in list(pending):
            if not _alive(inst.pid):
                failure = f"{inst.name} (pid {inst.pid}) exited; last log lines:\n{_tail(Path(inst.log))}"
                break
            inst.metrics_url = inst.metrics_url or _metrics_url(inst, host)
            if inst.metrics_url and _healthy(inst.metrics_url, inst.cube):
                pending.remove(inst)
                say(
                    f"{inst.name}: healthy at {inst.metrics_url}/healthz after {time.monotonic() - t0:.1f}s "
                    f"({len(instances) - len(pending)}/{len(instances)})"
                )
        if pending and not failure:
            if time.monotonic() > deadline:
                names = ", ".join(i.name for i in pending)
                failure = f"not healthy after {wait_s:.0f}s: {names}; last log lines of {pending[0].name}:\n" + _tail(
                    Path(pending[0].log)
                )
            else:
                time.sleep(POLL_S)
    _write_state(instances)
    if failure:
        say(f"FAILED: {failure}")
        say("stopping the instances this call started")
        _stop(started, grace_s=float(os.environ.get("TURBOCUBES_TOPOLOGY_STOP_S", "20")))
        return 1
    say(f"topology up: {len(instances)} processes healthy; state in {d / 'topology.json'}")
    return 0


def _read_state() -> list[dict[str, object]]:
    try:
        rows = json.loads((var_dir() / "topology.json").read_text())["instances"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [r for r in rows if isinstance(r, dict) and isinstance(r.get("name"), str)]


def _pipeline_order(row: dict[str, object]) -> tuple[int, str]:
    cube = str(row.get("cube", ""))
    return (CUBES.index(cube) if cube in CUBES else len(CUBES), str(row["name"]))


ENGINE_KEYS = ("TURBOCUBES_BUS_URL", "TURBOCUBES_STORE_URL", "TURBOCUBES_CDN_URL", "TURBOCUBES_BLOBS_URL")


def _write_state(instances: list[Instance]) -> None:
    """``topology.json`` as the topology now is: this call's instances, and every other one still alive.

    ``start --only X`` beside a running topology used to write X alone, so the file forgot every
    other process.
    """
    path = var_dir() / "topology.json"
    mine = {i.name for i in instances}
    others = [
        r
        for r in _read_state()
        if r["name"] not in mine and isinstance(r.get("pid"), int) and _alive(r["pid"])  # type: ignore[arg-type]
    ]
    rows = sorted([*others, *(asdict(i) for i in instances)], key=_pipeline_order)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"instances": rows}, indent=2) + "\n")
    tmp.replace(path)


def _stop(instances: list[Instance], grace_s: float) -> int:
    live = [i for i in instances if i.pid and _alive(i.pid)]
    for inst in live:
        say(f"{inst.name}: SIGTERM pid {inst.pid}")
        os.kill(inst.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while any(_alive(i.pid) for i in live) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    killed = 0
    for inst in live:
        if _alive(inst.pid):
            say(f"{inst.name}: still alive after {grace_s:.0f}s: SIGKILL pid {inst.pid}")
            os.kill(inst.pid, signal.SIGKILL)
            killed += 1
    for inst in instances:
        (var_dir() / f"{inst.name}.pid").unlink(missing_ok=True)
    return killed


def stop(grace_s: float) -> int:
    d = var_dir()
    instances = [
        Instance(name=p.stem, cube=p.stem.rsplit("-", 1)[0], metrics_port=0, pid=_pid_of(p))
        for p in sorted(d.glob("*.pid"))
    ]
    if not instances:
        say(f"nothing running (no pid files in {d})")
        return 0
    killed = _stop(instances, grace_s)
    (d / "topology.json").unlink(missing_ok=True)
    say(f"stopped {len(instances)} instance(s)" + (f", {killed} with SIGKILL" if killed else ""))
    return 0


def _available_cubes() -> list[str]:
    """The cubes this checkout has: those with a ``cubes/<name>/cube.py``. Looked up on disk: asking
    the registry imported every cube (8.7 s of a one-cube restart at load 22, before anything started)."""
    return [c for c in CUBES if (REPO / "cubes" / c / "cube.py").is_file()]


def _topics_stamp(env: dict[str, str]) -> str:
    """What the topics were last created for: the bus URL and the topic catalog's digest."""
    catalog = (REPO / "schemas" / "topics.toml").read_bytes()
    return f"{env.get('TURBOCUBES_BUS_URL', '')}\n{hashlib.sha256(catalog).hexdigest()}\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ops/topology", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("start", help="start the engines and every cube as its own process")
    s.add_argument(
        "--no-engines",
        action="store_true",
        help="do not run ops/*/start: TURBOCUBES_BUS_URL, _STORE_URL and _CDN_URL must be set",
    )
    s.add_argument("--parsers", type=int, default=2, help="parser processes (default 2)")
    s.add_argument("--crawlers", type=int, default=2, help="crawler processes (default 2)")
    s.add_argument("--only", action="append", default=[], metavar="CUBE", help="run only these cubes")
    sub.add_parser("stop", help="SIGTERM every cube process, then SIGKILL after the grace period")
    args = p.parse_args(argv)
    if args.command == "stop":
        return stop(float(os.environ.get("TURBOCUBES_TOPOLOGY_STOP_S", "20")))

    t0 = time.monotonic()
    available = _available_cubes()
    wanted = args.only or list(CUBES)
    missing = [c for c in wanted if c not in available]
    if missing:
        say(f"not in this checkout, skipped: {', '.join(missing)}")
    cubes = [c for c in wanted if c in available]
    if not cubes:
        say("no cube to run")
        return 1
    base = int(os.environ.get("TURBOCUBES_TOPOLOGY_METRICS_BASE", "9301"))
    instances = plan(cubes, args.parsers, args.crawlers, base)
    extra = engine_env(use_engines=not args.no_engines)  # running engines answer at once (idempotent starts)
    wait_s = float(os.environ.get("TURBOCUBES_TOPOLOGY_WAIT_S", "90"))
    rc = start(instances, extra, wait_s, restart=bool(args.only))
    say(f"done in {time.monotonic() - t0:.1f}s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
