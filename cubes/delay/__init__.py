"""delay: release parked documents when their media is cached or their deadline passes (docs/architecture.md s.3)."""
