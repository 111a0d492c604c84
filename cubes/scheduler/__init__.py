"""The scheduler cube: decides *when* each registered feed is fetched (DESIGN.md section 3)."""
