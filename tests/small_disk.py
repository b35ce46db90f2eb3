"""A small real disk for tests: a tmpfs mounted for one test (``mount -t tmpfs`` needs root, as the test machines
run), filled to the byte with a filler file, and the rows of a database read from a copy of its files."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import BinaryIO

import pytest


@contextmanager
def mounted_disk(mount: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``mount`` (made if needed), unmounted afterwards."""
    mount.mkdir(exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True)
    assert done.returncode == 0, f"mount -t tmpfs failed (the test needs root): {done.stderr.decode()}"
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def _write_until_full(handle: BinaryIO, chunk: bytes) -> None:
    while True:
        handle.write(chunk)


def fill(folder: Path, leave: int = 0) -> None:
    """Write a filler file in ``folder`` until its file system has no byte left, then give ``leave`` bytes back."""
    filler = folder / "filler"
    for chunk in (b"\0" * 4096, b"\0"):  # whole blocks, then the last bytes one by one
        with open(filler, "ab", buffering=0) as handle, pytest.raises(OSError, match="No space left") as full:
            _write_until_full(handle, chunk)
        assert full.value.errno == errno.ENOSPC
    if leave:
        os.truncate(filler, filler.stat().st_size - leave)


def contents(db: Path) -> list[str]:
    """Every row of the database, read from a copy of its files (reading it in place needs room for its index of
    the write-ahead log, which a full or read-only disk does not give)."""
    with tempfile.TemporaryDirectory() as folder:
        for part in db.parent.glob(db.name + "*"):
            shutil.copy(part, Path(folder) / part.name)
        with closing(sqlite3.connect(Path(folder) / db.name)) as connection:
            return list(connection.iterdump())
