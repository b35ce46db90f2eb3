"""Docs that cannot drift: the command reference is what the command line says, and the README's contents list
matches its headings."""

from __future__ import annotations

import re

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
