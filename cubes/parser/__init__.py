"""The parser cube: RSS / Atom, Yandex Turbo RSS, YML catalogs and partner JSON into documents.

``feed.parse_feed`` (pure) -> ``documents.prepare_items`` (identity, sanitize,
hash) -> ``handler.ParserHandler`` (ownership, dedupe, versions, status).
"""

from cubes.parser.feed import parse_feed

__all__ = ["parse_feed"]
