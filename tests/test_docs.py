"""Docs that cannot drift: the command reference is what the command line says, and the README's contents list
matches its headings."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO
from test_examples import script

CLI_PAGE = REPO / "docs" / "cli.md"


def test_the_command_reference_is_what_the_cli_says() -> None:
    # Regenerate with `python scripts/make_cli_docs.py` after changing a command, an option or a help text.
    assert CLI_PAGE.read_text(encoding="utf-8") == script("make_cli_docs").render()


def test_the_reference_lists_every_command_once() -> None:
    from test_cli import commands

    page = CLI_PAGE.read_text(encoding="utf-8")
    for name, _ in commands():
        assert page.count(f"### `citeaudit {name}`\n") == 1, name


def _anchor(heading: str) -> str:
    # GitHub's rule: lower case, punctuation other than hyphens and spaces dropped, spaces to hyphens.
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readme_contents_list_its_sections_in_order() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    headings = [_anchor(h) for h in re.findall(r"^## (.+)$", readme, flags=re.MULTILINE)]
    contents = readme.split("## Contents\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"\]\(#([^)]+)\)", contents)
    assert listed == [h for h in headings if h != "contents"]


# dotted names that are files or formats, not Python names
_NOT_API = re.compile(r"^citeaudit\.(db|toml|audit)$")


def _resolves(dotted: str) -> bool:
    """Whether ``citeaudit.a.b.c`` names a module or an attribute reachable from one."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def _mentioned_api() -> set[str]:
    names = set()
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for dotted in re.findall(r"(?<![\w/.-])citeaudit(?:\.[A-Za-z_]\w*)+(?![\w/-])", text):
            dotted = dotted.rstrip(".")
            if not _NOT_API.match(dotted):
                names.add(f"{page.name}: {dotted}")
        for module, imported in re.findall(r"^from (citeaudit[\w.]*) import ([\w, ]+)$", text, flags=re.MULTILINE):
            names.update(f"{page.name}: {module}.{name.strip()}" for name in imported.split(",") if name.strip())
    return names


def test_every_api_name_the_docs_mention_exists() -> None:
    mentioned = _mentioned_api()
    # the pages name dozens of them: a broken pattern would check nothing
    assert len(mentioned) > 20
    missing = sorted(m for m in mentioned if not _resolves(m.split(": ", 1)[1]))
    assert missing == []


def test_no_file_keeps_the_marks_of_an_unfinished_merge() -> None:
    """A merge left half done shows as lines of seven <, = or > in a tracked text file."""
    import subprocess

    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True, check=True)
    marks = re.compile(r"^(?:<{7}|={7}|>{7})(?: |$)", re.MULTILINE)
    found = []
    for name in tracked.stdout.splitlines():
        path = REPO / name
        if path.suffix not in {".py", ".md", ".j2", ".toml", ".yaml", ".yml", ".json", ".js", ".css", ".html", ""}:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}" for m in marks.finditer(text)]
    assert found == []


_MD_REFERENCE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.md)\b")
"""A Markdown file named in text: ``docs/review.md``, ``README.md``."""
_SECTION_OF_A_NAME = re.compile(r"\b[A-Z][A-Z_]+(?:\.md)? §")
"""A section of a document named by an upper-case name alone (``NAME §2``), which no path leads to."""


def _docstrings_and_comments(path: Path) -> list[tuple[int, str]]:
    """The comments and string literals (docstrings among them) of a Python file, with their first line."""
    import tokenize

    with path.open("rb") as source:
        tokens = list(tokenize.tokenize(source.readline))
    kinds = {tokenize.COMMENT, tokenize.STRING}
    return [(token.start[0], token.string) for token in tokens if token.type in kinds]


def _document_references() -> list[tuple[str, str]]:
    found = []
    for path in sorted((REPO / "src").rglob("*.py")):
        for line, text in _docstrings_and_comments(path):
            where = f"{path.relative_to(REPO)}:{line}"
            found += [(where, name) for name in _MD_REFERENCE.findall(text)]
            found += [(where, match) for match in _SECTION_OF_A_NAME.findall(text)]
    return found


def test_every_document_a_docstring_or_comment_names_is_in_the_repository() -> None:
    references = _document_references()
    # src names docs/review.md, docs/columnar.md, docs/metrics.md and others: a broken pattern would check nothing
    assert len({name for _, name in references}) >= 5
    # A path is read from the repository's root (docs/review.md) or, given bare, from docs/ or the root.
    missing = [
        f"{where}: {name}"
        for where, name in references
        if "§" in name or not ((REPO / name).is_file() or (REPO / "docs" / name).is_file())
    ]
    assert missing == []


def test_the_reference_check_sees_a_missing_document() -> None:
    # The patterns above on text naming a file that is not there and a section of an outside document.
    text = "see ENGINE_FORMATS.md and docs/nowhere.md; scoring as DESIGN §2 says; docs/review.md is fine"
    assert _MD_REFERENCE.findall(text) == ["ENGINE_FORMATS.md", "docs/nowhere.md", "docs/review.md"]
    assert _SECTION_OF_A_NAME.findall(text) == ["DESIGN §"]
