"""The parser's commands: ``turbocubes parse FILE|URL`` (the work is ``parse_file.py``).

Only the arguments are declared here, so ``turbocubes --help`` and every other command load none of
the parser: its modules are imported when ``parse`` runs (``tests/unit/cubes/test_cli_imports.py``).
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]

_FORMATS = ("auto", "rss", "turbo", "yml", "json")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("parse", help="parse a feed file or URL and print its documents as JSON lines")
    p.add_argument("source", metavar="FILE|URL")
    p.add_argument("--format", choices=_FORMATS, default="auto", help="the feed's format (default: detect)")
    p.add_argument(
        "--host",
        help="the site the feed belongs to; items on other hosts are refused "
        "(default: the URL's host; no check for a file)",
    )
    p.add_argument(
        "--base-url",
        metavar="URL",
        help="for a file: the URL the feed is served from, which relative links resolve against "
        '(default: the feed\'s <atom:link rel="self">); its host is the default --host',
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="CIDR|HOST",
        help="let this address range / host through the SSRF guard (repeatable)",
    )
    p.set_defaults(func=_cmd_parse)


def _cmd_parse(args: argparse.Namespace) -> int:
    from cubes.parser.parse_file import run

    return run(args)
