"""What a fetch result tells the adaptive policy about the host (docs/architecture.md section 6)."""

from __future__ import annotations

from cubes.crawler.policy import Signal, SignalKind
from shared.http import FetchResult
from shared.messages import FetchStatus

__all__ = ["signal_for"]


def signal_for(result: FetchResult) -> Signal | None:
    """The policy signal of ``result``; None when the host never answered through no fault of its own."""
    latency = result.elapsed_s
    status = result.status
    if status is FetchStatus.throttled or result.http_status == 429:
        kind = SignalKind.throttled if result.http_status == 429 else SignalKind.unavailable
        return Signal(kind, latency, result.retry_after_s)
    if result.http_status == 503:
        return Signal(SignalKind.unavailable, latency, result.retry_after_s)
    if status is FetchStatus.http_5xx:
        return Signal(SignalKind.server_error, latency, result.retry_after_s)
    if status is FetchStatus.timeout:
        return Signal(SignalKind.timeout, latency)
    if status is FetchStatus.connect_error:
        return Signal(SignalKind.connect_error, latency)
    if status in (FetchStatus.blocked_address, FetchStatus.bad_url, FetchStatus.dns_error):
        return None
    return Signal(SignalKind.ok, latency)
