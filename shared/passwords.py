"""Console passwords, kept as scrypt hashes (docs/architecture.md section 6, "Team access").

Why scrypt, and hashlib's: a password is a low-entropy secret, so its hash must be slow and
memory-hard to make a stolen table expensive to guess through; scrypt is that (RFC 7914), and
``hashlib.scrypt`` is OpenSSL's, in the standard library: no new dependency to keep, and it releases
the GIL, so a hash runs in a thread beside the event loop. The cost is OWASP's floor for scrypt
(N=131,072, r=8, p=1: 128 MiB and a few hundred milliseconds per hash); it is written into each hash,
so raising it later leaves the hashes made before readable.

A hash is ``scrypt$N$r$p$salt$key`` (salt and key in unpadded url-safe base64; 16-byte salt, 32-byte
key). At most ``_CONCURRENT`` hashes run at once (each takes 128 MiB), and a sign-in for a login
nobody has still spends one hash (``dummy_verify``), so the answer's time does not tell who exists.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["PASSWORD_MAX", "PASSWORD_MIN", "WeakPassword", "check_password", "dummy_verify", "hash_password", "verify"]

#: OWASP's minimum cost for scrypt: N (CPU and memory), r (block size), p (parallelism)
_N, _R, _P = 131_072, 8, 1  # N: 2 to the 17th
#: scrypt needs 128 * N * r bytes; OpenSSL refuses past maxmem, so leave it room
_MAXMEM = 256 * 1024 * 1024
_SALT, _KEY = 16, 32
#: hashes at once in this process: two cores, 128 MiB each
_CONCURRENT = 2
#: shorter is guessable; longer is refused before hashing (scrypt reads all of it)
PASSWORD_MIN = 10
PASSWORD_MAX = 1024

#: taken inside the worker thread, so it holds across event loops (each test has its own)
_T = TypeVar("_T")
_slots = threading.BoundedSemaphore(_CONCURRENT)


class WeakPassword(ValueError):
    """A password refused before it is hashed: its message says why."""


def check_password(password: str) -> None:
    if len(password) < PASSWORD_MIN:
        raise WeakPassword(f"a password needs at least {PASSWORD_MIN} characters")
    if len(password) > PASSWORD_MAX:
        raise WeakPassword(f"a password has at most {PASSWORD_MAX} characters")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _derive(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8", "surrogatepass"), salt=salt, n=n, r=r, p=p, maxmem=_MAXMEM, dklen=_KEY
    )


def _hash_sync(password: str) -> str:
    salt = secrets.token_bytes(_SALT)
    return f"scrypt${_N}${_R}${_P}${_b64(salt)}${_b64(_derive(password, salt, _N, _R, _P))}"


def _verify_sync(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, key = stored.split("$")
        params = int(n), int(r), int(p)
    except ValueError:
        return False
    if kind != "scrypt" or params[0] > _N or params[1] > _R or params[2] > _P:
        return False  # not ours, or a cost past what this process spends
    return hmac.compare_digest(_derive(password, _unb64(salt), *params), _unb64(key))


def _bounded(fn: Callable[..., _T], *args: str) -> _T:
    with _slots:
        return fn(*args)


async def _run(fn: Callable[..., _T], *args: str) -> _T:
    return await asyncio.to_thread(_bounded, fn, *args)


async def hash_password(password: str) -> str:
    """The password's hash (``check_password`` first), made in a thread."""
    check_password(password)
    return await _run(_hash_sync, password)


async def verify(password: str, stored: str) -> bool:
    """Whether ``password`` is the one ``stored`` was made of (constant-time compare), in a thread."""
    if not password or len(password) > PASSWORD_MAX:
        return False
    return await _run(_verify_sync, password, stored)


_DUMMY: str | None = None


async def dummy_verify(password: str) -> None:
    """Spend what ``verify`` spends, for a login nobody has (so its answer takes as long)."""
    global _DUMMY
    if _DUMMY is None:
        _DUMMY = await hash_password("x" * PASSWORD_MIN)
    await verify(password[:PASSWORD_MAX] or "x", _DUMMY)
