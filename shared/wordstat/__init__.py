"""Wordstat-style query statistics: lemmas, the operator language and its matching (docs/architecture.md s.3,
"wordstat")."""
