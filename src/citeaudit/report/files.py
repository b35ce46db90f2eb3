"""Writing output files whole or not at all."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(target: Path, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (or its parts, one after the other) beside ``target`` and rename it into place, so a failure
    never leaves half a file.

    The file is readable by all (0644), not owner-only as a temporary file is: a report or an export is meant to
    be opened and shared."""
    folder = target.parent if str(target.parent) else Path(".")
    # Errors name the file asked for, never the temporary one beside it.
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file to write", str(target))
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such folder", str(folder))
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.")
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(target)) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            if isinstance(data, bytes):
                stream.write(data)
            else:
                stream.writelines(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(target)) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
