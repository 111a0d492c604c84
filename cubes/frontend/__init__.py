"""frontend: Turbo pages, search and status pages over HTTP (DESIGN.md section 3)."""
