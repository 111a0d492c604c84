"""The README stays true for a stranger's clone (it once linked to a design file outside it)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_relative_link_of_the_readme_is_inside_the_repository() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)", text)
    local = [t for t in targets if not t.startswith(("http://", "https://", "mailto:"))]
    assert local, "the README links to files of the repository"
    for target in local:
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT), f"{target} is outside the repository"
        assert path.exists(), f"{target} does not exist"


def test_the_readme_says_how_to_try_a_local_feed() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "http.allowlist" in text
    assert "TURBOCUBES_HTTP_ALLOWLIST" in text


# a document named in code or docs: a path ending in .md (README.md, docs/x.md, cubes/api/README.md)
_DOC_REF = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.md)\b")
_SECTION_REF = re.compile(r"docs/architecture\.md,? sections? ([0-9][0-9 ,and\-\u2013]*)")
_TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg", ".sh", ""}


def _tracked_text_files() -> list[Path]:
    import subprocess

    names = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    return [ROOT / n for n in names if (ROOT / n).suffix in _TEXT_SUFFIXES and (ROOT / n).is_file()]


def test_no_file_names_a_document_the_repository_does_not_have() -> None:
    """A reference to ``DESIGN.md``, ``STYLE.md`` or any ``*.md`` that a clone lacks fails here.

    The design notes once lived beside the repository and hundreds of docstrings pointed at them:
    a stranger's clone could follow none of those pointers. A name resolves from the repository's
    root or from the file's own folder; a bare name, anywhere in the repository.
    """
    tracked = _tracked_text_files()
    basenames = {f.name for f in tracked}
    # not this test (it names the missing ones) nor the fixtures (other people's text)
    files = [f for f in tracked if f != Path(__file__).resolve() and not f.is_relative_to(ROOT / "tests" / "data")]
    missing: list[str] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for ref in _DOC_REF.findall(text):
            if "/" not in ref and ref in basenames:
                continue  # a bare name of a file the repository has (``README.md``, ``MANIFEST.md``)
            if not ((ROOT / ref).exists() or (path.parent / ref).exists()):
                missing.append(f"{path.relative_to(ROOT)}: {ref}")
    assert not missing, "documents named but not in the repository:\n" + "\n".join(sorted(set(missing)))


def test_every_cited_section_of_the_architecture_exists() -> None:
    headings = re.findall(r"^## ([0-9]+)\. ", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"), re.M)
    known = set(headings)
    assert known, "docs/architecture.md has numbered sections"
    bad: list[str] = []
    for path in _tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for cited in _SECTION_REF.findall(text):
            for number in re.findall(r"[0-9]+", cited):
                if number not in known:
                    bad.append(f"{path.relative_to(ROOT)}: section {number}")
    assert not bad, "sections of docs/architecture.md that do not exist:\n" + "\n".join(sorted(set(bad)))


#: "issue 17", "issues 7, 14", "Issue #3", "issue17": a number in a tracker a clone does not have
_ISSUE_REF = re.compile(r"\bissues?[ _#-]?#?[0-9]+", re.IGNORECASE)
#: ... and "(issue" at a line's end with "13)" at the next one's start (a docstring wrapped there)
_ISSUE_WRAPPED = re.compile(r"\bissues?[ \t]*\n[ \t#]*[0-9]+", re.IGNORECASE)


def test_no_file_names_an_issue_by_its_number() -> None:
    """Code, docs and tests say the reason itself, never "issue N".

    The tracker is not in the repository: "(issue 18)" told a reader of a clone nothing, while
    "a hub href of &lol9; came back as a thousand lols" tells them why the code is there. A
    commit message may name the issue. The fixtures under ``tests/data/`` are other people's text.
    """
    pattern = _ISSUE_REF
    bad: list[str] = []
    for path in _tracked_text_files():
        if path == Path(__file__).resolve() or path.is_relative_to(ROOT / "tests" / "data"):
            continue
        if pattern.search(path.relative_to(ROOT).as_posix()):
            bad.append(f"{path.relative_to(ROOT)}: its name")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                bad.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
        for m in _ISSUE_WRAPPED.finditer(text):
            bad.append(f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {' '.join(m[0].split())}")
    assert not bad, 'say the reason instead of "issue N":\n' + "\n".join(bad)


#: a path in backquotes: ``shared/stores/pages.py``, ``cubes/frontend/html/``, ``tests/unit/test_readme.py``
_PATH_REF = re.compile(r"`((?:[\w.-]+/)+[\w.-]*)`")
#: the documents that describe the code as it is (``docs/adding-a-cube.md`` names the files it has you create)
#: not tracked: made when the code or the tests run, or beside the checkout (the benches' optional corpora)
_MADE_WHEN_RUN = ("./", "../", "/", "var/", "test-artifacts/")
_MAPS = ("README.md", "docs/architecture.md", "docs/conventions.md", "docs/development.md", "docs/glossary.md")


def test_every_path_the_maps_of_the_code_name_exists() -> None:
    """A module moved or renamed leaves no pointer behind in the documents that map the code.

    A path counts as found when a tracked file or folder ends with it (``postgres/batch.py`` in a
    paragraph about the stores); ``./var/`` and the like (made when the code runs) are not tracked.
    """
    import subprocess

    files = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    folders = {"/".join(f.split("/")[:i]) for f in files for i in range(1, f.count("/") + 1)}
    known = {"/" + f for f in files} | {"/" + d for d in folders} | {"/" + d + "/" for d in folders}
    missing = []
    for doc in _MAPS:
        for ref in _PATH_REF.findall((ROOT / doc).read_text(encoding="utf-8")):
            if ref.startswith(_MADE_WHEN_RUN) or any(k.endswith("/" + ref) for k in known):
                continue
            missing.append(f"{doc}: {ref}")
    assert not missing, "paths named but not in the repository:\n" + "\n".join(missing)
