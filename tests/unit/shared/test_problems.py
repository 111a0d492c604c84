"""The problem model and its code table (shared/problems/__init__.py, shared/problems/codes.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared.contracts import problems_markdown
from shared.problems import (
    Problem,
    Severity,
    cap,
    fetch_problem,
    image_code,
    image_problem,
    problem,
    problem_schema,
    problems_from,
)
from shared.problems.codes import CODES

ROOT = Path(__file__).resolve().parents[3]


def test_every_code_has_a_severity_a_title_and_a_hint() -> None:
    for code, row in CODES.items():
        assert re.fullmatch(r"[a-z]+\.[a-z_]+", code), code
        assert row.code == code
        assert Severity(row.severity)
        assert row.title, code
        assert row.hint.endswith((".", ")")), code


def test_problem_fills_severity_and_hint_from_the_table() -> None:
    p = problem("item.no_title", "item has no title", feed="f1", item=2, link="https://a.example/x", line=7)
    assert p.severity is Severity.error
    assert p.hint == CODES["item.no_title"].hint
    assert p.where.describe() == "item 3, line 7"
    assert p.describe() == "[item.no_title] item 3, line 7: item has no title"
    assert p.as_dict()["where"] == {"feed": "f1", "item": 2, "link": "https://a.example/x", "line": 7, "column": None}


def test_a_specific_hint_and_severity_win_over_the_table() -> None:
    p = problem("xml.recovered", "m", hint="do this", severity="error")
    assert (p.hint, p.severity) == ("do this", Severity.error)


def test_an_unknown_code_is_refused() -> None:
    with pytest.raises(KeyError):
        problem("no.such_code", "m")


def test_problems_round_trip_through_json_and_bad_rows_are_skipped() -> None:
    p = problem("image.not_found", "image x was left out", link="https://a.example/p")
    back = problems_from([p.as_dict(), {"code": 1}, {"nonsense": True}])
    assert back == [p]


def test_cap_keeps_errors_first_and_counts_every_problem() -> None:
    warnings = [problem("xml.recovered", f"w{i}") for i in range(3)]
    errors = [problem("item.no_title", f"e{i}", item=i) for i in range(5)]
    capped = cap([*warnings, *errors], limit=4)
    assert [p.message for p in capped.kept] == ["e0", "e1", "e2", "e3"]
    assert capped.counts == {"item.no_title": 5, "xml.recovered": 3}
    assert capped.severities == {"error": 5, "warning": 3, "info": 0}
    assert capped.more == 4
    assert capped.total == 8


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("http_404", "image.not_found"),
        ("http_410", "image.not_found"),
        ("http_403", "image.http_error"),
        ("http_500", "image.http_error"),
        ("not_an_image", "image.not_an_image"),
        ("too_many_pixels", "image.too_large"),
        ("timeout", "image.unreachable"),
        ("blocked_address", "image.refused"),
        ("late", "image.late"),
        ("something_new", "image.http_error"),
    ],
)
def test_image_reasons_map_to_codes(reason: str, code: str) -> None:
    assert image_code(reason) == code
    p = image_problem("https://a.example/i.png", reason, page_url="https://a.example/p", feed="f")
    assert p.code == code
    assert p.where.link == "https://a.example/p"
    assert "https://a.example/i.png" in p.message


def test_fetch_statuses_map_to_codes() -> None:
    assert fetch_problem("http_4xx", 404, None).code == "fetch.not_found"
    assert fetch_problem("http_4xx", 403, None).code == "fetch.http_error"
    blocked = fetch_problem("blocked_address", None, "127.0.0.1 is loopback", feed="f")
    assert blocked.code == "fetch.blocked_address"
    assert "http.allowlist" in blocked.hint
    assert fetch_problem("throttled", 429, None).severity is Severity.info


def test_every_code_written_in_the_source_is_in_the_table() -> None:
    """Codes are a contract: a code spelled in a call must be a row of the table."""
    used: set[str] = set()
    pattern = re.compile(r"""(?:code=|problem\()\s*["']([a-z]+\.[a-z_]+)["']""")
    for folder in ("cubes", "shared"):
        for path in (ROOT / folder).rglob("*.py"):
            used.update(pattern.findall(path.read_text(encoding="utf-8")))
    assert used, "the pattern finds the codes"
    assert sorted(used - CODES.keys()) == []


def test_the_schema_lists_every_code() -> None:
    schema = problem_schema()
    assert schema["properties"]["code"]["enum"] == list(CODES)
    assert Problem.model_validate(problem("feed.empty", "empty").as_dict())


def test_the_markdown_table_has_a_row_per_code_and_escapes_markup() -> None:
    text = problems_markdown()
    for code in CODES:
        assert f"| `{code}` |" in text
    assert "<turbo:content>" not in text
    assert "&lt;turbo:content&gt;" in text
