"""The published-cell rule of query statistics in SQL, for both engines (``shared/wordstat/privacy.py`` is the
rule; docs/architecture.md section 4, "stores")."""

from __future__ import annotations

__all__ = ["published_sql", "rebuild_sql", "shown_sql"]


def shown_sql(alias: str, threshold: int) -> str:
    """SQL condition: the cell ``alias`` is published under ``threshold`` (an int, written in the SQL)."""
    return f"{alias}.n - {alias}.hide >= {int(threshold)}"


def published_sql(alias: str) -> str:
    """SQL of a published cell's number (with ``shown_sql`` in the WHERE clause)."""
    return f"{alias}.n - {alias}.hide + {alias}.lift"


def rebuild_sql(threshold: int) -> tuple[str, ...]:
    """Statements that make every word's counters and query's total the sums of the cells published under
    ``threshold``, and record it (both engines; in the batch's transaction)."""
    shown, value = shown_sql("c", threshold), published_sql("c")
    return (
        "DELETE FROM ws_lemma_counts",
        "INSERT INTO ws_lemma_counts (lemma, month, region, device, n)"
        f" SELECT t.lemma, c.month, c.region, c.device, sum({value}) FROM ws_counts c JOIN ws_terms t ON t.qid = c.qid"
        f" WHERE {shown} AND t.lemma NOT LIKE '=%' GROUP BY t.lemma, c.month, c.region, c.device",
        "INSERT INTO ws_lemma_counts (lemma, month, region, device, n)"
        f" SELECT u.key, c.month, c.region, c.device, sum({value})"
        " FROM (SELECT DISTINCT m.key, t.qid FROM ws_union_members m JOIN ws_terms t ON t.lemma = m.lemma) u"
        f" JOIN ws_counts c ON c.qid = u.qid WHERE {shown} GROUP BY u.key, c.month, c.region, c.device",
        f"UPDATE ws_queries SET total = coalesce((SELECT sum({value}) FROM ws_counts c"
        f" WHERE c.qid = ws_queries.qid AND {shown}), 0)",
        "DELETE FROM ws_meta WHERE name = 'threshold'",
        f"INSERT INTO ws_meta (name, value) VALUES ('threshold', {int(threshold)})",
    )
