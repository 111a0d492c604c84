"""cdn: check a fetched image by its bytes, store it in the CDN under its content hash (docs/architecture.md s.3)."""
