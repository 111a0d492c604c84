"""delay: release parked documents when their media is cached or their deadline passes (DESIGN.md s.3)."""
