"""One writer per field of a feed's row (docs/conventions.md rule 18).

Each writer has its own store method; these tests keep every field owned by one
of them, each method called from its writer's package only, and the migration
that split the two fields the scheduler and the parser used to overwrite in turn.
"""

from __future__ import annotations

import ast
import asyncio
import sqlite3
from collections import defaultdict
from pathlib import Path

from shared.stores import open_stores
from shared.stores.feeds import AUTOPARSER_FIELDS, PARSE_FIELDS, REGISTRATION, SCHEDULE_FIELDS, Feed, FeedStatus
from shared.stores.migrations import SQLITE

REPO = Path(__file__).resolve().parents[4]

#: store method -> the one place allowed to call it (a module or a package)
WRITERS = {
    "upsert_feed": "shared/webmaster/feeds.py",
    "delete_feed": "shared/webmaster/feeds.py",
    "update_schedule": "cubes/scheduler/",
    "update_parse_status": "cubes/parser/",
    "set_autoparser_unavailable": "cubes/autoparser/",
}


def test_every_status_field_has_exactly_one_writer() -> None:
    groups = [SCHEDULE_FIELDS, PARSE_FIELDS, AUTOPARSER_FIELDS]
    fields = set(FeedStatus.__dataclass_fields__)
    assert set().union(*groups) == fields
    assert sum(len(g) for g in groups) == len(fields)  # no field in two groups
    assert set(REGISTRATION) | {"feed_id", "status"} == set(Feed.__dataclass_fields__)


def test_each_writer_method_is_called_from_its_writer_only() -> None:
    callers: dict[str, set[str]] = defaultdict(set)
    # the running system only: benches and tests seed rows as fixtures
    for path in [*REPO.glob("cubes/**/*.py"), *REPO.glob("shared/**/*.py")]:
        rel = path.relative_to(REPO).as_posix()
        if rel.startswith("shared/stores/"):
            continue  # the store itself
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITERS:
                callers[node.func.attr].add(rel)
    for method, owner in WRITERS.items():
        strangers = sorted(c for c in callers[method] if not c.startswith(owner))
        assert not strangers, f"{method} is {owner}'s to call, not {strangers}'s"
    assert callers["upsert_feed"]  # the scan sees calls at all


def test_migration_moves_each_old_value_to_the_writer_it_names(tmp_path: Path) -> None:
    """``last_result`` / ``last_error`` held whichever of the fetch and the parse wrote last."""
    path = tmp_path / "store.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    for version, name, statements in SQLITE:
        if version >= 6:
            break
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name))
    rows = [
        ("parsed", "f-parsed", "bad date in item 3", 1),
        ("http_5xx", "f-failing", "http_5xx: HTTP 503", 1),
        ("not_modified", "f-quiet", None, 1),
        (None, "f-new", None, None),
    ]
    for result, feed_id, error, fetched in rows:
        conn.execute(
            "INSERT INTO feeds (feed_id, url, host, format, created_at, last_result, last_error, last_fetch_at)"
            " VALUES (?, 'https://a.example/f', 'a.example', 'rss', 1, ?, ?, ?)",
            (feed_id, result, error, fetched),
        )
    conn.commit()
    conn.close()

    async def check() -> dict[str, FeedStatus]:
        async with await open_stores(f"sqlite:///{path}") as stores:
            return {f.feed_id: f.status for f in await stores.feeds.list()}

    got = asyncio.run(check())
    parsed, failing, quiet, new = got["f-parsed"], got["f-failing"], got["f-quiet"], got["f-new"]
    assert (parsed.fetch_result, parsed.parse_result, parsed.parse_error) == ("ok", "parsed", "bad date in item 3")
    assert (failing.fetch_result, failing.fetch_error, failing.parse_result) == ("http_5xx", "http_5xx: HTTP 503", None)
    assert (quiet.fetch_result, quiet.fetch_error) == ("not_modified", None)
    assert (new.fetch_result, new.parse_result, new.last_result) == (None, None, None)
    # what readers see is what they saw before
    assert (parsed.last_result, parsed.last_error) == ("parsed", "bad date in item 3")
    assert (failing.last_result, failing.last_error) == ("http_5xx", "http_5xx: HTTP 503")
    assert quiet.last_result == "not_modified"


def test_last_result_is_the_feed_as_it_is_now() -> None:
    failed_after_a_good_parse = FeedStatus(fetch_result="timeout", fetch_error="timeout: 30 s", parse_result="parsed")
    assert (failed_after_a_good_parse.last_result, failed_after_a_good_parse.last_error) == ("timeout", "timeout: 30 s")
    healed = FeedStatus(fetch_result="ok", parse_result="partial", parse_error="1 item(s) refused")
    assert (healed.last_result, healed.last_error) == ("partial", "1 item(s) refused")
    unread = FeedStatus(fetch_result="ok")
    assert unread.last_result == "ok"
