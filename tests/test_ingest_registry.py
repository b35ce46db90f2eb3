"""Every reader is registered once, and every fixture is recognised by the reader it was written for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from citeaudit.ingest import READERS, detect_reader

FIXTURES = Path(__file__).parent / "fixtures"
CASES = [
    pytest.param(path, folder.name, id=f"{folder.name}/{path.name}")
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir())
    for path in sorted(folder.iterdir())
    if "malformed" not in path.name and path.is_file()
]


def test_every_fixture_folder_names_a_reader() -> None:
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders <= set(READERS)


@pytest.mark.parametrize(("path", "expected"), CASES)
def test_content_detection_picks_the_right_reader(path: Path, expected: str) -> None:
    data = path.read_bytes()
    assert detect_reader(data, str(path)).name == expected


def test_formats_command_lists_every_reader(cli: Callable[..., Result]) -> None:
    listing = cli("formats").stdout
    for name in READERS:
        assert name in listing
