"""The progress display: numbers formatted right, the first-pass rule, tty and plain-log output."""

from __future__ import annotations

import io

from demo.content import build_site, draw_pictures
from demo.progress import Display, FirstPass, SourceProgress, format_board, format_line, format_row
from demo.site import DemoSite
from shared.config import Settings


def _row(
    label: str = "news RSS",
    expected: int = 12,
    parsed: int = 0,
    waiting: int = 0,
    written: int = 0,
    fetched: bool = True,
    error: str | None = None,
) -> SourceProgress:
    return SourceProgress(label, expected, parsed, waiting, written, fetched, error)


def test_row_shows_each_number_against_the_expected_count() -> None:
    line = format_row(_row(parsed=7, waiting=3, written=4))
    assert "parsed  7/12" in line
    assert "waiting for images  3" in line
    assert "written  4/12" in line
    assert line.endswith("working...")
    assert format_row(_row(parsed=12, written=12)).endswith("done")
    assert format_row(_row(fetched=False)).endswith("fetching...")
    assert "error: HTTP 500" in format_row(_row(error="HTTP 500"))
    # a written page still waiting for a newer version's images is not done
    assert not format_row(_row(parsed=12, written=12, waiting=1)).endswith("done")


def test_rows_of_a_board_line_up() -> None:
    rows = [_row("news RSS", 12, 12, 0, 12), _row("shop YML", 20, 5, 5, 0), _row("blog (autoparser)", 8)]
    assert "parsed 0/8" in format_row(rows[2])  # alone: as wide as its own numbers
    board = format_board(rows, 3.25)
    assert board[0] == "demo: 12/40 Turbo pages written after 3.2 s"
    for column in ("parsed", "waiting", "written"):  # one column per number for every source
        assert len({line.index(column) for line in board[1:]}) == 1
    assert "parsed  5/20" in board[2]
    assert "written  0/20" in board[2]


def test_one_line_summary() -> None:
    rows = [_row("news RSS", 12, 12, 0, 12), _row("shop YML", 20, 20, 2, 18, error="x")]
    assert format_line(rows) == (
        "demo: 30/32 pages written, 2 waiting for images | news RSS 12/12, shop YML 18/20 (error)"
    )


def test_first_pass_is_done_when_every_page_is_written() -> None:
    fp = FirstPass(100.0)
    assert not fp.update([_row(parsed=12, waiting=2, written=10)], 101.0)
    assert fp.update([_row(parsed=12, written=12)], 102.0)
    assert not fp.timed_out


def test_first_pass_settles_when_nothing_moves_and_nothing_waits() -> None:
    fp = FirstPass(0.0, settle_s=8.0, timeout_s=90.0)
    refused = _row(parsed=10, written=10)  # 2 pages never came (refused), nothing waits
    assert not fp.update([refused], 1.0)
    assert not fp.update([refused], 8.5)  # 7.5 s since the last change
    assert fp.update([refused], 9.0)
    assert not fp.timed_out
    # waiting for images, or a feed not fetched yet, never settles: only the timeout ends it
    fp = FirstPass(0.0, settle_s=8.0, timeout_s=90.0)
    assert not fp.update([_row(parsed=10, written=8, waiting=2)], 1.0)
    assert not fp.update([_row(parsed=10, written=8, waiting=2)], 50.0)
    assert not fp.update([_row(fetched=False)], 89.0)
    assert fp.update([_row(fetched=False)], 90.0)
    assert fp.timed_out


def test_plain_log_prints_a_line_only_when_numbers_change() -> None:
    out = io.StringIO()
    d = Display(out, tty=False)
    d.board([_row(parsed=1)], 0.5)
    d.board([_row(parsed=1)], 1.0)  # elapsed time alone is no change
    d.board([_row(parsed=2, written=1)], 1.5)
    d.status([_row(parsed=2, written=1)])
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert "\x1b" not in out.getvalue()
    assert lines[1] == "demo: 1/12 pages written, 0 waiting for images | news RSS 1/12"


def test_tty_redraws_the_board_in_place() -> None:
    out = io.StringIO()
    d = Display(out, tty=True)
    rows = [_row(), _row("shop YML", 20)]
    d.board(rows, 0.5)
    first = out.getvalue()
    assert first.count("\n") == 3
    assert first.startswith("\x1b[2Kdemo: 0/32")  # nothing drawn yet: no cursor movement
    d.board(rows, 1.0)
    assert out.getvalue()[len(first) :].startswith("\x1b[3F")  # back up over the 3 lines drawn
    d.message("done")
    after = len(out.getvalue())
    d.status(rows)
    d.status(rows)  # unchanged: not printed again, and never redrawn over other output
    assert out.getvalue()[after:] == format_line(rows) + "\n"


def test_the_summary_says_when_the_demos_host_has_its_turbo_pages_switched_off() -> None:
    """A demo whose host a webmaster switched off printed '52/60 Turbo pages written' and no reason."""
    demo = DemoSite(Settings())
    demo.site = build_site("http://127.0.0.1:8080", draw_pictures())
    demo.rows = [SourceProgress("blog (autoparser)", 8, 8, 0, 0, True)]
    off = demo._done_text(3.0, False, turbo_off=True)
    assert "0/8 Turbo pages written" in off
    assert "Turbo pages of 127.0.0.1 are switched off by the webmaster who holds it" in off
    assert "switched off" not in demo._done_text(3.0, False)
