"""Misbehaving partner servers for tests (docs/conventions.md rule 12): see ``README.md`` here."""

from tests.partners.server import Hit, PartnerServer, max_in_window

__all__ = ["Hit", "PartnerServer", "max_in_window"]
