"""kvwriter: sanitize, render and write Turbo pages to the KV store (DESIGN.md section 3)."""
