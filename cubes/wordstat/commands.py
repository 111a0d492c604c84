"""The wordstat cube's commands: ``turbocubes wordstat QUERY`` (the work is ``frequency_command.py``).

Only the arguments are declared here: the store and the analyzer load when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("wordstat", help="how often a query is searched (Wordstat's operators)")
    p.add_argument("query", help='words in any form; "…" these only; !form; +в; [order]; (a|b); -word')
    p.add_argument("--months", type=int, default=1, help="the period: the last N months, this one included")
    p.add_argument("--region", help="one region only")
    p.add_argument("--device", choices=("desktop", "mobile", "tablet"), help="one device class only")
    p.add_argument("--json", action="store_true", help="print the API's JSON form")
    p.set_defaults(func=_cmd_wordstat)


def _cmd_wordstat(args: argparse.Namespace) -> int:
    from cubes.wordstat.frequency_command import run

    return run(args)
