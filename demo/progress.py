"""The demo's progress display: pure formatting, the "first pass done" rule, the terminal (docs/architecture.md s.8).

Per source (news RSS, news Turbo, shop YML, blog autoparser) the display shows
documents parsed, documents waiting in Delay for their images, and Turbo
pages written, out of the pages the source should produce.

During the first pass a terminal shows a block of lines redrawn in place; a
plain log (not a tty) gets a compact line only when a number changed, so a
CI log or a ``docker logs`` stays short. After the first pass both get that
compact line, when a number changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

__all__ = ["Display", "FirstPass", "SourceProgress", "format_board", "format_line", "format_row"]

#: no number changed for this long, nothing waits for images and every feed was fetched ->
#: the first pass is over even if some pages never came (a refused page must not hang the demo)
SETTLE_S = 8.0
#: the first pass is declared over after this long whatever the numbers say (the brief's ~90 s)
TIMEOUT_S = 90.0


@dataclass(frozen=True, slots=True)
class SourceProgress:
    label: str
    #: pages the source should produce
    expected: int
    parsed: int
    waiting: int
    written: int
    #: the feed (or the blog's pages) was fetched at least once
    fetched: bool
    #: the feed's last fetch or parse error, if any
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.written >= self.expected and self.waiting == 0


def format_row(p: SourceProgress, label_width: int = 18, num_width: int = 0) -> str:
    """One source on one line: ``news RSS   parsed 12/12  waiting for images  0  written 12/12  done``.

    Numbers are right-aligned to ``num_width`` digits (at least the digits of ``expected``), so the
    rows of a board line up.
    """
    if p.complete:
        state = "done"
    elif p.error:
        state = f"error: {p.error[:80]}"
    elif not p.fetched:
        state = "fetching..."
    else:
        state = "working..."
    width = max(num_width, len(str(p.expected)))
    return (
        f"  {p.label:<{label_width}} parsed {p.parsed:>{width}}/{p.expected:<{width}}"
        f"  waiting for images {p.waiting:>{width}}"
        f"  written {p.written:>{width}}/{p.expected:<{width}}  {state}"
    )


def format_board(rows: Sequence[SourceProgress], elapsed_s: float) -> list[str]:
    """The multi-line block a terminal shows: a heading, then one row per source."""
    written = sum(r.written for r in rows)
    expected = sum(r.expected for r in rows)
    head = f"demo: {written}/{expected} Turbo pages written after {elapsed_s:.1f} s"
    width = max((len(str(r.expected)) for r in rows), default=1)
    return [head, *(format_row(r, num_width=width) for r in rows)]


def format_line(rows: Sequence[SourceProgress]) -> str:
    """Every source on one line (plain logs and the status line after the first pass)."""
    written = sum(r.written for r in rows)
    expected = sum(r.expected for r in rows)
    waiting = sum(r.waiting for r in rows)
    parts = []
    for r in rows:
        part = f"{r.label} {r.written}/{r.expected}"
        if r.error and not r.complete:
            part += " (error)"
        parts.append(part)
    return f"demo: {written}/{expected} pages written, {waiting} waiting for images | " + ", ".join(parts)


def _numbers(rows: Sequence[SourceProgress]) -> tuple[tuple[int, int, int, bool], ...]:
    return tuple((r.parsed, r.waiting, r.written, r.fetched) for r in rows)


class FirstPass:
    """Decides when the first pass is done (see ``SETTLE_S`` and ``TIMEOUT_S``); feed it each snapshot."""

    def __init__(self, started_at: float, *, settle_s: float = SETTLE_S, timeout_s: float = TIMEOUT_S) -> None:
        self.started_at = started_at
        self.settle_s = settle_s
        self.timeout_s = timeout_s
        self._last: tuple[tuple[int, int, int, bool], ...] | None = None
        self._changed_at = started_at
        self.timed_out = False

    def update(self, rows: Sequence[SourceProgress], now: float) -> bool:
        numbers = _numbers(rows)
        if numbers != self._last:
            self._last = numbers
            self._changed_at = now
        if rows and all(r.complete for r in rows):
            return True
        settled = (
            now - self._changed_at >= self.settle_s
            and all(r.fetched for r in rows)
            and sum(r.waiting for r in rows) == 0
        )
        if settled:
            return True
        if now - self.started_at >= self.timeout_s:
            self.timed_out = True
            return True
        return False


class Display:
    """Writes the board to ``out``: redrawn in place on a tty, a line per change otherwise."""

    def __init__(self, out: TextIO, *, tty: bool | None = None) -> None:
        self.out = out
        self.tty = out.isatty() if tty is None else tty
        self._drawn = 0  # lines of the board currently on screen (tty)
        self._last_line = ""

    def board(self, rows: Sequence[SourceProgress], elapsed_s: float) -> None:
        if self.tty:
            lines = format_board(rows, elapsed_s)
            # move up over the previous board, clearing each line, then draw the new one
            up = f"\x1b[{self._drawn}F" if self._drawn else ""
            self.out.write(up + "".join(f"\x1b[2K{line}\n" for line in lines))
            self._drawn = len(lines)
        else:
            line = format_line(rows)
            if line != self._last_line:
                self.out.write(f"{line}\n")
                self._last_line = line
        self.out.flush()

    def message(self, text: str) -> None:
        """Text that stays (the board is not redrawn over it)."""
        self.out.write(text + "\n")
        self.out.flush()
        self._drawn = 0

    def status(self, rows: Sequence[SourceProgress]) -> None:
        """The status after the first pass: one line, printed when a number changed.

        Printed, not redrawn in place, even on a tty: the launcher and the cubes' logs
        write to the same terminal, and a line redrawn in place would be torn by them.
        """
        line = format_line(rows)
        if line != self._last_line:
            self.out.write(f"{line}\n")
            self.out.flush()
            self._last_line = line
