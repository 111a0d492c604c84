"""How a webhook proves it is ours and fresh (docs/architecture.md section 10, "Notifications").

Each POST carries ``X-Turbocubes-Timestamp`` (Unix seconds when it was sent) and
``X-Turbocubes-Signature: v1=<hex>``, the HMAC-SHA256 under the tenant's webhook secret of
``<timestamp>.<body>``: the timestamp is signed with the body, so a receiver that refuses a
timestamp older than a few minutes (``TOLERANCE_S``) refuses a replayed request, and one whose
body or timestamp was changed does not verify. ``verify`` is what a receiver does (the README
shows it; the tests' receiver calls it).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["SIGNATURE_HEADER", "TIMESTAMP_HEADER", "TOLERANCE_S", "new_secret", "sign", "verify"]

SIGNATURE_HEADER = "X-Turbocubes-Signature"
TIMESTAMP_HEADER = "X-Turbocubes-Timestamp"
#: a receiver refuses a signature older (or further ahead) than this: 5 minutes, as Stripe and Slack do
TOLERANCE_S = 300
#: bytes of randomness in a secret (256 bits)
_SECRET_BYTES = 32


def new_secret() -> str:
    """A fresh webhook secret, shown to its tenant once."""
    return "whsec_" + secrets.token_urlsafe(_SECRET_BYTES)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode("utf-8"), str(timestamp).encode("ascii") + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


def verify(secret: str, timestamp: str, signature: str, body: bytes, *, now: float) -> bool:
    """Whether a request's headers prove ``body`` was signed with ``secret`` within ``TOLERANCE_S`` of ``now``."""
    try:
        ts = int(timestamp)
    except ValueError:
        return False
    if abs(now - ts) > TOLERANCE_S:
        return False
    return hmac.compare_digest(sign(secret, ts, body), signature)
