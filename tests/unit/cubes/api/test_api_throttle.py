"""Token buckets and the bulkhead, on a ManualClock: exact Retry-After, no sleeping."""

from __future__ import annotations

import pytest

from cubes.api.throttle import Bulkhead, TenantBuckets, TokenBucket, retry_after_header
from shared.clock import ManualClock


def test_bucket_gives_its_burst_then_says_exactly_when_the_next_token_comes() -> None:
    clock = ManualClock()
    bucket = TokenBucket(rate=2.0, capacity=3, clock=clock)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take() == pytest.approx(0.5)
    clock.advance(0.25)
    assert bucket.take() == pytest.approx(0.25)  # a refused take costs nothing
    clock.advance(0.25)
    assert bucket.take() == 0.0
    clock.advance(100)
    assert bucket.peek() == 3.0  # never more than the capacity


def test_a_request_bigger_than_the_bucket_passes_on_a_full_bucket_and_leaves_debt() -> None:
    clock = ManualClock()
    bucket = TokenBucket(rate=100.0, capacity=100, clock=clock)
    assert bucket.take(250) == 0.0
    assert bucket.peek() == -150.0
    assert bucket.take(250) == pytest.approx(2.5)  # wait for a full bucket again: 250 / 100 s
    clock.advance(2.5)
    assert bucket.take(250) == 0.0


def test_reconfigure_keeps_tokens_so_no_free_burst_is_handed_out() -> None:
    clock = ManualClock()
    bucket = TokenBucket(rate=1.0, capacity=10, clock=clock)
    for _ in range(8):
        bucket.take()
    bucket.reconfigure(rate=10.0, capacity=100)
    assert bucket.peek() == 2.0
    bucket.reconfigure(rate=1.0, capacity=1)
    assert bucket.peek() == 1.0  # clipped down at once
    with pytest.raises(ValueError, match="rate > 0"):
        bucket.reconfigure(rate=0, capacity=1)


def test_tenant_buckets_refuse_without_spending_and_report_ratelimit_headers() -> None:
    clock = ManualClock()
    buckets = TenantBuckets(rps=1.0, burst=2, bytes_per_s=1000.0, clock=clock)
    first = buckets.admit(600)
    assert first.allowed
    assert first.headers() == {"RateLimit-Policy": '"default";q=2;w=2', "RateLimit": '"default";r=1;t=1'}
    refused = buckets.admit(600)  # 400 bytes left: wait 0.2 s for 600
    assert not refused.allowed
    assert refused.retry_after == pytest.approx(0.2)
    assert refused.headers()["Retry-After"] == "1"
    assert buckets.requests.peek() == 1.0  # the byte refusal did not eat a request token
    small = buckets.admit(100)
    assert small.allowed
    assert small.remaining == 0
    no_requests = buckets.admit(0)
    assert not no_requests.allowed
    assert no_requests.retry_after == pytest.approx(1.0)
    assert buckets.bytes.peek() == 300.0  # the request refusal did not eat bytes


def test_retry_after_rounds_up_to_whole_seconds() -> None:
    assert retry_after_header(0.01) == "1"
    assert retry_after_header(1.0) == "1"
    assert retry_after_header(1.2) == "2"
    assert retry_after_header(0.0) == "1"


def test_bulkhead_refuses_over_the_cap_and_frees_on_leave() -> None:
    b = Bulkhead(2)
    assert b.try_enter()
    assert b.try_enter()
    assert not b.try_enter()
    b.leave()
    assert b.try_enter()


def test_bulkhead_caps_each_tenant_at_its_share() -> None:
    b = Bulkhead(8, share=0.25)
    assert b.tenant_limit == 2
    for _ in range(2):
        assert b.try_enter()
        assert b.try_enter_tenant("a")
    assert b.try_enter()
    assert not b.try_enter_tenant("a")  # a's share is taken; the caller gives its global slot back
    b.leave()
    assert b.try_enter()
    assert b.try_enter_tenant("b")  # another tenant still finds room
    b.leave_tenant("a")
    assert b.tenant_in_flight("a") == 1
    b.leave_tenant("a")
    assert b.tenant_in_flight("a") == 0
    assert "a" not in b._tenants  # counts are dropped at zero: the table holds only busy tenants
    assert Bulkhead(2, share=0.1).tenant_limit == 1  # never below one request


def test_bulkhead_refuses_a_share_outside_zero_to_one() -> None:
    for share in (0.0, -1.0, 1.5):
        try:
            Bulkhead(8, share=share)
        except ValueError:
            continue
        raise AssertionError(f"share {share} accepted")
