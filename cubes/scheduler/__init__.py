"""The scheduler cube: decides *when* each registered feed is fetched (docs/architecture.md section 3)."""
