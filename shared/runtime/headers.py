"""The headers the runtime writes on delayed retries and dead letters (docs/conventions.md rules 7 and 8).

What a failure has cost so far travels with the message, not in process
memory, so a restart or a rebalance does not reset it: the attempt count, the
first failure's time, when a delayed retry is due, and where the message came
from (its original topic, partition and offset, the consumer group). A dead
letter keeps the original key and value; these headers say why it is there.
``turbocubes dlq replay`` drops them all (``HEADERS.ALL``) so the message
starts again at attempt 1.
"""

from __future__ import annotations

from shared.bus.base import Consumed, header

__all__ = ["HEADERS", "MAX_ERROR_BYTES", "failure_headers", "origin_of", "retry_headers"]

#: an error text in a header is cut to this many bytes (Kafka headers are not for essays)
MAX_ERROR_BYTES = 2000


class HEADERS:
    """Header names the runtime writes on retries and dead letters (docs/conventions.md rule 8)."""

    attempt = "tc-attempt"
    first_failure = "tc-first-failure"
    not_before = "tc-not-before"
    origin_topic = "tc-origin-topic"
    origin_partition = "tc-origin-partition"
    origin_offset = "tc-origin-offset"
    error_class = "tc-error-class"
    error = "tc-error"
    group = "tc-group"

    ALL = frozenset(
        {attempt, first_failure, not_before, origin_topic, origin_partition, origin_offset, error_class, error, group}
    )


def origin_of(record: Consumed, retry_topic: str) -> tuple[str, int]:
    """The topic a record's message was first published to, and which attempt this delivery is."""
    if record.topic != retry_topic:
        return record.topic, 1
    origin = (header(record.headers, HEADERS.origin_topic) or b"").decode() or record.topic
    return origin, int(header(record.headers, HEADERS.attempt) or b"1")


def failure_headers(
    record: Consumed, *, origin: str, attempt: int, exc: BaseException, group: str, retry_topic: str, now: float
) -> list[tuple[str, bytes]]:
    """The record's own headers plus the runtime's account of this failure (a dead letter's headers)."""
    headers = record.headers
    kept = [(k, v) for k, v in headers if k not in HEADERS.ALL]
    first = header(headers, HEADERS.first_failure) or repr(now).encode()
    if record.topic == retry_topic:  # a retried record names its origin already
        o_part = header(headers, HEADERS.origin_partition) or b""
        o_off = header(headers, HEADERS.origin_offset) or b""
    else:
        o_part, o_off = str(record.partition).encode(), str(record.offset).encode()
    return [
        *kept,
        (HEADERS.origin_topic, origin.encode()),
        (HEADERS.origin_partition, o_part),
        (HEADERS.origin_offset, o_off),
        (HEADERS.group, group.encode()),
        (HEADERS.attempt, str(attempt).encode()),
        (HEADERS.first_failure, first),
        (HEADERS.error_class, type(exc).__name__.encode()),
        (HEADERS.error, str(exc).encode()[:MAX_ERROR_BYTES]),
    ]


def retry_headers(
    record: Consumed,
    *,
    origin: str,
    attempt: int,
    exc: BaseException,
    group: str,
    retry_topic: str,
    now: float,
    delay_s: float,
) -> tuple[tuple[str, bytes], ...]:
    """A delayed retry's headers: the failure's, with the next attempt and when it is due."""
    failed = failure_headers(
        record, origin=origin, attempt=attempt, exc=exc, group=group, retry_topic=retry_topic, now=now
    )
    return (
        *((k, v) for k, v in failed if k != HEADERS.attempt),
        (HEADERS.attempt, str(attempt + 1).encode()),
        (HEADERS.not_before, repr(now + delay_s).encode()),
    )
