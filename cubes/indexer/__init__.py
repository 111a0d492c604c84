"""The indexer cube: the search index follows the written pages (docs/architecture.md section 3)."""
