"""Listening on a configured port: a busy one is a configuration error naming its key.

A second ``turbocubes up`` on one machine, or another program on 8081, used to
end in a 33-line traceback from asyncio that named no setting. Every server a
cube starts binds through ``listen``: an address in use (or not ours to bind)
becomes one ``ConfigError`` line that says which key to change, and how.
"""

from __future__ import annotations

import errno
from collections.abc import Awaitable, Callable

from shared.errors import ConfigError

__all__ = ["listen"]

_BIND_ERRORS = {
    errno.EADDRINUSE: "the port is in use (another turbocubes already running? stop it, or pick another port)",
    errno.EACCES: "binding it is not allowed (a port under 1024 needs privileges)",
    errno.EADDRNOTAVAIL: "the address is not one of this machine's",
}


async def listen(start: Callable[[], Awaitable[None]], *, key: str, host: str, port: int) -> None:
    """``await start()``; a failed bind -> ``ConfigError`` naming ``key`` (``section.name``) and its variable."""
    try:
        await start()
    except OSError as exc:
        why = _BIND_ERRORS.get(exc.errno or 0)
        if why is None:
            raise
        env = "TURBOCUBES_" + key.upper().replace(".", "_")
        raise ConfigError(
            key, port, f"a port free on {host}: {why}; set {key} (or {env}), 0 for any free port"
        ) from None
