"""Statuses in the words a webmaster uses, each with its explanation (docs/architecture.md section 10).

The stores keep short codes (``not_modified``, ``http_4xx``, ``slowed``); a
person reads a word and one sentence saying what it means and what to do.
This table is the one place that says it: the console, the status page, the
API (``result_text``) and the CLI read it, so the same result is never called
two things. A page's states have their own table in ``shared/pages/state.py``.

``tone`` is the colour a screen gives it: ``ok`` (nothing to do), ``warn``
(works, with something to look at), ``bad`` (does not work), ``quiet``
(nothing yet).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LANE_STATES", "RESULTS", "TASK_STATUSES", "Word", "counted", "lane_word", "result_word", "task_word"]


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    explanation: str
    tone: str


#: the outcome of a feed's last fetch or read: ``FeedStatus.last_result`` and ``FetchReport.result``
RESULTS: dict[str, Word] = {
    "ok": Word("Fetched", "The feed answered; its items are being read.", "ok"),
    "parsed": Word("Read", "The feed was fetched and every item read.", "ok"),
    "partial": Word(
        "Read, some items refused", "The feed was read, but some items cannot become pages: see Problems.", "warn"
    ),
    "parse_error": Word(
        "Cannot be read", "The feed was fetched but cannot be read as a feed: see Problems for where.", "bad"
    ),
    "conflict": Word(
        "Items taken over",
        "A source of higher priority now publishes some of this feed's addresses: see Problems.",
        "warn",
    ),
    "unchanged": Word(
        "Unchanged", "The feed answered exactly what it answered last time: nothing new to publish.", "ok"
    ),
    "not_modified": Word(
        "Not changed", "The feed said it has not changed since the last fetch (HTTP 304): nothing new.", "ok"
    ),
    "robots_denied": Word(
        "Forbidden by robots.txt", "Your robots.txt does not let our crawler fetch this URL: allow it.", "bad"
    ),
    "blocked_address": Word(
        "Address not allowed",
        "The host resolves to a private or reserved address, which our crawler never fetches.",
        "bad",
    ),
    "bad_url": Word("Bad address", "The URL cannot be fetched as it is written: check it.", "bad"),
    "dns_error": Word("Host not found", "The host name does not resolve: check its DNS records.", "bad"),
    "connect_error": Word("Cannot connect", "The server refused or dropped the connection; we try again later.", "bad"),
    "timeout": Word("Too slow", "The server did not answer in time; we try again later.", "bad"),
    "too_large": Word("Too large", "The answer is larger than we read: split the feed.", "bad"),
    "too_many_redirects": Word(
        "Too many redirects", "The URL redirects too many times: point it at the feed itself.", "bad"
    ),
    "redirect_loop": Word("Redirect loop", "The URL redirects in a circle: fix the redirect.", "bad"),
    "http_4xx": Word(
        "Refused or not found", "The URL answered an HTTP 4xx error: check that it is right and public.", "bad"
    ),
    "http_5xx": Word("Server error", "Your server answered an HTTP 5xx error; we try again later.", "bad"),
    "throttled": Word(
        "Asked us to wait",
        "The server answered 429 or 503 with Retry-After: we wait as it asked, then fetch again.",
        "warn",
    ),
}
_NEVER = Word("Not fetched yet", "The first fetch is on its way.", "quiet")

#: a host's crawl lane (``cubes/frontend/status/view.LaneView.state``)
LANE_STATES: dict[str, Word] = {
    "paused": Word(
        "Paused",
        "The host asked us to wait (429 or 503 with Retry-After) or failed again and again: we fetch again "
        "at the time shown.",
        "bad",
    ),
    "slowed": Word(
        "Fetching gently",
        "The host answered slowly or asked us to slow down, so we fetch it below its usual rate; we speed "
        "up again while it answers well.",
        "warn",
    ),
    "fetching": Word("Fetching", "Requests to the host are under way, within its rate.", "ok"),
    "ready": Word("Ready", "Nothing is being fetched from the host right now; the next fetch goes at once.", "ok"),
}

#: an upload task or a check (``TaskStatus``)
TASK_STATUSES: dict[str, Word] = {
    "queued": Word("Waiting", "Accepted; it is fetched and read in a moment.", "quiet"),
    "processing": Word("Reading", "Its items are being read.", "quiet"),
    "done": Word("Read", "Every item was read: see what became of each below.", "ok"),
    "failed": Word("Failed", "Nothing could be read: see Problems.", "bad"),
}


def result_word(result: str | None) -> Word:
    """The word for a fetch's or a feed's result (a code we do not know is shown as it is)."""
    if result is None:
        return _NEVER
    return RESULTS.get(result) or Word(result.replace("_", " "), "", "warn")


def lane_word(state: str) -> Word:
    return LANE_STATES.get(state) or Word(state, "", "quiet")


def task_word(status: str) -> Word:
    return TASK_STATUSES.get(status) or Word(status, "", "quiet")


def counted(n: int, one: str, many: str | None = None) -> str:
    """``1 feed``, ``2 feeds``: a number with its noun agreeing."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"
