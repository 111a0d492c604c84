"""The README stays true for a stranger's clone (issue 14 item 7: it linked to a design file outside it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_relative_link_of_the_readme_is_inside_the_repository() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)", text)
    local = [t for t in targets if not t.startswith(("http://", "https://", "mailto:"))]
    assert local, "the README links to files of the repository"
    for target in local:
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT), f"{target} is outside the repository"
        assert path.exists(), f"{target} does not exist"


def test_the_readme_says_how_to_try_a_local_feed() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "http.allowlist" in text
    assert "TURBOCUBES_HTTP_ALLOWLIST" in text
