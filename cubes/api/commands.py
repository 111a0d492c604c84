"""The operator's commands of the api cube: ``turbocubes hosts ...``, ``feeds ...`` and ``refresh ...``.

    turbocubes hosts add|verify|revoke|list|turbo ...   tenants, their hosts and tokens (host_commands.py)
    turbocubes feeds add|list|remove|fetch|show ...     the operator's feed registry (feed_commands.py)
    turbocubes refresh URL [--image | --purge] ...      one page or image again now (refresh_commands.py)
    turbocubes feeds export|import ...                  a tenant's feeds as OPML (opml_commands.py)

Only the arguments are declared here: each command imports its module when it runs, so
``turbocubes --help`` loads neither the stores nor the registration service.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]

#: ``FeedFormat``'s values (shared/messages.py), written here so that declaring the command imports no
#: model (tests/unit/cubes/test_cli_imports.py keeps the two equal)
_FEED_FORMATS = ("rss", "turbo", "yml", "auto")
#: ``FullText``'s values (shared/webmaster/feed_options.py), the same way
_FULL_TEXT = ("auto", "always", "never")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("hosts", help="tenants, their hosts, API tokens and ownership checks")
    p.set_defaults(func=_cmd_hosts)
    sub = p.add_subparsers(dest="hosts_command", required=True)

    add = sub.add_parser("add", help="claim HOST for a (new) tenant; prints its API token once")
    add.add_argument("host", help="the host, or the site's URL (its scheme and port are where it is checked)")
    add.add_argument("--tenant", help="add the host to this existing tenant instead of a new one")
    add.add_argument("--name", help="name of the new tenant (default: the host)")
    add.add_argument("--new-token", action="store_true", help="with --tenant: also issue another API token")

    verify = sub.add_parser("verify", help="check HOST for its verification token now")
    verify.add_argument("host")
    verify.add_argument("--tenant", required=True, help="the tenant whose claim is checked")
    verify.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="CIDR|HOST",
        help="let this address range / host through the SSRF guard (demo, tests)",
    )
    verify.add_argument(
        "--origin",
        metavar="URL",
        help="claim this origin of HOST first (scheme, host, port): the proof is looked for there, and the "
        "right covers it alone",
    )

    revoke = sub.add_parser("revoke", help="revoke an API token (give its plaintext)")
    revoke.add_argument("token")

    turbo = sub.add_parser("turbo", help="switch a verified host's Turbo pages on or off (off removes them all)")
    turbo.add_argument("host")
    turbo.add_argument("state", choices=("on", "off"))
    turbo.add_argument("--tenant", required=True, help="the tenant that verified the host")
    ls = sub.add_parser("list", help="the hosts of a tenant, verified or not (every tenant's, without --tenant)")
    ls.add_argument("--tenant", help="only this tenant's hosts")

    _register_feeds(subparsers)
    _register_refresh(subparsers)


def _register_refresh(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "refresh", help="fetch one page or image again now, or purge an image, through the host's polite lane"
    )
    p.set_defaults(func=_cmd_refresh)
    p.add_argument("url", help="the page's URL, or with --image / --purge the image's source URL")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--image", action="store_true", help="the URL is an image: fetch it again")
    what.add_argument(
        "--purge", action="store_true", help="the URL is an image: fetch it again, drop its copy if it is gone"
    )
    p.add_argument("--tenant", help="ask as this tenant (its rights decide, as in the API); default: the operator")


def _register_feeds(subparsers: Any) -> None:
    p = subparsers.add_parser("feeds", help="register, list, remove and fetch feeds (the operator's registry)")
    p.set_defaults(func=_cmd_feeds)
    sub = p.add_subparsers(dest="feeds_command", required=True)

    add = sub.add_parser("add", help="register a feed; it is fetched at once")
    add.add_argument("url")
    add.add_argument(
        "--format",
        choices=_FEED_FORMATS,
        default="auto",
        help="rss (also Atom), turbo, yml, or auto (detect from the body; default)",
    )
    add.add_argument(
        "--service",
        action="append",
        default=[],
        metavar="NAME",
        dest="services",
        help="a service the feed feeds (repeatable)",
    )
    add.add_argument("--autoparser", action="store_true", help="also autoparse the host's HTML pages")
    add.add_argument("--tenant", help="register on behalf of this tenant id")
    opts = add.add_argument_group(
        "fetch options and filters (merged over the feed's current ones; secrets never on the command line)"
    )
    opts.add_argument("--options", metavar="FILE", help="a JSON object of options, as the API takes them (- : stdin)")
    opts.add_argument(
        "--basic-auth",
        metavar="USER",
        help="HTTP basic auth; the password from $TURBOCUBES_FEED_PASSWORD, or asked on the terminal",
    )
    opts.add_argument("--timeout", type=float, metavar="S", help="the feed's own fetch timeout in seconds (1-120)")
    opts.add_argument(
        "--full-text",
        choices=_FULL_TEXT,
        help="auto (the default): an item that is only a summary gets its page's article; always: every item's "
        "page is read; never: the feed's text only",
    )
    for flag, key in (("--keep-category", "keep_categories"), ("--drop-category", "drop_categories")):
        opts.add_argument(flag, action="append", metavar="NAME", dest=key, help=f"filters.{key} (repeatable)")
    opts.add_argument("--keep-pattern", metavar="REGEX", help="keep only items whose title, link or category match")
    opts.add_argument("--drop-pattern", metavar="REGEX", help="leave out items whose title, link or category match")

    ls = sub.add_parser("list", help="every feed with its status: last fetch, result, next fetch, error")
    ls.add_argument("--tenant", help="only this tenant's feeds")
    ls.add_argument("--all", action="store_true", help="include removed feeds")

    rm = sub.add_parser("remove", help="remove a feed (it is no longer fetched)")
    rm.add_argument("feed_id")

    fetch = sub.add_parser("fetch", help="fetch a feed now, through its host's polite crawler lane")
    fetch.add_argument("feed_id")
    fetch.add_argument(
        "--wait", type=float, default=0.0, metavar="S", help="wait up to S seconds for the fetch and print its problems"
    )

    show = sub.add_parser("show", help="a feed: status, every problem of its last fetch with the fix, its history")
    show.add_argument("feed_id")

    export = sub.add_parser("export", help="a tenant's feeds as an OPML file on stdout (no credentials)")
    export.add_argument("--tenant", required=True, help="the tenant whose feeds are exported")
    imp = sub.add_parser("import", help="register every feed of an OPML file for a tenant; each line's result")
    imp.add_argument("file", metavar="FILE|-", help="the OPML file (- : stdin)")
    imp.add_argument("--tenant", required=True, help="the tenant the feeds are registered for (its verified hosts)")


def _cmd_hosts(args: argparse.Namespace) -> int:
    from cubes.api.host_commands import run

    return run(args)


def _cmd_refresh(args: argparse.Namespace) -> int:
    from cubes.api.refresh_commands import run

    return run(args)


def _cmd_feeds(args: argparse.Namespace) -> int:
    from cubes.api.feed_commands import run

    return run(args)
