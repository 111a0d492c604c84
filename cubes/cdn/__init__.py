"""cdn: check a fetched image by its bytes, store it in the CDN under its content hash (DESIGN.md s.3)."""
