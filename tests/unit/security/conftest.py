"""The security matrices: each records its cases and prints its counts at the end.

A matrix test asks for ``matrix("name")`` and calls ``.case(label, ok)`` for every row it checks;
the terminal summary then prints, per matrix, how many cases ran and how many held, so a CI log
shows the size of what was proven (a matrix that silently shrank would show it too).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

_REPORTS = pytest.StashKey[dict[str, "Matrix"]]()


@dataclass
class Matrix:
    name: str
    cases: int = 0
    failed: list[str] = field(default_factory=list)
    #: counts by a caller-chosen kind ("no token", "another tenant", ...), printed beside the total
    kinds: dict[str, int] = field(default_factory=dict)

    def case(self, label: str, ok: bool, kind: str = "") -> None:
        self.cases += 1
        if kind:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if not ok:
            self.failed.append(label)


@pytest.fixture
def matrix(request: pytest.FixtureRequest) -> Callable[[str], Matrix]:
    reports = request.config.stash.setdefault(_REPORTS, {})

    def get(name: str) -> Matrix:
        return reports.setdefault(name, Matrix(name))

    return get


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    reports = config.stash.get(_REPORTS, {})
    if not reports:
        return
    terminalreporter.section("security matrices")
    for m in sorted(reports.values(), key=lambda r: r.name):
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(m.kinds.items()))
        held = m.cases - len(m.failed)
        line = f"{m.name}: {m.cases} cases, {held} held" + (f" ({kinds})" if kinds else "")
        terminalreporter.write_line(line)
        for label in m.failed[:20]:
            terminalreporter.write_line(f"    FAILED {label}")
