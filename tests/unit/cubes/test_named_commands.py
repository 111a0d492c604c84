"""Every ``turbocubes COMMAND [SUBCOMMAND]`` the code, the docs and the example configuration name is one.

An error message told the operator to make a key with ``turbocubes secrets new-key``, a command
that did not exist: a person who follows an instruction the product printed must find it there.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

from cubes.cli import build_parser

ROOT = Path(__file__).resolve().parents[3]
_COMMAND = r"turbocubes ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?"
#: a command spelled in a sentence: in backquotes (``turbocubes feeds add``) or after "with:", "run"
#: or a prompt ("make one with: turbocubes secrets new-key"); "turbocubes" alone is the product's name
_INLINE = re.compile(r"(?:`|with: |run |\$ )" + _COMMAND)
#: a command on a line of its own: in a usage list (indented) or a fenced example of a Markdown file
_LINE = re.compile(r"^[ \t]*(?:\$ )?" + _COMMAND)


def _named(text: str) -> list[tuple[str, str]]:
    """Each ``(command, what follows it)`` that ``text`` tells a person to run."""
    found = _INLINE.findall(text)
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or line[:1].isspace():
            found += _LINE.findall(line)
    return found


#: where the instructions people follow are written: the code's messages and docstrings, the docs
_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".sh", ".html"}


def _commands() -> dict[str, set[str]]:
    """Each command of the parser and its subcommands (empty for one that has none)."""
    out: dict[str, set[str]] = {}
    (sub,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        out[name] = set(nested[0].choices) if nested else set()
    return out


def test_every_command_a_file_names_is_a_command_of_the_cli() -> None:
    commands = _commands()
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    bad: set[str] = set()
    for name in names:
        path = ROOT / name
        if path.suffix not in _SUFFIXES or name.startswith("tests/data/") or not path.is_file():
            continue
        for command, word in _named(path.read_text(encoding="utf-8", errors="replace")):
            if command not in commands:
                bad.add(f"{name}: turbocubes {command}")
            elif commands[command] and word and word not in commands[command]:
                bad.add(f"{name}: turbocubes {command} {word}")
    assert not bad, "commands named but not in the CLI:\n" + "\n".join(sorted(bad))


def test_secrets_new_key_makes_a_key_the_settings_accept(capsys: object) -> None:
    from cubes.cli import main
    from shared.config import Settings

    assert main(["secrets", "new-key"]) == 0
    key = capsys.readouterr().out.strip()  # type: ignore[attr-defined]
    assert Settings().replace(secrets={"key": key}).secrets.key == key
