"""The api cube: webmaster and partner APIs with per-tenant throttling (docs/architecture.md sections 1, 3 and 6)."""
