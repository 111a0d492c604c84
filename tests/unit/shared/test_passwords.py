"""Console passwords: scrypt hashes, salted, verified in constant time, bounded before hashing."""

from __future__ import annotations

import pytest

from shared import passwords


async def test_a_hash_verifies_its_password_only_and_is_salted() -> None:
    first = await passwords.hash_password("correct horse battery")
    second = await passwords.hash_password("correct horse battery")
    assert first != second  # a fresh salt each time
    assert first.startswith("scrypt$131072$8$1$")
    assert "correct" not in first
    assert await passwords.verify("correct horse battery", first)
    assert not await passwords.verify("correct horse batterY", first)
    assert not await passwords.verify("", first)
    assert not await passwords.verify("x" * (passwords.PASSWORD_MAX + 1), first)
    assert not await passwords.verify("correct horse battery", "md5$abc")
    # a cost past what this process spends is refused, not computed (a planted row cannot stall a sign-in)
    assert not await passwords.verify("correct horse battery", first.replace("$131072$", "$1048576$"))


@pytest.mark.parametrize("bad", ["short", "y" * (passwords.PASSWORD_MAX + 1)])
async def test_a_password_out_of_bounds_is_refused_before_hashing(bad: str) -> None:
    with pytest.raises(passwords.WeakPassword):
        await passwords.hash_password(bad)
