"""shared.hashing.file_hash: a body hashed from its file, a chunk at a time, equals its body_hash."""

from __future__ import annotations

from pathlib import Path

from shared.hashing import body_hash, file_hash


def test_file_hash_is_the_body_hash_of_the_file(tmp_path: Path) -> None:
    data = bytes(range(256)) * 10_000  # 2.5 MB: several chunks
    path = tmp_path / "body"
    path.write_bytes(data)
    assert file_hash(path) == body_hash(data)
    path.write_bytes(b"")
    assert file_hash(path) == body_hash(b"")
