"""``scripts/test`` never passes with an engine missing, and its log stays whole in a file.

The script runs in a copy of its tree where ``bootstrap``, Kafka's and PostgreSQL's starts and
pytest are stand-ins (they print a line and succeed), and ``ops/s3/start`` is the real one, with one
of SeaweedFS's internal ports held by this test, as when another SeaweedFS held it: the run used to
print ``[test] s3 did not start``, skip the S3 tests and end green; and ``> file 2>&1`` lost the
engines' lines under pytest's (``tee -a /dev/stderr`` opened the file a second time).
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

STUB_PYTEST = """#!/usr/bin/env bash
echo "stub pytest ran; S3=${TURBOCUBES_TEST_S3:-unset}"
for i in $(seq 1 200); do echo "stub pytest line $i"; done
"""


def _stub(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture
def held_port() -> Iterator[int]:
    """A port that answers, held for the test (SeaweedFS's filer gRPC port below)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        # the kernel hands out ephemeral ports (Linux: 32768-60999), so port - 10000 is an HTTP port
        assert port > 10000, f"the free port {port} has no HTTP port 10000 below it"
        yield port


@pytest.fixture
def tree(tmp_path: Path, held_port: int) -> Path:
    root = tmp_path / "repo"
    _stub(root / "scripts" / "test", (REPO / "scripts" / "test").read_text())
    _stub(root / "scripts" / "bootstrap", "#!/usr/bin/env bash\nexit 0\n")
    _stub(root / ".venv" / "bin" / "python", STUB_PYTEST)
    for engine, line in (
        ("kafka", "TURBOCUBES_TEST_KAFKA=kafka://127.0.0.1:1"),
        ("postgres", "TURBOCUBES_TEST_POSTGRES=postgresql://u:p@127.0.0.1:1/db"),
    ):
        ready = f"echo '[{engine}] stand-in ready'"
        _stub(root / "ops" / engine / "start", f"#!/usr/bin/env bash\n{ready}\necho '{line}'\n")
        _stub(root / "ops" / engine / "stop", "#!/usr/bin/env bash\nexit 0\n")
    _stub(root / "ops" / "s3" / "start", (REPO / "ops" / "s3" / "start").read_text())
    _stub(root / "ops" / "s3" / "stop", "#!/usr/bin/env bash\nexit 0\n")
    _stub(root / "ops" / "lib" / "ports.sh", (REPO / "ops" / "lib" / "ports.sh").read_text())
    return root


def _free_pair() -> int:
    """A port free on 127.0.0.1 whose + 10000 is free too (SeaweedFS binds both)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port + 10000 > 65535:
            continue
        with socket.socket() as a, socket.socket() as b:
            try:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise AssertionError("no free pair of ports")


def _run(root: Path, held_port: int, *args: str) -> tuple[int, str]:
    # the filer's gRPC port is its HTTP port + 10000: hold that one; the others are free pairs (others'
    # SeaweedFS may hold the defaults)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCUBES_") and k != "CI"} | {
        "TURBOCUBES_VAR": str(root / "var"),
        "TURBOCUBES_VENV": str(REPO / ".venv"),  # the real weed, so that ops/s3/start gets to its port check
        "TURBOCUBES_S3_FILER_PORT": str(held_port - 10000),
        "TURBOCUBES_S3_PORT": str(_free_pair()),
        "TURBOCUBES_S3_MASTER_PORT": str(_free_pair()),
        "TURBOCUBES_S3_VOLUME_PORT": str(_free_pair()),
        "PATH": os.environ["PATH"],
    }
    log = root / "test.log"
    with log.open("w") as out:  # redirected to a file, as a CI job or a user's `> log 2>&1` does
        rc = subprocess.run(
            ["bash", str(root / "scripts" / "test"), *args],
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=60,
        ).returncode
    return rc, log.read_text()


def test_the_run_fails_when_seaweedfs_cannot_start_and_names_the_port(tree: Path, held_port: int) -> None:
    rc, log = _run(tree, held_port, "-q")
    assert rc != 0, log
    assert "stub pytest ran" not in log, "pytest ran with an engine missing"
    # the engine's own reason is in the log, whole, before the verdict
    assert f"port {held_port} (filer gRPC) is already in use" in log, log
    assert log.index("[kafka] stand-in ready") < log.index("(filer gRPC)") < log.index("s3 did not start"), log


def test_skipping_a_missing_engine_is_asked_for_and_the_log_stays_in_order(tree: Path, held_port: int) -> None:
    rc, log = _run(tree, held_port, "--skip-missing-engines", "-q")
    assert rc == 0, log
    assert "stub pytest ran; S3=unset" in log, log
    # every line of the engines' starts survives pytest's output, in the order it was written
    lines = log.splitlines()
    for wanted in ("[kafka] stand-in ready", "[postgres] stand-in ready", "(filer gRPC) is already in use"):
        assert any(wanted in line for line in lines), (wanted, log)
    assert lines.index("stub pytest line 200") == len(lines) - 1, log
    assert log.index("(filer gRPC)") < log.index("[test] running pytest") < log.index("stub pytest line 1\n")
