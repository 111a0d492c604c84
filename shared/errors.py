"""One error taxonomy for turbocubes (docs/conventions.md rule 6).

Every error says whether it is worth retrying. The runtime reads
``retriable`` (and ``retry_after``) to decide between another attempt
and the dead-letter queue; nothing else inspects exception types.

    TurbocubesError                      retriable?
    ├── ConfigError                      no   a bad key/value; names the key and what was expected
    ├── ContractError                    no   a message that does not match its topic's schema
    │   └── PublishContractError         no   *we* built an invalid message: a bug, raised loudly
    ├── Reject                           no   a handler refuses a message (bad data) -> DLQ at once
    │   ├── OffloadTimeout               no   partner content's work ran past its deadline in a worker process
    │   └── OffloadFailed                no   ... or its worker process died on it (shared/offload.py)
    ├── TransientError                   yes  try again later (may carry retry_after seconds)
    │   ├── BusUnavailable               yes* the broker / embedded log cannot be reached
    │   ├── StoreUnavailable             yes* the database cannot be reached
    │   ├── BlobUnavailable              yes* S3 / the file CDN cannot be reached
    │   └── OffloadClosed                yes  the worker processes were closed (the process is stopping)

    * an *outage* (``outage = True``): our own infrastructure is down, the message is fine.
      The runtime retries it in place for as long as the outage lasts, never spending its
      attempts and never dead-lettering it: an outage longer than the retry budget must not
      send healthy messages to the DLQ.
    ├── CommitOrderError                 no   a committed offset would move backwards: a runtime bug
    ├── BlockedAddressError              no   SSRF guard refused an address or scheme
    └── NotFound                         no   a thing that was asked for does not exist

Errors that are not ``TurbocubesError`` (a ``KeyError`` in a handler, say)
are treated as *transient* by the runtime: they are retried with backoff
and dead-lettered only when the attempts run out, because a crash is more
often a bug or an outage than bad data.
"""

from __future__ import annotations

__all__ = [
    "BlobUnavailable",
    "BlockedAddressError",
    "BusUnavailable",
    "CommitOrderError",
    "ConfigError",
    "ContractError",
    "NotFound",
    "OffloadClosed",
    "OffloadFailed",
    "OffloadTimeout",
    "PublishContractError",
    "Reject",
    "StoreUnavailable",
    "TransientError",
    "TurbocubesError",
    "is_outage",
    "is_retriable",
]


class TurbocubesError(Exception):
    """Base of every error turbocubes raises on purpose."""

    retriable: bool = False

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: seconds the caller should wait before trying again, when the source said so
        self.retry_after = retry_after


class ConfigError(TurbocubesError):
    """A configuration value is wrong. The message names the key, the value and what was expected."""

    def __init__(self, key: str, value: object, expected: str, choices: list[str] | None = None) -> None:
        text = f"config {key}={value!r}: expected {expected}"
        if choices:
            text += f" (valid: {', '.join(choices)})"
        super().__init__(text)
        self.key = key
        self.value = value
        self.expected = expected
        self.choices = choices or []


class ContractError(TurbocubesError):
    """A message does not satisfy its topic's schema."""


class PublishContractError(ContractError):
    """We tried to publish an invalid message: a programming error, never dead-lettered."""


class Reject(TurbocubesError):
    """A handler refuses a message because of its content. It goes to the DLQ at once."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OffloadTimeout(Reject):
    """Work on partner content ran past its deadline in a worker process, which was killed: the same
    input would take as long again (``shared/offload.py``)."""

    def __init__(self, what: str, deadline_s: float) -> None:
        super().__init__(f"{what} took longer than {deadline_s:g}s in a worker process, which was stopped")
        self.deadline_s = deadline_s


class OffloadFailed(Reject):
    """The worker process doing work on partner content ended before it answered (``shared/offload.py``)."""


class TransientError(TurbocubesError):
    """Something outside us failed for now; the same work may succeed later."""

    retriable = True
    #: our own infrastructure is down (not this message's fault): wait it out, never dead-letter
    outage = False


class BusUnavailable(TransientError):
    """The message bus cannot be reached."""

    outage = True


class StoreUnavailable(TransientError):
    """A store (SQLite / PostgreSQL) cannot be reached."""

    outage = True


class BlobUnavailable(TransientError):
    """The blob store / CDN cannot be reached."""

    outage = True


class OffloadClosed(TransientError):
    """The worker processes were closed (the process is stopping): the work did not run to its end."""


class CommitOrderError(TurbocubesError):
    """A committed offset would go backwards. Raised by the runtime, never swallowed."""


class BlockedAddressError(TurbocubesError):
    """The SSRF guard refused a URL: its scheme or its resolved address is not allowed."""


class NotFound(TurbocubesError):
    """The thing asked for does not exist."""


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says our own infrastructure is down (see the module docstring)."""
    return isinstance(exc, TransientError) and exc.outage


def is_retriable(exc: BaseException) -> bool:
    """Whether the runtime should try again after ``exc``.

    Our own errors say so themselves; foreign exceptions count as transient
    (see the module docstring for why).
    """
    if isinstance(exc, TurbocubesError):
        return exc.retriable
    return True
