"""wordstat: counts answered searches for Wordstat-style frequencies (DESIGN.md section 3)."""
