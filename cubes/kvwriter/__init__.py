"""kvwriter: sanitize, render and write Turbo pages to the KV store (docs/architecture.md section 3)."""
