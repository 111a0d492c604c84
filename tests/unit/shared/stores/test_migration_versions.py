"""Migration versions are unique and increasing on each engine: two branches that both appended a
"version 6" would otherwise apply one of them and skip the other for ever (a rebase did exactly that)."""

from __future__ import annotations

import pytest

from shared.stores.migrations import POSTGRES, SQLITE, Migration


@pytest.mark.parametrize("migrations", [SQLITE, POSTGRES], ids=["sqlite", "postgres"])
def test_versions_are_unique_and_increasing(migrations: list[Migration]) -> None:
    versions = [m[0] for m in migrations]
    assert versions == list(range(1, len(versions) + 1))


def test_both_engines_have_the_same_versions_and_names() -> None:
    assert [m[0] for m in SQLITE] == [m[0] for m in POSTGRES]
