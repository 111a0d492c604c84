"""media: rewrite a document's media to CDN links, or order what is missing and park it (docs/architecture.md s.3)."""
