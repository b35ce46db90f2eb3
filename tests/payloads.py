"""Reading engine payloads in tests: one reader's answers from a fixture, and payloads written on the fly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from citeaudit.ingest.base import ParsedAnswer, Reader


def read_with(reader: Reader, path: Path) -> list[ParsedAnswer]:
    """Every answer ``reader`` finds in the file at ``path``."""
    assert reader.read_answers is not None
    return list(reader.read_answers(path.read_bytes(), str(path)))


def read_one_with(reader: Reader, path: Path) -> ParsedAnswer:
    """The single answer ``reader`` finds in the file at ``path``."""
    (answer,) = read_with(reader, path)
    return answer


def write_payload(tmp_path: Path, document: Any, name: str = "payload.json") -> Path:
    """``document`` as a JSON file in ``tmp_path`` (non-ASCII kept as written)."""
    path = tmp_path / name
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    return path
