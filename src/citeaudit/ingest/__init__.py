"""Readers that turn files into audits: one module per format, registered in :data:`READERS`.

Document readers return a whole audit; answer readers return engine answers that
:func:`~citeaudit.ingest.assemble.assemble` attaches to a protocol question, a run and a platform.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit.core.collector import collector_paused
from citeaudit.core.errors import InputError, InvalidValue, UnknownFormat
from citeaudit.core.limits import MAX_INPUT_BYTES, shown
from citeaudit.core.memory import memory_kept
from citeaudit.core.model import Audit
from citeaudit.ingest.base import CHUNK, ParsedAnswer, Reader, ReaderKind
from citeaudit.ingest.shape import Shape, shape_of, shape_of_file

if TYPE_CHECKING:
    from citeaudit.ingest.assemble import Attachment
    from citeaudit.store import ImportReport, Store
    from citeaudit.store.chunk_rows import ChunkRows

__all__ = [
    "READERS",
    "Attachment",
    "PlannedImport",
    "PreparedImport",
    "Reader",
    "detect_reader",
    "ingest_file",
    "ingest_files",
    "needs_attachment",
    "plan_imports",
    "read_file",
    "read_files",
    "store_prepared",
]

# Every reader by format name, in detection order, with the module attribute that holds it. Engine shapes come
# first: the generic formats would also accept some of their payloads.
_HOMES = (
    ("audit-json", "audit_json", "READER"),
    ("expertqa", "expertqa", "READER"),
    ("openai-responses", "openai", "RESPONSES_READER"),
    ("openai-chat", "openai", "CHAT_READER"),
    ("perplexity", "perplexity", "READER"),
    ("gemini", "gemini", "READER"),
    ("gemini-interactions", "gemini_interactions", "READER"),
    ("anthropic", "anthropic", "READER"),
    ("serpapi-ai-overview", "serpapi", "READER"),
    ("jsonl", "jsonl", "READER"),
    ("markdown", "markdown", "READER"),
)


class _Registry(Mapping[str, Reader]):
    """The readers by format name, each module imported when its reader is first asked for: a command that
    reads no file (``--help``, ``review serve``) loads none, and an audit file recognised by the first reader
    loads only that one."""

    def __init__(self) -> None:
        self._homes = {name: (module, attribute) for name, module, attribute in _HOMES}
        self._loaded: dict[str, Reader] = {}

    def __getitem__(self, name: str) -> Reader:
        reader = self._loaded.get(name)
        if reader is None:
            module, attribute = self._homes[name]
            reader = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
            assert reader.name == name, f"{module}.{attribute} is {reader.name!r}, registered as {name!r}"
            self._loaded[name] = reader
        return reader

    def __iter__(self) -> Iterator[str]:
        return iter(self._homes)

    def __len__(self) -> int:
        return len(self._homes)


READERS: Mapping[str, Reader] = _Registry()
"""Every reader by format name, in detection order."""


def detect_reader(data: bytes | Shape, source: str, fmt: str | Reader | None = None) -> Reader:
    """The reader named ``fmt`` (or given as ``fmt``), or the one that recognises the content: decided from the
    structure of its first JSON value (see :mod:`citeaudit.ingest.shape`), the first bytes for text formats.

    A named format that does not recognise the content (``data`` given) while another reader does is refused,
    naming the format the content looks like: read with the wrong reader, an answer would be lost or misread."""
    known = ", ".join(sorted(READERS))
    if isinstance(fmt, Reader):
        return fmt
    if fmt is not None:
        try:
            named = READERS[fmt]
        except KeyError:
            raise UnknownFormat(source, "--format", f"no reader for {fmt!r}; known formats: {known}") from None
        if isinstance(data, Shape) or data:
            _check_named(named, shape_of(data), source)
        return named
    shape = shape_of(data)
    for reader in READERS.values():
        if reader.can_read(shape):
            return reader
    declared = sorted(shape.values("format")) if not shape.listed else []
    if declared:
        raise UnknownFormat(source, "format", f"no reader for format {declared[0]!r}; known: {known}")
    raise UnknownFormat(source, "", f"no reader recognises this content; known formats: {known} (or pass --format)")


def _check_named(named: Reader, shape: Shape, source: str) -> None:
    if named.can_read(shape):
        return
    other = next((reader for reader in READERS.values() if reader is not named and reader.can_read(shape)), None)
    if other is not None:
        raise UnknownFormat(
            source,
            "--format",
            f"this is not {named.name} content: it looks like {other.name} (pass --format {other.name}, or leave "
            "--format out to have the format recognised)",
        )


@dataclass(frozen=True, slots=True)
class PreparedImport:
    """A file read and checked, ready to be written in one transaction."""

    source: str
    """File name."""
    data: bytes
    """The raw payload, stored verbatim."""
    reader: Reader
    """The reader used."""
    audit: Audit
    """What it contains, canonical."""
    partial: int = 0
    """Answers the reader only partly understood (see :attr:`~citeaudit.ingest.base.ParsedAnswer.notes`)."""
    placed: int = 0
    """Citations without a position that ``[n]`` markers placed (see
    :attr:`~citeaudit.ingest.base.ParsedAnswer.placed_by_markers`)."""


def _checked_file(path: str | Path) -> None:
    """Refuse, before reading a byte, what is not a file to import: a folder, a device (``/dev/zero`` reads
    forever), a socket, or a file larger than a payload may be. A named pipe is read as it is written."""
    try:
        found = os.stat(path)
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read: {exc.strerror}") from None
    if stat.S_ISDIR(found.st_mode):
        raise InputError(
            str(path), "", "a folder, not a file (a folder of saved responses takes --manifest or --pattern)"
        )
    if not (stat.S_ISREG(found.st_mode) or stat.S_ISFIFO(found.st_mode)):
        raise InputError(str(path), "", "not a regular file (a device or a socket): nothing to import")
    if found.st_size > MAX_INPUT_BYTES:
        raise InputError(
            str(path), "", f"{found.st_size} bytes, more than the {MAX_INPUT_BYTES} a payload may have: split the file"
        )


def _read_bytes(path: str | Path) -> bytes:
    _checked_file(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)  # a pipe has no size to check first
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read: {exc.strerror}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(str(path), "", f"more than the {MAX_INPUT_BYTES} bytes a payload may have: split the file")
    return data


def read_file(
    path: str | Path, fmt: str | Reader | None = None, attachment: Attachment | None = None
) -> PreparedImport:
    """Parse and check a file; nothing is written.

    Answer formats need an ``attachment`` (the protocol, and optionally run, platform and question).
    """
    source = str(path)
    data = _read_bytes(path)
    # the format is recognised from the bytes just read: the file is opened once (a named pipe can be read once)
    reader = detect_reader(data if isinstance(fmt, str | None) else b"", source, fmt)
    return _prepare(source, data, reader, attachment)


def _prepare(source: str, data: bytes, reader: Reader, attachment: Attachment | None) -> PreparedImport:
    """The payload read whole into one audit (the collector paused while it is built)."""
    partial = _Partial()
    with collector_paused():
        (audit,) = _audits(source, data, reader, attachment, size=None, partial=partial)
    return PreparedImport(source, data, reader, audit, partial.answers, partial.placed)


@dataclass(slots=True)
class _Partial:
    """Counts the answers a reader only partly understood, and the citations markers placed, as they stream past."""

    answers: int = 0
    placed: int = 0

    def count(self, parsed: Iterable[ParsedAnswer]) -> Iterator[ParsedAnswer]:
        for answer in parsed:
            if answer.notes:
                self.answers += 1
            self.placed += answer.placed_by_markers
            yield answer


def _audits(
    source: str,
    data: bytes,
    reader: Reader,
    attachment: Attachment | None,
    *,
    size: int | None = CHUNK,
    partial: _Partial | None = None,
) -> Iterator[Audit]:
    """What the file holds, as audits of at most ``size`` answers each (a whole audit for document readers)."""
    if reader.read_audit is not None:
        yield reader.read_audit(data, source)
        return
    from citeaudit.ingest.assemble import assemble_chunks

    yield from assemble_chunks(*_answers(source, data, reader, attachment, partial), size=size)


def _import_chunks(
    source: str,
    data: bytes,
    reader: Reader,
    attachment: Attachment | None,
    *,
    size: int,
    partial: _Partial,
    sha256: str | None = None,
) -> Iterator[Audit | ChunkRows]:
    """What an import writes: :func:`_audits`, an engine payload's chunks as the rows they write (made without
    the model objects in between: see :func:`~citeaudit.ingest.assemble.assemble_rows`)."""
    if reader.read_audit is not None:
        yield reader.read_audit(data, source)
        return
    from citeaudit.ingest.assemble import assemble_rows

    yield from assemble_rows(*_answers(source, data, reader, attachment, partial, sha256), size=size)


def _answers(
    source: str,
    data: bytes,
    reader: Reader,
    attachment: Attachment | None,
    partial: _Partial | None,
    sha256: str | None = None,
) -> tuple[Iterable[ParsedAnswer], Attachment, str, str, str | None]:
    """An engine payload's answers as they are read, and what assembling them needs besides."""
    assert reader.read_answers is not None
    if attachment is None:
        raise InputError(
            source,
            "",
            f"{reader.name} answers need a protocol to attach to: pass --questions PROTOCOL.yaml "
            "or import a protocol into the database first",
        )
    parsed: Iterable[ParsedAnswer] = reader.read_answers(data, source)
    if partial is not None:
        parsed = partial.count(parsed)
    sha = hashlib.sha256(data).hexdigest() if sha256 is None else sha256
    default_platform = None if reader.generic else reader.name.split("-")[0]
    return parsed, attachment, source, sha, default_platform


def read_files(
    paths: Sequence[str | Path] | Sequence[PlannedImport],
    fmt: str | Reader | None = None,
    attachment: Attachment | None = None,
) -> list[PreparedImport]:
    """Read and check several files (or the imports :func:`plan_imports` planned); nothing is written. Files
    that belong together form one import (see :func:`plan_imports`)."""
    return [_prepare(planned.name, _payload(planned), planned.reader, attachment) for planned in _planned(paths, fmt)]


@dataclass(frozen=True, slots=True)
class PlannedImport:
    """One import that files make: their format recognised once, from their content."""

    name: str
    """What the import is called (the file name, or the names of the files joined with ``+``)."""
    reader: Reader
    """The reader that reads it."""
    files: tuple[str, ...]
    """The files whose bytes it stores, in order."""

    @property
    def needs_attachment(self) -> bool:
        """Whether it holds engine answers, which need a protocol to attach to."""
        return self.reader.kind is ReaderKind.ANSWERS


def plan_imports(paths: Sequence[str | Path], fmt: str | Reader | None = None) -> list[PlannedImport]:
    """The imports the files make, each file's format recognised once, from the structure of its first JSON
    value (read as a stream, in bounded memory). One import a file, except:

    - ExpertQA files given together form one dataset, first, named after all of them (its payload is their
      lines in the given order);
    - an Anthropic response that stopped with ``pause_turn``, given right before the next Anthropic response
      file, forms one import with it (its payload is the two responses as a JSON list, in the given order; two
      saved event streams one after the other), since a paused turn and its continuation are one answer.
    """
    plan: list[PlannedImport] = []
    expertqa_files: list[str] = []
    paused: list[str] = []
    for path in paths:
        name = str(path)
        _checked_file(path)
        # a named format needs no recognition, but is checked against what the content looks like
        shape = _read_shape(path) if not isinstance(fmt, Reader) else None
        reader = detect_reader(shape if shape is not None else b"", name, fmt)
        if reader is READERS["expertqa"]:
            expertqa_files.append(name)
            continue
        if paused and reader is not READERS["anthropic"]:
            plan.append(_joined(paused))
            paused = []
        if reader is READERS["anthropic"]:
            shape = shape if shape is not None else _read_shape(path)
            single = shape.json and not shape.listed and (not shape.more or shape.stream)
            if paused and (not single or shape.stream != _read_shape(paused[0]).stream):
                plan.append(_joined(paused))
                paused = []
            pauses = _stream_pauses(path) if shape.stream else shape.value_is("stop_reason", "pause_turn")
            if single and (paused or pauses):
                paused.append(name)
                if not pauses:
                    plan.append(_joined(paused))
                    paused = []
                continue
        plan.append(PlannedImport(name, reader, (name,)))
    if paused:
        plan.append(_joined(paused))
    if expertqa_files:
        plan.insert(0, PlannedImport(" + ".join(expertqa_files), READERS["expertqa"], tuple(expertqa_files)))
    return plan


def _stream_pauses(path: str | Path) -> bool:
    """Whether a saved Anthropic event stream ends its (last) message with ``stop_reason: pause_turn``."""
    from citeaudit.ingest.events import Events

    stop = None
    for event in Events(_read_bytes(path), str(path)):
        value = event.value
        if isinstance(value, dict) and value.get("type") == "message_delta" and isinstance(value.get("delta"), dict):
            stop = value["delta"].get("stop_reason", stop)
    return stop == "pause_turn"


def _joined(files: Sequence[str]) -> PlannedImport:
    return PlannedImport(" + ".join(files), READERS["anthropic"], tuple(files))


def _planned(
    paths: Sequence[str | Path] | Sequence[PlannedImport], fmt: str | Reader | None
) -> Sequence[PlannedImport]:
    if all(isinstance(item, PlannedImport) for item in paths) and paths:
        return [item for item in paths if isinstance(item, PlannedImport)]
    return plan_imports([item for item in paths if not isinstance(item, PlannedImport)], fmt)


def _payload(planned: PlannedImport) -> bytes:
    """The bytes one import stores: its file's, the ExpertQA files' lines in order, or a paused Anthropic turn
    and its continuation as a JSON list."""
    if planned.reader is READERS["expertqa"]:
        from citeaudit.ingest.expertqa import combine

        return combine([_read_bytes(part) for part in planned.files])
    if len(planned.files) > 1:
        parts = [_read_bytes(part) for part in planned.files]
        if _read_shape(planned.files[0]).stream:  # saved event streams, one after the other
            return b"\n\n".join(part.rstrip(b"\r\n") for part in parts) + b"\n\n"
        return b"[\n" + b",\n".join(part.strip() for part in parts) + b"\n]\n"
    (file,) = planned.files
    return _read_bytes(file)


def ingest_file(
    store: Store, path: str | Path, fmt: str | None = None, attachment: Attachment | None = None
) -> ImportReport:
    """Read, check and store one file in one transaction, a chunk at a time; the same bytes twice is a no-op."""
    ((_, _, report),) = ingest_files(store, [path], fmt, attachment)
    return report


def ingest_files(
    store: Store,
    paths: Sequence[str | Path] | Sequence[PlannedImport],
    fmt: str | Reader | None = None,
    attachment: Attachment | None = None,
    *,
    progress: Callable[[str, int], None] | None = None,
    chunk: int = CHUNK,
    attachments: Mapping[str, Attachment] | None = None,
    worker: bool | None = None,
    replace: bool = False,
    actor: str = "",
) -> list[tuple[str, Reader, ImportReport]]:
    """Import files in one transaction, each as an import of its own: ``(file, reader, report)`` per file.

    Engine payloads are read, checked and written a chunk of answers at a time, so memory stays bounded
    whatever the file's size; a problem in any file, found at any point, leaves the database as it was. Every
    file's format is recognised once, before anything is read in full; ``paths`` may be the plan
    :func:`plan_imports` made (so the files are not read twice). Files that belong together form one import (as
    in :func:`plan_imports`). ``progress(file, n)`` is told each time ``n`` more answer records are stored;
    ``chunk`` is how many answer records are written at a time. ``attachments`` gives some imports (by name)
    an attachment of their own (a collection's files each answer their own question from their own engine).

    ``worker``: whether engine payloads are read, checked and assembled in a second process while this one
    writes (see :mod:`citeaudit.ingest.worker`), then at most :data:`~citeaudit.ingest.worker.WORKER_CHUNK`
    answer records at a time; ``None`` decides for each payload, by its size and whether a second CPU is idle
    (:func:`~citeaudit.ingest.worker.reads_in_worker`). What is written, what ``progress`` is told in all, and
    the error a bad payload gives are the same either way.

    A file imported before (the same bytes) with the same question, platform and run (those the attachment
    names) is a no-op; with others it is refused, or with ``replace`` its answers move to them (see
    :meth:`~citeaudit.store.sqlite.Store.import_chunks`; ``actor`` is recorded).
    """
    plan = _planned(paths, fmt)
    results: list[tuple[str, Reader, ImportReport]] = []
    name = ""
    try:
        with memory_kept(), store.import_transaction(), collector_paused():
            for name, reader, files in ((p.name, p.reader, p.files) for p in plan):
                data = _payload(PlannedImport(name, reader, files))
                told = None if progress is None else functools.partial(progress, name)
                attached = (attachments or {}).get(name, attachment)
                with _chunks(name, data, reader, attached, chunk, worker) as (chunks, partial, in_worker):
                    report = store.import_chunks(
                        chunks,
                        data,
                        origin=name,
                        fmt=reader.name,
                        media_type=_media_type(reader, data),
                        progress=told,
                        metadata=_metadata(reader, attached),
                        replace=replace,
                        actor=actor,
                        overlapped=in_worker,
                    )
                    if (
                        reader.name != "audit-json"
                        and not report.already_imported
                        and not (report.answers or report.failures)
                    ):
                        # An empty file (or an empty list) would import as 0 answers without a word.
                        raise InvalidValue(name, "", f"holds no {reader.name} answer: nothing to import")
                    partly, placed = partial()
                    if (partly or placed) and not report.already_imported:
                        report = dataclasses.replace(report, partial=partly, placed_by_markers=placed)
                        if partly:
                            from citeaudit.store.answers import record_partly_understood

                            record_partly_understood(store, report.sha256, report.partial)
                results.append((name, reader, report))
    except UnicodeEncodeError as exc:
        raise _unstorable(name, exc) from None
    return results


def _metadata(reader: Reader, attachment: Attachment | None) -> dict[str, str]:
    """What the command says of an engine payload's answers that its bytes do not (a whole audit says it all)."""
    if reader.read_audit is not None or attachment is None:
        return {}
    given = {"question": attachment.question_id, "platform": attachment.platform, "run": attachment.run_id}
    return {field: value for field, value in given.items() if value is not None}


@contextmanager
def _chunks(
    source: str, data: bytes, reader: Reader, attachment: Attachment | None, chunk: int, worker: bool | None
) -> Iterator[tuple[Iterable[Audit | ChunkRows], Callable[[], tuple[int, int]], bool]]:
    """The chunks one import writes, how many answers the reader only partly understood and how many citations
    markers placed (known once every chunk came), and whether a worker process reads them: read here, or by a
    worker process (see :func:`ingest_files`), stopped when the block is left."""
    from citeaudit.ingest.worker import WORKER_CHUNK, ReadAhead, reads_in_worker

    registered = reader.name in READERS and READERS[reader.name] is reader  # a worker finds it by name
    if reader.read_answers is None or attachment is None or not registered or not reads_in_worker(len(data), worker):
        counted = _Partial()
        chunks = _import_chunks(source, data, reader, attachment, size=chunk, partial=counted)
        yield chunks, lambda: (counted.answers, counted.placed), False
        return
    with ReadAhead(source, data, reader, attachment, min(chunk, WORKER_CHUNK)) as ahead:
        yield ahead, lambda: (ahead.partial, ahead.placed), True


def _media_type(reader: Reader, data: bytes) -> str:
    """What a payload is archived as: a saved event stream as the ``text/event-stream`` it is."""
    from citeaudit.ingest.events import sse_like

    json_reader = reader.kind is ReaderKind.ANSWERS and reader.media_type == "application/json"  # not Markdown
    return "text/event-stream" if json_reader and sse_like(data[:4096]) else reader.media_type


def _unstorable(source: str, error: UnicodeEncodeError) -> InvalidValue:
    """The last guard before the store: a string the readers let through (a command-line value, say) that holds
    a lone surrogate, which no UTF-8 text can; the transaction it broke has been rolled back."""
    text = error.object if isinstance(error.object, str) else ""
    return InvalidValue(
        source,
        "",
        f"lone surrogate {text[error.start : error.start + 1]!r} in {shown(text)}: not a character UTF-8 can store",
    )


def _read_shape(path: str | Path) -> Shape:
    try:
        return shape_of_file(path)
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read: {exc.strerror}") from None


def store_prepared(store: Store, prepared: PreparedImport) -> ImportReport:
    """Write a prepared import in one transaction."""
    try:
        with collector_paused():
            report = store.import_audit(
                prepared.audit,
                prepared.data,
                origin=prepared.source,
                fmt=prepared.reader.name,
                media_type=_media_type(prepared.reader, prepared.data),
            )
        if (prepared.partial or prepared.placed) and not report.already_imported:
            report = dataclasses.replace(report, partial=prepared.partial, placed_by_markers=prepared.placed)
            if prepared.partial:
                from citeaudit.store.answers import record_partly_understood

                record_partly_understood(store, report.sha256, report.partial)
        return report
    except UnicodeEncodeError as exc:
        raise _unstorable(prepared.source, exc) from None


def needs_attachment(path: str | Path, fmt: str | Reader | None = None) -> bool:
    """Whether the file's format (recognised from its content) is an answer format, so it needs a protocol to
    attach to. To import files, plan them once with :func:`plan_imports` and ask the plan instead."""
    if fmt is not None:
        return detect_reader(b"", str(path), fmt).kind is ReaderKind.ANSWERS
    return detect_reader(_read_shape(path), str(path)).kind is ReaderKind.ANSWERS


def __getattr__(name: str) -> object:
    # Attachment lives with the assembly code, which needs the interchange reader; loaded when first asked for.
    if name == "Attachment":
        from citeaudit.ingest.assemble import Attachment

        return Attachment
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
