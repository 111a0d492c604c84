"""wordstat: counts answered searches for Wordstat-style frequencies (docs/architecture.md section 3)."""
