"""A whole collection of saved engine responses at once: which file answers which question, from which engine,
in which locale, as which repeat — from a manifest (CSV) or from the files' names — and the engine's own id of
each response.

A manifest has a header row; ``file``, ``question`` and ``engine`` are required, ``locale``, ``repeat`` and
``run`` optional::

    file,question,engine,locale,repeat
    q01-chatgpt-1.json,q01,chatgpt,en-GB,1

A name pattern names the same fields in braces: ``{question}__{engine}__{locale}__{repeat}.json``.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from citeaudit.core.errors import InputError, InvalidValue
from citeaudit.core.limits import MAX_REPEATS, load_json, shown

__all__ = ["FIELDS", "CollectedFile", "from_manifest", "from_pattern", "response_id"]

FIELDS = ("file", "question", "engine", "locale", "repeat", "run")
"""What a manifest row or a name pattern can say about a file."""

_REQUIRED = ("file", "question", "engine")


@dataclass(frozen=True, slots=True)
class CollectedFile:
    """One saved response of a collection and where it belongs."""

    path: Path
    question: str
    engine: str
    """The platform the answer is from (``chatgpt``, ``perplexity``…)."""
    locale: str = ""
    repeat: int = 1
    run: str | None = None
    """Run id (default: the collection's name and the engine)."""


def _repeat(value: str, source: str, where: str) -> int:
    if not value.isascii() or not value.isdigit():
        raise InvalidValue(source, where, f"repeat must be a whole number (got {value!r})")
    # Compared as text first: int() refuses thousands of digits, and no repeat is stored past MAX_REPEATS.
    if len(value.lstrip("0")) > len(str(MAX_REPEATS)) or not 1 <= int(value) <= MAX_REPEATS:
        raise InvalidValue(source, where, f"repeat counts from 1 to {MAX_REPEATS} (got {shown(value, 30)})")
    return int(value)


def _unique(files: Sequence[CollectedFile], source: str) -> list[CollectedFile]:
    seen: dict[tuple[str, str, str, int], Path] = {}
    for f in files:
        key = (f.question, f.engine, f.locale, f.repeat)
        if key in seen:
            raise InvalidValue(
                source,
                str(f.path),
                f"question {f.question!r}, engine {f.engine!r}, locale {f.locale!r}, repeat {f.repeat} is "
                f"already {str(seen[key])!r}: one response per repeat",
            )
        seen[key] = f.path
    return list(files)


def from_manifest(manifest: Path, folder: Path) -> list[CollectedFile]:
    """The files a manifest lists (file names relative to ``folder``), each checked to exist."""
    source = str(manifest)
    try:
        text = manifest.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(source, "", f"cannot read: {exc}") from None
    # Read strictly: a quote left open would shift every later cell into another column.
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        return _manifest_rows(reader, source, folder)
    except csv.Error as exc:  # a quote left open, a field over the reader's limit
        raise InvalidValue(source, f"line {reader.line_num}", f"not CSV: {exc}") from None


def _manifest_rows(reader: csv.DictReader[str], source: str, folder: Path) -> list[CollectedFile]:
    header = reader.fieldnames or []
    missing = [name for name in _REQUIRED if name not in header]
    if missing:
        raise InvalidValue(source, "line 1", f"the header needs a {missing[0]!r} column (got {header!r})")
    unknown = [name for name in header if name not in FIELDS]
    if unknown:
        raise InvalidValue(source, "line 1", f"unknown column {unknown[0]!r}; columns: {', '.join(FIELDS)}")
    found = []
    for line, row in enumerate(reader, start=2):
        where = f"line {line}"
        values = {key: (value or "").strip() for key, value in row.items() if key is not None}
        if None in row:
            raise InvalidValue(source, where, f"more cells than columns: {row[None]!r}")
        for name in _REQUIRED:
            if not values.get(name):
                raise InvalidValue(source, where, f"{name} is empty")
        path = folder / values["file"]
        if not path.is_file():
            raise InvalidValue(source, where, f"no such file {values['file']!r} in {str(folder)!r}")
        found.append(
            CollectedFile(
                path,
                values["question"],
                values["engine"],
                values.get("locale", ""),
                _repeat(values.get("repeat") or "1", source, where),
                values.get("run") or None,
            )
        )
    if not found:
        raise InvalidValue(source, "", "the manifest lists no file")
    return _unique(found, source)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[a-z]+\})", pattern)
    regex = []
    named = []
    for part in parts:
        if part.startswith("{") and part.endswith("}"):
            name = part[1:-1]
            if name not in FIELDS or name == "file":
                raise InvalidValue(
                    "--pattern", pattern, f"unknown field {part!r}; fields: question, engine, locale, repeat, run"
                )
            if name in named:
                raise InvalidValue("--pattern", pattern, f"{part!r} appears twice")
            named.append(name)
            regex.append(rf"(?P<{name}>\d+)" if name == "repeat" else rf"(?P<{name}>[^/]+?)")
        else:
            regex.append(re.escape(part).replace(r"\*", "[^/]*"))
    for name in ("question", "engine"):
        if name not in named:
            raise InvalidValue("--pattern", pattern, f"the pattern must name {{{name}}}")
    return re.compile("".join(regex))


def from_pattern(folder: Path, pattern: str) -> tuple[list[CollectedFile], list[Path]]:
    """The files of ``folder`` whose names match ``pattern``, and those that do not (to be reported)."""
    regex = _pattern_regex(pattern)
    found, other = [], []
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        match = regex.fullmatch(path.name)
        if match is None:
            other.append(path)
            continue
        fields = match.groupdict()
        found.append(
            CollectedFile(
                path,
                fields["question"],
                fields["engine"],
                fields.get("locale") or "",
                _repeat(fields.get("repeat") or "1", str(path), "name"),
                fields.get("run"),
            )
        )
    if not found:
        raise InvalidValue(str(folder), "", f"no file name matches the pattern {pattern!r}")
    return _unique(found, str(folder)), other


def response_id(data: bytes) -> str | None:
    """The engine's own id of a saved response, when the payload is one JSON object that gives one: OpenAI's and
    Anthropic's and Perplexity's ``id``, Gemini's ``responseId``, SerpApi's ``search_metadata.id``."""
    try:
        document = load_json(data, "response")
    except InputError:  # not one JSON document within the limits: the reader says why when it reads it
        return None
    if not isinstance(document, dict):
        return None
    for key in ("id", "responseId", "response_id"):
        value = document.get(key)
        if isinstance(value, str) and value:
            return value
    metadata = document.get("search_metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("id"), str) and metadata["id"]:
        return str(metadata["id"])
    return None
