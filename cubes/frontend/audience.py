"""Who searched, as coarsely as query statistics need: a device class and a region (docs/architecture.md s.3,
"wordstat").

Nothing here keeps the User-Agent or the address it reads: the frontend turns
them into ``Device`` and a region code at once, and only those travel in
``search.queries``: a reader's searches are counted, never traced to them.

* **Device** from the User-Agent, by the tokens browsers use to say what they
  run on (``Mobi`` and ``iPhone`` for phones; ``iPad``, ``Tablet`` or Android
  without ``Mobile`` for tablets; everything else is a desktop). Declared robots
  (``bot``, ``crawler``, ``spider`` ...) are ``None``: their searches are not counted.
* **Region** from, in order: a request header that a trusted edge sets
  (``search.region_header``, e.g. ``X-Region``), then a table of address ranges
  (``search.region_ranges``: ``"CIDR region"`` lines, the most specific range
  wins), else ``"unknown"``. A region is a short code (letters, digits, ``-``, ``_``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

from shared.errors import ConfigError
from shared.messages import Device

__all__ = ["UNKNOWN_REGION", "RegionTable", "device_class", "region_code"]

UNKNOWN_REGION = "unknown"
_BOT = re.compile(r"bot\b|bot/|crawler|spider|slurp|facebookexternalhit|bingpreview|mediapartners", re.IGNORECASE)
_TABLET = re.compile(r"ipad|tablet|playbook|silk/|kindle|android(?!.*mobile)", re.IGNORECASE)
_MOBILE = re.compile(r"mobi|iphone|ipod|windows phone|opera mini|iemobile|blackberry", re.IGNORECASE)
_REGION = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def device_class(user_agent: str) -> Device | None:
    """The device class of a User-Agent, or None for a declared robot."""
    if _BOT.search(user_agent):
        return None
    if _TABLET.search(user_agent):
        return Device.tablet
    if _MOBILE.search(user_agent):
        return Device.mobile
    return Device.desktop


def region_code(value: str) -> str | None:
    """``value`` as a region code (lower-cased), or None when it is not one."""
    code = value.strip().lower()
    return code if _REGION.fullmatch(code) else None


class RegionTable:
    """Address ranges to regions; a look-up tries the longest prefixes first (≤ 33 / 129 dict probes)."""

    def __init__(self, lines: Sequence[str], *, key: str = "search.region_ranges") -> None:
        self._v4: dict[int, dict[int, str]] = {}
        self._v6: dict[int, dict[int, str]] = {}
        for line in lines:
            parts = line.split()
            region = region_code(parts[1]) if len(parts) == 2 else None
            try:
                net = ipaddress.ip_network(parts[0], strict=False) if parts else None
            except ValueError:
                net = None
            if net is None or region is None:
                raise ConfigError(key, line, '"CIDR region" lines, e.g. "10.1.0.0/16 moscow"')
            table = self._v4 if net.version == 4 else self._v6
            table.setdefault(net.prefixlen, {})[int(net.network_address)] = region
        self._v4_lengths = sorted(self._v4, reverse=True)
        self._v6_lengths = sorted(self._v6, reverse=True)

    def lookup(self, address: str | None) -> str | None:
        if not address:
            return None
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return None
        if ip.version == 6 and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        table, lengths, bits = (
            (self._v4, self._v4_lengths, 32) if ip.version == 4 else (self._v6, self._v6_lengths, 128)
        )
        value = int(ip)
        for length in lengths:
            region = table[length].get(value >> (bits - length) << (bits - length))
            if region is not None:
                return region
        return None

    def region(self, header_value: str | None, address: str | None) -> str:
        """The region of a request: the trusted header's, else the table's, else ``unknown``."""
        if header_value and (code := region_code(header_value)) is not None:
            return code
        return self.lookup(address) or UNKNOWN_REGION
