"""frontend: Turbo pages, search and status pages over HTTP (docs/architecture.md section 3)."""
