"""What partners entrust to us, sealed at rest (docs/architecture.md section 6, "secure by default").

A feed behind HTTP authentication gives us a password, and a feed behind an API gateway a header
value. Neither may sit in the store, a topic or a log in the clear: ``SecretBox`` seals them with
the operator's key (``secrets.key``; Fernet from the ``cryptography`` package: AES-128-CBC with an
HMAC-SHA256 over it, a timestamp and a random IV per token), and only the crawler opens them, for
the one request it sends. A token sealed under another key (the key was changed) does not open:
``Unsealable``, and the feed's webmaster is told to enter the credentials again.
"""

from __future__ import annotations

import base64
import os
from typing import Any

import orjson
from cryptography.fernet import Fernet, InvalidToken

from shared.config import Settings
from shared.errors import Reject

__all__ = ["NoKey", "SecretBox", "Unsealable", "new_key"]


class NoKey(Reject):
    """Something was to be sealed, but ``secrets.key`` is not set."""


class Unsealable(Reject):
    """A sealed token did not open: not ours, damaged, or sealed under an earlier key."""


def new_key() -> str:
    """A fresh ``secrets.key``: 32 random bytes, URL-safe base64."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode("ascii")


class SecretBox:
    """Seals a small JSON object into an opaque token, and opens it again."""

    def __init__(self, key: str) -> None:
        self._fernet = Fernet(key.encode("ascii")) if key else None

    @classmethod
    def from_settings(cls, settings: Settings) -> SecretBox:
        return cls(settings.secrets.key)

    @property
    def ready(self) -> bool:
        """Whether there is a key to seal with."""
        return self._fernet is not None

    def seal(self, value: dict[str, Any]) -> str:
        if self._fernet is None:
            raise NoKey("secrets.key is not set: credentials cannot be kept (the operator sets it once)")
        return self._fernet.encrypt(orjson.dumps(value)).decode("ascii")

    def open(self, token: str) -> dict[str, Any]:
        if self._fernet is None:
            raise Unsealable("secrets.key is not set: sealed credentials cannot be opened")
        try:
            opened = orjson.loads(self._fernet.decrypt(token.encode("ascii")))
        except (InvalidToken, ValueError, orjson.JSONDecodeError) as exc:
            raise Unsealable("the sealed credentials do not open with secrets.key (was the key changed?)") from exc
        if not isinstance(opened, dict):
            raise Unsealable("the sealed credentials are not an object")
        return opened
