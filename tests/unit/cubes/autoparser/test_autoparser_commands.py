"""``turbocubes autoparser extract FILE`` and ``eval DIR`` print what they should."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from cubes.autoparser.commands import cmd_eval, cmd_extract
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, TITLE, article_page


def test_extract_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "page.html"
    f.write_text(article_page())
    args = argparse.Namespace(source=str(f), model=None, url="https://news.example.com/x", html=False, config=None)
    assert cmd_extract(args) == 0
    out = capsys.readouterr().out
    assert f"title: {TITLE}" in out
    assert "https://news.example.com/img/bridge.jpg" in out
    assert PARAGRAPHS[0] in out


def test_extract_with_a_bad_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(source="x.html", model=str(tmp_path / "none.cbm"), url="", html=False, config=None)
    assert cmd_extract(args) == 1
    assert "autoparser.model_path" in capsys.readouterr().err


def test_eval_a_pairs_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.html").write_text(article_page())
    (tmp_path / "a.txt").write_text("The old bridge at dusk.\n" + "\n".join(PARAGRAPHS))
    args = argparse.Namespace(directory=tmp_path, model=None, validation=False, worst=1, config=None)
    assert cmd_eval(args) == 0
    out = capsys.readouterr().out
    assert "token-level  P 1.0000  R 1.0000  F1 1.0000  (1 pages)" in out
    assert "pages/s" in out
