"""The ``turbocubes`` command (docs/architecture.md section 8).

    turbocubes up [--demo] [--workers N]  every cube in one process (+ N-1 processes of the replicable ones)
    turbocubes cube NAME              one cube, in its own process / container
    turbocubes topics create          the catalog's topics (+ DLQs, retry topics) on the bus
    turbocubes dlq list TOPIC         dead letters with their reasons
    turbocubes dlq replay TOPIC       re-publish dead letters to their original topic
    turbocubes schemas write|check    regenerate / verify schemas/*.json and asyncapi.yaml
    turbocubes render FILE|URL        a feed's Turbo pages as local HTML files, with every problem and its fix

Cube packages add their own commands through ``cubes/<name>/commands.py``
(``feeds``, ``fetch``, ``parse``, ``hosts``, ``autoparser``...).

A command imports what it needs when it runs: building the parser (``--help``, or any command
before it starts) imports no cube, no engine client, no renderer and not even the settings'
models, and ``turbocubes parse FILE`` loads the parser's modules and nothing of the rest; neither
starts an event loop, so asyncio and its network stack are imported by the commands that run one
(``tests/unit/cubes/test_cli_imports.py``; ``bench/cli.py`` measures the CPU).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cubes import registry
from shared.errors import ConfigError, TurbocubesError

if TYPE_CHECKING:
    from shared.config import Settings

__all__ = ["build_parser", "main"]

#: the formats ``render`` reads (the parser's ``parse`` takes the same)
_FORMATS = ("auto", "rss", "turbo", "yml", "json")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="turbocubes",
        description="A content pipeline of small cubes: feeds and partner documents in, Turbo pages out.",
    )
    p.add_argument("--config", help="path to turbocubes.toml (default: ./turbocubes.toml if present)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    up = sub.add_parser("up", help="run every cube in one process (embedded engines by default)")
    up.add_argument(
        "--demo", action="store_true", help="also start a bundled demo partner site on 127.0.0.1 and register its feeds"
    )
    up.add_argument("--only", action="append", default=[], metavar="CUBE", help="run only these cubes")
    up.add_argument(
        "--workers",
        type=_process_count,
        default=1,
        metavar="N",
        help="processes in all (default 1): N-1 more run the replicable cubes (each cube's declaration "
        "says whether it is), e.g. one per CPU core",
    )
    up.set_defaults(func=_cmd_up)

    cube = sub.add_parser("cube", help="run one cube in this process")
    cube.add_argument("name", choices=registry.CUBE_NAMES)
    cube.set_defaults(func=_cmd_cube)

    topics = sub.add_parser("topics", help="manage the catalog's topics on the configured bus")
    tsub = topics.add_subparsers(dest="topics_command", required=True)
    tc = tsub.add_parser("create", help="create every catalog topic, its DLQ and the cubes' retry topics")
    tc.set_defaults(func=_cmd_topics_create)
    tl = tsub.add_parser("list", help="print the topic catalog")
    tl.set_defaults(func=_cmd_topics_list)

    dlq = sub.add_parser("dlq", help="inspect and replay dead letters")
    dsub = dlq.add_subparsers(dest="dlq_command", required=True)
    dl = dsub.add_parser("list", help="list dead letters of TOPIC (or of TOPIC.dlq)")
    dl.add_argument("topic")
    dl.add_argument("--limit", type=int, default=100)
    dl.set_defaults(func=_cmd_dlq_list)
    dr = dsub.add_parser("replay", help="re-publish dead letters of TOPIC to TOPIC once the cause is fixed")
    dr.add_argument("topic")
    dr.add_argument("--limit", type=int, default=100_000)
    dr.set_defaults(func=_cmd_dlq_replay)

    sc = sub.add_parser("schemas", help="the JSON Schema files and AsyncAPI document generated from the models")
    ssub = sc.add_subparsers(dest="schemas_command", required=True)
    ssub.add_parser("write", help="regenerate schemas/").set_defaults(func=_cmd_schemas_write)
    ssub.add_parser("check", help="exit 1 if schemas/ differs from the models").set_defaults(func=_cmd_schemas_check)

    cfg = sub.add_parser("config", help="configuration helpers")
    csub = cfg.add_subparsers(dest="config_command", required=True)
    csub.add_parser("example", help="print every key with its default (turbocubes.example.toml)").set_defaults(
        func=_cmd_config_example
    )
    csub.add_parser("show", help="print the effective configuration (file + environment)").set_defaults(
        func=_cmd_config_show
    )

    secrets = sub.add_parser("secrets", help="the key that seals feeds' credentials (secrets.key)")
    ssec = secrets.add_subparsers(dest="secrets_command", required=True)
    ssec.add_parser(
        "new-key", help="print a fresh secrets.key (every process of a cluster needs the same)"
    ).set_defaults(func=_cmd_secrets_new_key)

    for mod in registry.command_modules():
        mod.register(sub)
    _register_render(sub)
    _name_subcommands(p)
    return p


def _register_render(sub: Any) -> None:
    """``turbocubes render``: it composes the parser's and the kvwriter's functions (``cubes/render.py``)."""
    p = sub.add_parser(
        "render", help="render a feed file or URL into Turbo pages (local HTML files), with every problem and its fix"
    )
    p.add_argument("source", metavar="FILE|URL")
    p.add_argument("--format", choices=_FORMATS, default="auto", help="the feed's format (default: detect)")
    p.add_argument(
        "--base-url",
        metavar="URL",
        help="for a file: the URL the feed is served from; relative links resolve against it and "
        "items must be on its host",
    )
    p.add_argument("--out", default="turbo-pages", metavar="DIR", help="where the pages go (default: ./turbo-pages)")
    p.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="CIDR|HOST",
        help="let this address range / host through the SSRF guard (a local test server; repeatable)",
    )
    p.add_argument(
        "--no-images",
        dest="images",
        action="store_false",
        help="do not fetch the pages' images (by default each is fetched and judged as the pipeline does)",
    )
    p.set_defaults(func=_cmd_render)


def _cmd_render(args: argparse.Namespace) -> int:
    from cubes.render import run

    return run(args)


def load_settings(path: str | None) -> Settings:
    """The settings, imported when a command needs them (pydantic is no cost of ``--help``)."""
    from shared.config import load_settings as load

    return load(path)


def _name_subcommands(parser: argparse.ArgumentParser) -> None:
    """Usage errors name the choices, never our ``dest`` (argparse said "required: hosts_command")."""
    for action in parser._actions:  # argparse has no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):
            if action.metavar is None:
                action.metavar = "{" + ",".join(action.choices) + "}"
            for child in action.choices.values():
                _name_subcommands(child)


def _cmd_up(args: argparse.Namespace) -> int:
    from cubes.launcher import run_up
    from shared.runtime.loops import loop_kind
    from shared.runtime.shutdown import run_main

    settings = load_settings(args.config)
    return run_main(
        run_up(
            settings,
            only=args.only,
            demo=args.demo,
            workers=args.workers,
            log_level=args.log_level,
            settle_heap=True,
        ),
        event_loop=loop_kind(settings.runtime.event_loop, settings.bus.url),
    )


def _process_count(text: str) -> int:
    """``--workers``: a whole number >= 1 (argparse turns the ValueError into a usage error)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes, at least 1; got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes, at least 1; got {n}")
    return n


def _cmd_cube(args: argparse.Namespace) -> int:
    from cubes.launcher import run_up
    from shared.runtime.loops import loop_kind
    from shared.runtime.shutdown import run_main

    settings = load_settings(args.config)
    return run_main(
        run_up(settings, only=[args.name], demo=False, settle_heap=True),
        event_loop=loop_kind(settings.runtime.event_loop, settings.bus.url),
    )


def _cmd_topics_create(args: argparse.Namespace) -> int:
    import asyncio

    from shared.runtime import ensure_topics, open_deps

    async def go() -> int:
        deps = await open_deps(load_settings(args.config))
        try:
            created = await ensure_topics(deps, registry.CUBE_NAMES)
        finally:
            await deps.close()
        for name in created:
            print(f"created {name}")
        print(f"{len(created)} topic(s) created on {deps.settings.bus.url}")
        return 0

    return asyncio.run(go())


def _cmd_topics_list(args: argparse.Namespace) -> int:
    from shared.contracts import catalog

    for t in catalog().values():
        policy = "compact" if t.compact else f"retention {t.retention_ms} ms"
        print(f"{t.name:20} key={t.key:8} partitions={t.partitions:<3} {policy:28} {t.schema_file}")
    return 0


def _cmd_dlq_list(args: argparse.Namespace) -> int:
    import asyncio

    from cubes.dlq import list_dead_letters

    return asyncio.run(list_dead_letters(load_settings(args.config), args.topic, args.limit))


def _cmd_dlq_replay(args: argparse.Namespace) -> int:
    import asyncio

    from cubes.dlq import replay_dead_letters

    return asyncio.run(replay_dead_letters(load_settings(args.config), args.topic, args.limit))


def _cmd_schemas_write(args: argparse.Namespace) -> int:
    from shared.contracts import write_contract_files

    for name in write_contract_files():
        print(f"wrote schemas/{name}")
    return 0


def _cmd_schemas_check(args: argparse.Namespace) -> int:
    from shared.contracts import stale_contract_files

    stale = stale_contract_files()
    for name in stale:
        print(f"schemas/{name} differs from the models: run `turbocubes schemas write`", file=sys.stderr)
    return 1 if stale else 0


def _cmd_config_example(args: argparse.Namespace) -> int:
    from shared.config import example_toml

    sys.stdout.write(example_toml())
    return 0


def _cmd_config_show(args: argparse.Namespace) -> int:
    import orjson

    settings = load_settings(args.config)
    print(orjson.dumps(settings.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode())
    return 0


def _cmd_secrets_new_key(args: argparse.Namespace) -> int:
    from shared.secretbox import new_key

    print(new_key())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"turbocubes: configuration error: {exc}", file=sys.stderr)
        return 2
    except TurbocubesError as exc:
        print(f"turbocubes: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
