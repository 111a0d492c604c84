"""Wordstat-style query statistics: lemmas, the operator language and its matching (DESIGN.md s.3, "wordstat")."""
