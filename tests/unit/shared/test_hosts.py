"""shared.webmaster.hosts: what counts as the same host."""

from __future__ import annotations

import pytest

from shared.webmaster.hosts import HostScope, scope_for, www_alias


@pytest.mark.parametrize(
    ("host", "alias"),
    [
        ("example.com", "www.example.com"),
        ("www.example.com", "example.com"),
        ("news.example.com", "www.news.example.com"),
        ("www.news.example.com", "news.example.com"),
        ("www.com", None),  # not an alias of the top-level domain
        ("localhost", None),
        ("127.0.0.1", None),
        ("[::1]", None),
        ("", None),
    ],
)
def test_www_alias(host: str, alias: str | None) -> None:
    assert www_alias(host) == alias


def test_www_is_an_alias_only_when_the_tenant_verified_both() -> None:
    assert scope_for("a.test", ["a.test", "www.a.test"]) == HostScope("a.test", "www.a.test")
    assert scope_for("www.a.test", ["a.test", "www.a.test"]).admits("a.test")
    one = scope_for("a.test", ["a.test", "b.test"])
    assert one.admits("a.test")
    assert not one.admits("www.a.test")
    assert not one.admits("b.test")  # another verified host of the tenant is another site
    assert not one.admits("sub.a.test")


def test_a_tenant_without_the_host_verified_is_admitted_nowhere() -> None:
    lost = scope_for("a.test", ["www.a.test"])
    assert not lost.verified
    assert lost.alias == "www.a.test"
    assert not lost.admits("a.test")
    assert not lost.admits("www.a.test")
    assert "not verified for this tenant any more" in lost.refusal("a.test")


def test_a_source_without_a_tenant_publishes_its_own_host_only() -> None:
    op = scope_for("a.test", None)
    assert op.admits("a.test")
    assert not op.admits("www.a.test")
    assert "claim and verify www.a.test too" in op.refusal("www.a.test")
    assert "two hosts" not in op.refusal("evil.test")
