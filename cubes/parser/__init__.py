"""The parser cube: RSS / Atom, Yandex Turbo RSS, YML catalogs and partner JSON into documents.

``feed.parse_feed`` (pure) -> ``documents.prepare_items`` (identity, sanitize,
hash) -> ``handler.ParserHandler`` (ownership, dedupe, versions, status). The package
imports nothing itself: ``turbocubes --help`` reads ``commands.py`` without loading the parser.
"""
