"""docker-compose.yml, Prometheus and Grafana stay true to the code (docs/architecture.md section 8).

No Docker engine runs here, so the compose file is checked statically: every
service's command parses with the real CLI, every ``TURBOCUBES_*`` key is a real
config key (and its value loads), published ports do not collide, every cube has
a service, referenced images / volumes / files exist; Prometheus scrapes every
cube service on the port it serves; every metric the dashboard and the alerts
use is registered somewhere in ``shared/`` or ``cubes/``. The same topology runs
for real in ``tests/integration/test_topology.py``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

from cubes import registry
from cubes.cli import build_parser
from shared.config import RuntimeConfig, Settings, load_settings
from shared.config.settings import section_models

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
OPS = REPO / "ops"
CUBE_IMAGE = "turbocubes:local"
#: the cubes that scale out (two replicas in compose and in ops/topology)
SCALED = {"parser": 2, "crawler": 2}

_INTERPOLATION = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::?-(?P<default>[^}]*))?\}")


def _interpolate(text: str) -> str:
    """Compose's ``${VAR:-default}`` with an empty environment (what a fresh clone gets)."""
    return _INTERPOLATION.sub(lambda m: m.group("default") or "", text.replace("$$", "\x00")).replace("\x00", "$")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    doc = yaml.safe_load(_interpolate(COMPOSE.read_text(encoding="utf-8")))
    assert isinstance(doc, dict)
    assert isinstance(doc.get("services"), dict)
    return doc


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return typing.cast(dict[str, dict[str, Any]], compose["services"])


def _cube_services(services: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {n: s for n, s in services.items() if s.get("image") == CUBE_IMAGE}


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


def _replicas(service: dict[str, Any]) -> int:
    return int((service.get("deploy") or {}).get("replicas", 1))


def _valid_env_keys() -> dict[str, tuple[str, str]]:
    keys: dict[str, tuple[str, str]] = {}
    for name, model in section_models().items():
        for key in model.model_fields:
            keys[f"TURBOCUBES_{name.upper()}_{key.upper()}"] = (name, key)
    return keys


def _settings_of(service: dict[str, Any], tmp_path: Path) -> Settings:
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    return load_settings(empty, env=_env(service))


# --------------------------------------------------------------------------- services and commands


def test_every_cube_command_parses_with_the_real_cli(services: dict[str, dict[str, Any]]) -> None:
    parser = build_parser()
    cube_services = _cube_services(services)
    assert "topics" in cube_services, "the one-shot `turbocubes topics create` service is missing"
    for name, service in cube_services.items():
        command = service.get("command")
        assert isinstance(command, list), f"service {name}: command must be a list"
        assert command, f"service {name}: empty command"
        try:
            args = parser.parse_args([str(c) for c in command])
        except SystemExit:
            pytest.fail(f"service {name}: `turbocubes {' '.join(map(str, command))}` is not a CLI command")
        assert callable(args.func), name
        if command[0] == "cube":
            # one cube per service, named after it (Prometheus and the dashboard rely on that)
            assert command == ["cube", name], f"service {name} runs {command}"


@pytest.mark.parametrize("cube", registry.CUBE_NAMES)
def test_every_cube_has_its_service(cube: str, services: dict[str, dict[str, Any]]) -> None:
    service = services.get(cube)
    assert service is not None, f"docker-compose.yml has no service for cube {cube!r}"
    assert service.get("command") == ["cube", cube]
    assert _replicas(service) == SCALED.get(cube, 1), f"{cube}: replicas"


def test_only_replicable_cubes_run_as_replicas(services: dict[str, dict[str, Any]]) -> None:
    """A service with replicas runs a cube whose declaration says it may (``Cube(replicable=True)``)."""
    assert SCALED, "compose scales some cube"
    for name, service in _cube_services(services).items():
        if _replicas(service) > 1:
            assert registry.declared(name).replicable, f"{name} runs {_replicas(service)} replicas: not replicable"
    for cube in SCALED:
        assert registry.declared(cube).replicable, cube


def test_cubes_wait_for_the_topics_and_the_engines(services: dict[str, dict[str, Any]]) -> None:
    for name, service in _cube_services(services).items():
        deps = service.get("depends_on") or {}
        for dep in deps:
            assert dep in services, f"service {name} depends on unknown service {dep}"
        if name == "topics":
            assert deps["kafka"]["condition"] == "service_healthy"
        else:
            assert deps["topics"]["condition"] == "service_completed_successfully", name
            assert "postgres" in deps, name
            assert "seaweedfs" in deps, name


def test_engines_are_the_official_images_pinned(services: dict[str, dict[str, Any]]) -> None:
    expected = {
        "kafka": "apache/kafka:",
        "postgres": "postgres:",
        "seaweedfs": "chrislusf/seaweedfs:",
        "prometheus": "prom/prometheus:",
        "grafana": "grafana/grafana:",
    }
    for name, prefix in expected.items():
        image = services[name]["image"]
        assert image.startswith(prefix), f"{name}: {image}"
        assert not image.endswith(":latest"), f"{name}: pin the version, not {image}"
    kafka = _env(services["kafka"])
    assert kafka["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft, no ZooKeeper
    assert "-s3" in services["seaweedfs"]["command"]


# --------------------------------------------------------------------------- configuration


def test_every_turbocubes_key_is_a_real_config_key(services: dict[str, dict[str, Any]]) -> None:
    valid = _valid_env_keys()
    for name, service in services.items():
        for key in _env(service):
            if key.startswith("TURBOCUBES_"):
                assert key in valid, f"service {name}: {key} is not a config key (see turbocubes.example.toml)"


def test_every_cube_service_loads_its_settings(services: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    for name, service in _cube_services(services).items():
        settings = _settings_of(service, tmp_path)  # raises ConfigError naming the key if a value is wrong
        assert settings.bus.url.startswith("kafka://"), name
        assert settings.store.url.startswith("postgresql://"), name
        assert settings.cdn.url.startswith("s3://"), name
        # crawler and parser replicas exchange big bodies through blobs: shared storage, never a local dir
        assert settings.blobs.url.startswith("s3://"), name
        # Prometheus reaches the container from outside: not a loopback bind
        assert settings.runtime.metrics_host == "0.0.0.0", name
        if name in ("api", "frontend"):
            assert getattr(settings, name).host == "0.0.0.0", name


# --------------------------------------------------------------------------- ports, volumes, files


def _published(service: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(host ip, host port, container port) of each published port."""
    out = []
    for spec in service.get("ports") or []:
        parts = str(spec).split(":")
        assert len(parts) in (2, 3), f"publish host and container port explicitly: {spec}"
        ip = parts[0] if len(parts) == 3 else "0.0.0.0"
        out.append((ip, int(parts[-2]), int(parts[-1].split("/")[0])))
    return out


def test_published_ports_do_not_collide(services: dict[str, dict[str, Any]]) -> None:
    seen: dict[int, str] = {}
    for name, service in services.items():
        published = _published(service)
        if published:
            assert _replicas(service) == 1, f"{name}: replicas cannot share a fixed host port"
        for ip, host_port, _ in published:
            assert ip == "127.0.0.1", f"{name} publishes {host_port} on {ip}: bind to 127.0.0.1 (secure by default)"
            assert host_port not in seen, f"host port {host_port} published by {seen.get(host_port)} and {name}"
            seen[host_port] = name


def test_published_ports_are_the_ones_the_cubes_listen_on(services: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    for name in ("api", "frontend"):
        settings = _settings_of(services[name], tmp_path)
        port = getattr(settings, name).port
        assert [c for _, _, c in _published(services[name])] == [port], name
    for name, service in _cube_services(services).items():
        settings = _settings_of(service, tmp_path)
        listening = [settings.runtime.metrics_port]
        if name == "api":
            listening.append(settings.api.port)
        if name == "frontend":
            listening.append(settings.frontend.port)
        if name == "scheduler" and settings.scheduler.websub_callback_base:
            listening.append(settings.scheduler.websub_port)
        assert len(set(listening)) == len(listening), f"{name}: two servers on one port {listening}"


def test_volumes_configs_and_bind_mounts_exist(compose: dict[str, Any]) -> None:
    named = set(compose.get("volumes") or {})
    configs = set(compose.get("configs") or {})
    used: set[str] = set()
    for name, service in compose["services"].items():
        for spec in service.get("volumes") or []:
            source = str(spec).split(":", 1)[0]
            if source.startswith((".", "/")):
                assert (REPO / source).exists(), f"{name}: bind mount {source} does not exist"
            else:
                assert source in named, f"{name}: volume {source} is not declared"
                used.add(source)
        for cfg in service.get("configs") or []:
            assert cfg["source"] in configs, f"{name}: config {cfg['source']} is not declared"
    assert named == used, f"declared but unused volumes: {named - used}"


def test_the_cube_image_is_built_from_the_dockerfile(services: dict[str, dict[str, Any]]) -> None:
    for name, service in _cube_services(services).items():
        assert service.get("build") == ".", f"{name}: build the one image from ./Dockerfile"
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11-slim\b", dockerfile, re.M)
    assert 'ENTRYPOINT ["turbocubes"]' in dockerfile
    assert re.search(r"^USER (?!root)\S+", dockerfile, re.M), "the image must not run as root"
    ignored = {
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    copied = re.findall(r"^COPY (.+) \S+$", dockerfile, re.M)
    for sources in copied:
        for src in sources.split():
            assert (REPO / src).exists(), f"Dockerfile copies {src}, which does not exist"
            assert src not in ignored, f"Dockerfile copies {src} but .dockerignore excludes it"


# --------------------------------------------------------------------------- Prometheus


def _prometheus() -> dict[str, Any]:
    return typing.cast(dict[str, Any], yaml.safe_load((OPS / "prometheus" / "prometheus.yml").read_text()))


def _scrape_targets() -> list[tuple[str, int]]:
    targets: list[tuple[str, int]] = []
    for job in _prometheus()["scrape_configs"]:
        for sd in job.get("dns_sd_configs") or []:
            targets += [(n, int(sd["port"])) for n in sd["names"]]
        for sc in job.get("static_configs") or []:
            for t in sc["targets"]:
                host, port = t.rsplit(":", 1)
                targets.append((host, int(port)))
    return targets


def test_prometheus_scrapes_every_cube_service_on_its_metrics_port(
    services: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    targets = _scrape_targets()
    cube_services = {n: s for n, s in _cube_services(services).items() if n != "topics"}
    for host, port in targets:
        if host == "localhost":
            continue  # Prometheus itself
        assert host in cube_services, f"Prometheus scrapes {host}, which is no cube service"
        settings = _settings_of(cube_services[host], tmp_path)
        serves = settings.runtime.metrics_port
        assert port == serves, f"{host}: scraped on {port}, serves /metrics on {serves}"
    scraped = {h for h, _ in targets}
    assert set(cube_services) <= scraped, f"not scraped: {set(cube_services) - scraped}"
    assert RuntimeConfig().metrics_port == 9300  # the port the Dockerfile EXPOSEs


def test_prometheus_files_are_mounted_where_the_config_says(services: dict[str, dict[str, Any]]) -> None:
    mounts = [str(v) for v in services["prometheus"]["volumes"]]
    assert "./ops/prometheus:/etc/prometheus:ro" in mounts
    for rule_file in _prometheus()["rule_files"]:
        assert rule_file.startswith("/etc/prometheus/")
        assert (OPS / "prometheus" / rule_file.removeprefix("/etc/prometheus/")).is_file(), rule_file


# --------------------------------------------------------------------------- metric names


#: a metric declaration: prometheus_client's classes, or our own collectors named after them
#: (``BatchHistogram("turbocubes_handler_seconds", ...)`` in shared/metrics.py)
_DECLARED = re.compile(r"\b\w*?(Counter|Gauge|Histogram|Summary)\(\s*\"(turbocubes_[a-z0-9_]+)\"")


def _exposed_metric_names() -> set[str]:
    """Every sample name the code can expose, from its Counter/Gauge/Histogram declarations."""
    names: set[str] = set()
    for root in ("shared", "cubes"):
        for path in (REPO / root).rglob("*.py"):
            for kind, name in _DECLARED.findall(path.read_text(encoding="utf-8")):
                if kind == "Counter":  # prometheus_client exposes a counter as <name>_total
                    names.add(name if name.endswith("_total") else name + "_total")
                elif kind == "Histogram":
                    names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
                elif kind == "Summary":
                    names |= {f"{name}_sum", f"{name}_count"}
                else:
                    names.add(name)
    return names


def _used_metric_names(exprs: list[str]) -> set[str]:
    return {m for e in exprs for m in re.findall(r"\bturbocubes_[a-z0-9_]+", e)}


def _dashboard() -> dict[str, Any]:
    return typing.cast(dict[str, Any], json.loads((OPS / "grafana" / "dashboards" / "turbocubes.json").read_text()))


def _dashboard_exprs() -> list[str]:
    return [t["expr"] for p in _dashboard()["panels"] for t in p.get("targets", [])]


def _alert_exprs() -> list[str]:
    doc = yaml.safe_load((OPS / "prometheus" / "alerts.yml").read_text())
    return [str(rule["expr"]) for group in doc["groups"] for rule in group["rules"]]


def test_the_metric_inventory_is_found() -> None:
    names = _exposed_metric_names()
    # the runtime's own metrics must be seen, or the checks below would pass on an empty set
    assert {"turbocubes_processed_total", "turbocubes_consumer_lag", "turbocubes_handler_seconds_bucket"} <= names
    # ... and every metric the cubes really register is in the inventory (the source scan misses none)
    import shared.metrics  # noqa: F401  (registers the runtime's metrics)

    for cube in registry.CUBE_NAMES:
        registry.cube_module(cube)
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
    registered = {
        family.name + suffix
        for family in REGISTRY.collect()
        if family.name.startswith("turbocubes_")
        for suffix in suffixes.get(family.type, ("",))
    }
    assert registered, "no turbocubes metric registered"
    assert registered <= names, f"registered but not found by the source scan: {sorted(registered - names)}"


def test_dashboard_metrics_exist_in_the_code() -> None:
    used = _used_metric_names(_dashboard_exprs())
    assert used, "the dashboard queries no turbocubes metric"
    missing = used - _exposed_metric_names()
    assert not missing, f"the dashboard uses metrics the code does not expose: {sorted(missing)}"


def test_dashboard_covers_lag_throughput_dlq_crawler_and_freshness() -> None:
    used = _used_metric_names(_dashboard_exprs())
    for needed in (
        "turbocubes_consumer_lag",
        "turbocubes_kvwriter_writes_total",
        "turbocubes_dead_lettered_total",
        "turbocubes_dlq_breaker_open",
        "turbocubes_freshness_seconds_bucket",
    ):
        assert needed in used, needed
    assert any('cube="crawler"' in e for e in _dashboard_exprs()), "no crawler panel"


def test_alert_rules_use_existing_metrics_and_cover_the_four_alarms() -> None:
    exprs = _alert_exprs()
    missing = _used_metric_names(exprs) - _exposed_metric_names()
    assert not missing, f"alerts use metrics the code does not expose: {sorted(missing)}"
    joined = "\n".join(exprs)
    for needed in (
        "turbocubes_consumer_lag",
        "turbocubes_dead_lettered_total",
        "turbocubes_dlq_breaker_open",
        "turbocubes_freshness_seconds_bucket",
    ):
        assert needed in joined, needed


def test_grafana_provisioning_matches_the_dashboard_and_the_mounts(services: dict[str, dict[str, Any]]) -> None:
    prov = OPS / "grafana" / "provisioning"
    ds = yaml.safe_load((prov / "datasources" / "prometheus.yml").read_text())["datasources"][0]
    assert "prometheus" in services
    assert ds["url"] == "http://prometheus:9090"
    uids = {t["datasource"]["uid"] for p in _dashboard()["panels"] for t in p.get("targets", [])}
    assert uids == {ds["uid"]}, "every panel must query the provisioned data source"
    provider = yaml.safe_load((prov / "dashboards" / "turbocubes.yml").read_text())["providers"][0]
    mounts = [str(v) for v in services["grafana"]["volumes"]]
    assert f"./ops/grafana/dashboards:{provider['options']['path']}:ro" in mounts
    assert "./ops/grafana/provisioning:/etc/grafana/provisioning:ro" in mounts


# --------------------------------------------------------------------------- the same topology without Docker


@pytest.fixture
def topology(monkeypatch: pytest.MonkeyPatch) -> Any:
    """ops/topology/topology.py, a script, loaded as a module."""
    spec = importlib.util.spec_from_file_location("ops_topology", OPS / "topology" / "topology.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "ops_topology", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_ops_topology_runs_the_same_processes_as_compose(services: dict[str, dict[str, Any]], topology: Any) -> None:
    cubes = registry.CUBE_NAMES
    instances = topology.plan(cubes, 2, 2, 9301)
    counts: dict[str, int] = {}
    for inst in instances:
        counts[inst.cube] = counts.get(inst.cube, 0) + 1
    assert counts == {c: _replicas(services[c]) for c in cubes}
    ports = [i.metrics_port for i in instances]
    assert len(set(ports)) == len(ports), "two processes on one metrics port"
    assert all(i.metrics_port == 0 for i in topology.plan(cubes, 2, 2, 0)), "base 0 = every process picks a port"


def test_ops_topology_stop_never_signals_a_stranger(
    topology: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pid file that outlived its cube may name a reused pid: stop must leave that process alone."""
    monkeypatch.setenv("TURBOCUBES_VAR", str(tmp_path))
    (tmp_path / "topology").mkdir()
    stranger = subprocess.Popen(["sleep", "30"])
    try:
        (tmp_path / "topology" / "parser-1.pid").write_text(f"{stranger.pid}\n")
        assert topology.stop(grace_s=1.0) == 0
        assert stranger.poll() is None, "ops/topology/stop signalled a process that is not a cube"
        assert not (tmp_path / "topology" / "parser-1.pid").exists(), "the stale pid file is left behind"
    finally:
        stranger.kill()
        stranger.wait()


_FAKE_CUBE = '''#!{python}
"""A stand-in for `turbocubes` with the same process contract: prints its metrics URL, serves /healthz."""
import http.server, os, signal, sys, threading
args = sys.argv[1:]
if args[:2] == ["topics", "create"]:
    print("0 topic(s) created on the fake bus")
    sys.exit(0)
if args[1] in os.environ.get("FAKE_BROKEN", "").split(","):
    print("turbocubes: configuration error: broken on purpose", flush=True)
    sys.exit(2)
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/healthz" else 404)
        self.end_headers()
        self.wfile.write(('{{"ok": true, "cubes": {{"%s": {{}}}}}}' % args[1]).encode())
    def log_message(self, *a):
        pass
server = http.server.HTTPServer(("127.0.0.1", int(os.environ["TURBOCUBES_RUNTIME_METRICS_PORT"])), Health)
print(f"turbocubes: running {{args[1]}}; metrics at http://127.0.0.1:{{server.server_port}}/metrics", flush=True)
signal.signal(signal.SIGTERM, lambda *a: threading.Thread(target=server.shutdown).start())
server.serve_forever()
'''


@pytest.fixture
def fake_venv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A venv whose `turbocubes` is a tiny health server, so the script's process handling runs in seconds."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    exe = bin_dir / "turbocubes"
    exe.write_text(_FAKE_CUBE.format(python=sys.executable))
    exe.chmod(0o755)
    # a wrapper, not a symlink: a venv is recognized by the path its python is started from
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    for key, value in {
        "TURBOCUBES_VENV": str(tmp_path / "venv"),
        "TURBOCUBES_VAR": str(tmp_path / "var"),
        "TURBOCUBES_BUS_URL": "kafka://127.0.0.1:1",
        "TURBOCUBES_STORE_URL": "postgresql://x:x@127.0.0.1:1/x",
        "TURBOCUBES_CDN_URL": "s3://fake?endpoint=http://127.0.0.1:1",
        "TURBOCUBES_TOPOLOGY_METRICS_BASE": "0",
        "TURBOCUBES_TOPOLOGY_WAIT_S": "30",
        "TURBOCUBES_TOPOLOGY_STOP_S": "10",
    }.items():
        monkeypatch.setenv(key, value)
    return tmp_path / "var" / "topology"


def _state(var: Path) -> list[dict[str, Any]]:
    return typing.cast(list[dict[str, Any]], json.loads((var / "topology.json").read_text())["instances"])


def test_ops_topology_starts_each_cube_as_a_process_and_stops_them(
    topology: Any, fake_venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert topology.main(["start", "--no-engines"]) == 0
    instances = _state(fake_venv)
    assert [i["name"] for i in instances if i["cube"] == "parser"] == ["parser-1", "parser-2"]
    assert len({i["pid"] for i in instances}) == len(instances) == len(registry.CUBE_NAMES) + 2
    for inst in instances:
        assert topology._healthy(inst["metrics_url"], inst["cube"]), inst["name"]
        assert not topology._healthy(inst["metrics_url"], "no-such-cube"), "health must name the cube"
    out = capsys.readouterr().out
    assert f"topology up: {len(instances)} processes healthy" in out
    # a second start adopts the running instances instead of starting twins
    assert topology.main(["start", "--no-engines"]) == 0
    assert "parser-2: already running" in capsys.readouterr().out
    assert [i["pid"] for i in _state(fake_venv)] == [i["pid"] for i in instances]

    assert topology.main(["stop"]) == 0
    out = capsys.readouterr().out
    assert f"stopped {len(instances)} instance(s)" in out
    assert "SIGKILL" not in out
    assert not [i for i in instances if topology._alive(i["pid"])]
    assert not list(fake_venv.glob("*.pid"))

    # a restart finds the new processes' ports, not the old ones still written in the logs
    assert topology.main(["start", "--no-engines", "--only", "parser"]) == 0
    again = _state(fake_venv)
    assert [i["name"] for i in again] == ["parser-1", "parser-2"]
    assert all(topology._healthy(i["metrics_url"], "parser") for i in again)
    assert (fake_venv / "parser-1.log.1").exists(), "the previous run's log is kept"
    assert topology.main(["stop"]) == 0


def test_ops_topology_start_fails_loudly_and_leaves_nothing_running(
    topology: Any, fake_venv: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BROKEN", "media")
    assert topology.main(["start", "--no-engines"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: media" in out
    assert "broken on purpose" in out, "the dead process's log must be shown"
    instances = _state(fake_venv)
    assert instances
    assert not [i["name"] for i in instances if topology._alive(i["pid"])], "start left processes behind"
    assert not list(fake_venv.glob("*.pid"))
