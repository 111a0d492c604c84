"""The one content hash and its format (docs/architecture.md section 3: dedupe by hash; docs/conventions.md rule 18).

Whatever decides "unchanged / changed" -- the parser's items and feed bodies,
the scheduler's view of a feed, the autoparser's pages -- hashes with this
module, so every stored hash reads the same way: ``xxh3:<32 hex digits>``.

xxh3-128: about ten times faster than sha256 here and, at 128 bits,
collision-free for any catalog we will see. The prefix names the algorithm
in the stored value, so a future change of hash cannot be mistaken for an edit
(a value without it is simply "different": one extra publication, never a
missed one). It is not a security hash: nothing an attacker gains from a
collision (the CDN keys its objects by sha256 for that reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import xxhash

__all__ = ["HASH_PREFIX", "body_hash", "content_hash", "file_hash"]

#: bytes read at a time by ``file_hash``: memory stays at this whatever the file's size
_CHUNK = 1024 * 1024

HASH_PREFIX = "xxh3:"
#: what a source stores as the hash of a URL it removed (a tombstone): removing it again is "unchanged",
#: publishing it again is a change (no content hash has this form)
TOMBSTONE = "tombstone"
#: a separator that normalized text never contains (whitespace is squashed, controls are not kept)
_SEP = "\x1f"


def content_hash(fields: Sequence[str]) -> str:
    """The hash of a document's normalized fields, in a fixed order (the caller's normalization)."""
    return HASH_PREFIX + xxhash.xxh3_128_hexdigest(_SEP.join(fields).encode("utf-8", "surrogatepass"))


def body_hash(body: bytes) -> str:
    """The hash of a whole fetched body (a feed, a page), byte for byte."""
    return HASH_PREFIX + xxhash.xxh3_128_hexdigest(body)


def file_hash(path: Path) -> str:
    """``body_hash`` of the file at ``path``, read a chunk at a time (a body too big to hold whole)."""
    digest = xxhash.xxh3_128()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return HASH_PREFIX + digest.hexdigest()
