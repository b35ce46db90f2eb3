"""A full disk and a read-only file system under the real commands: one line naming what could not be written, exit
2, never a traceback, and the database as it was.

The disk is a real tmpfs of a few hundred KiB mounted for the test (``mount -t tmpfs``, which needs root, as the
test machines run), filled to the last byte with a filler file; the read-only case remounts it read-only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.builders import answer, claim, document, edge
from typer.testing import Result

from conftest import EXAMPLES
from small_disk import contents, fill, mounted_disk

Cli = Callable[..., Result]

EXPORTER = EXAMPLES / "exporter.audit.json"
FOUR_CLAIM = EXAMPLES / "four-claim.audit.json"


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, unmounted afterwards."""
    with mounted_disk(tmp_path / "disk") as mount:
        yield mount


def refused_in_one_line(result: Result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    line = result.stderr.strip()
    assert line.startswith("error: "), line
    assert "\n" not in line, line
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


@pytest.fixture
def full_disk_db(cli: Cli, disk: Path) -> Path:
    """A database with the four-claim audit on a disk then filled but for 40 000 bytes: room to open the database
    and begin a transaction (its write-ahead log index takes 32 KiB), none to finish a real one."""
    db = disk / "audit.db"
    assert cli("ingest", FOUR_CLAIM, "--db", db).exit_code == 0
    fill(disk, leave=40_000)
    return db


def test_ingest_into_a_full_disk_refuses_in_one_line(cli: Cli, tmp_path: Path, full_disk_db: Path) -> None:
    # 3 000 answers, claims and labelled edges: over a megabyte to write
    big = tmp_path / "big.audit.json"
    n = range(3000)
    doc = document(
        [answer(f"a{i}") for i in n],
        [claim(f"c{i}", f"a{i}") for i in n],
        [edge(f"c{i}", f"https://x{i}.example/p", "supported", reviewer="li") for i in n],
    )
    big.write_text(json.dumps(doc), encoding="utf-8")
    before = contents(full_disk_db)
    refused_in_one_line(cli("ingest", big, "--db", full_disk_db), "audit.db", "full", "nothing was written")
    assert contents(full_disk_db) == before


def test_reviewer_add_on_a_full_disk_refuses_in_one_line(cli: Cli, full_disk_db: Path) -> None:
    before = contents(full_disk_db)
    result = cli("reviewer", "add", "li", "--role", "reviewer", "--db", full_disk_db, "--password", "pw-long-enough-1")
    refused_in_one_line(result, "audit.db", "full")
    assert contents(full_disk_db) == before


def test_segment_on_a_full_disk_refuses_in_one_line(cli: Cli, full_disk_db: Path) -> None:
    before = contents(full_disk_db)
    refused_in_one_line(cli("segment", "--db", full_disk_db, "--force"), "audit.db", "full")
    assert contents(full_disk_db) == before


def test_a_first_import_onto_a_full_disk_leaves_no_database(cli: Cli, disk: Path) -> None:
    fill(disk)
    refused_in_one_line(cli("ingest", FOUR_CLAIM, "--db", disk / "new.db"))
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]


def test_export_and_report_onto_a_full_disk_refuse_in_one_line(cli: Cli, tmp_path: Path, disk: Path) -> None:
    db = tmp_path / "audit.db"  # the database on a disk with room; the outputs on the full one
    assert cli("ingest", EXPORTER, "--db", db).exit_code == 0
    fill(disk)
    refused_in_one_line(cli("export", "--db", db, "--format", "csv", "--out", disk / "tables"), "No space left")
    refused_in_one_line(cli("export", "--db", db, "--format", "audit-json", "--out", disk / "a.json"), "No space")
    refused_in_one_line(cli("report", db, "--out", disk / "report.html"), "No space left")
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]


def test_a_read_only_database_refuses_writes_in_one_line(cli: Cli, disk: Path) -> None:
    db = disk / "audit.db"
    assert cli("ingest", FOUR_CLAIM, "--db", db).exit_code == 0
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    before = contents(db)
    refused_in_one_line(cli("ingest", EXPORTER, "--db", db), "audit.db")
    result = cli("reviewer", "add", "li", "--role", "reviewer", "--db", db, "--password", "pw-long-enough-1")
    refused_in_one_line(result, "audit.db")
    assert contents(db) == before


@pytest.mark.parametrize("target", ["folder", "missing"])
def test_report_into_a_folder_or_a_missing_folder_refuses_in_one_line(cli: Cli, tmp_path: Path, target: str) -> None:
    out = tmp_path if target == "folder" else tmp_path / "missing" / "x.html"
    refused_in_one_line(cli("report", FOUR_CLAIM, "--out", out), str(out if target == "folder" else out.parent))
    assert not (tmp_path / "missing").exists()
    shutil.rmtree(tmp_path / "unused", ignore_errors=True)
