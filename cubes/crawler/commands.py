"""The crawler's commands: ``turbocubes fetch URL`` (the work is ``fetch_one.py``).

Only the arguments are declared here: the crawler's modules are imported when ``fetch`` runs.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]

#: ``CrawlKind``'s values (shared/messages.py), written here so that declaring the command imports no
#: model (tests/unit/cubes/test_cli_imports.py keeps the two equal)
_KINDS = ("feed", "image", "video", "page")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("fetch", help="fetch one URL through the crawler's SSRF guard, robots.txt and limits")
    p.add_argument("url")
    p.add_argument(
        "--kind",
        choices=_KINDS,
        default="page",
        help="which size limit applies (default: page)",
    )
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="CIDR|HOST",
        help="let this address range / host through the SSRF guard (repeatable)",
    )
    p.add_argument("--etag", help="send If-None-Match (conditional GET)")
    p.add_argument("--last-modified", help="send If-Modified-Since (conditional GET)")
    p.set_defaults(func=_cmd_fetch)


def _cmd_fetch(args: argparse.Namespace) -> int:
    from cubes.crawler.fetch_one import run

    return run(args)
